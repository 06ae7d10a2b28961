"""A job whose agent is killed while its training process runs on (real processes, the local
launcher, a SQLite store, a local checkpoint store): `status` says the agent is gone and
that checkpoints are not published; the next reconcile publishes the checkpoint the job
wrote after the kill, has the job checkpoint and stop, and relaunches it from there; the
job finishes with the bytes of an uninterrupted run, never two instances at once."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path

import numpy as np

from costsched.service import jobs as service
from launchers.checkpoints import open_store
from launchers.procfs import group_members
from tests.costsched.service.test_jobs import (
    PACED,
    TRAIN,
    TRAIN_ARGS,
    LiveCounter,
    uninterrupted,
    wait_for,
    world,  # noqa: F401 - the fixture
    write_spec,
)
from tests.real_jobs import SETTLE


def step_in(path: Path) -> int:
    try:
        with np.load(path / "checkpoint.npz" if path.is_dir() else path) as saved:
            return int(saved["step"])
    except (OSError, ValueError, KeyError):
        return -1


def test_a_killed_agent_is_said_and_its_job_recovered_without_losing_work(world) -> None:  # noqa: F811
    store, launcher, tmp = world
    expected = uninterrupted(tmp)
    # train.py at its pace while its agent is killed; the instance that resumes it runs the
    # rest of its steps at once (tests/costsched/migration/paced.py: the same weights)
    pace = tmp / "pace"
    run = f"{sys.executable} {PACED} {pace} {TRAIN} {TRAIN_ARGS}"
    [job] = service.launch(store, write_spec(tmp, run=run), launcher=launcher,
                           wait_seconds=20, checkpoint_root=str(tmp / "checkpoints"))
    checkpoints = open_store(store.jobs.get(job.id).checkpoint_location)
    wait_for(checkpoints.newest_verified)
    [instance] = launcher.instances(job.id)
    folder = tmp / "instances" / instance.id
    agent = json.loads((folder / "instance.json").read_text())["pid"]

    os.kill(agent, signal.SIGKILL)  # the agent alone: its job runs on
    wait_for(lambda: launcher.status(instance.id).agent, seconds=SETTLE)
    assert set(group_members(agent)), "the training process should outlive its agent"
    published = step_in(checkpoints.fetch(checkpoints.newest_verified(), tmp / "before"))

    # status, without acting: the job runs, and its agent is gone
    [shown] = service.status(store, launcher, job.id, reconcile_first=False)
    assert shown.instance_state == "running"
    assert shown.checkpoint_error == f"the agent (pid {agent}) is gone while the job runs on"

    # the job checkpoints on: a checkpoint written after the kill, nowhere in the store yet
    local = folder / "checkpoints" / "checkpoint.npz"
    wait_for(lambda: step_in(local) > published + 50, seconds=60)
    after_kill = step_in(local)
    assert step_in(checkpoints.fetch(checkpoints.newest_verified(), tmp / "still")) == published

    counter = LiveCounter(launcher, job.id)
    counter.start()
    pace.write_text(instance.id)
    lines = service.reconcile(store, launcher)
    assert any(f"job {job.id}:" in line and "recovery" in line for line in lines), lines
    # what the job wrote after the kill reached the store before anything else ran
    steps = [step_in(checkpoints.fetch(c, tmp / f"v{c.version}")) for c in checkpoints.list()]
    assert max(steps) >= after_kill
    assert not group_members(agent)  # the old job is gone
    events = store.jobs.events(job.id)
    told = events[events["kind"] == "agent"]["detail"].tolist()
    assert told and f"the agent (pid {agent}) is gone" in told[0]

    def finished() -> bool:
        service.reconcile(store, launcher)
        return store.jobs.get(job.id).final

    wait_for(finished, seconds=120, poll=0.3)
    counter.stopped = True
    assert store.jobs.get(job.id).state == "succeeded"
    assert counter.most <= 1  # never two instances of the job at once
    _, second = sorted(store.jobs.placements(job.id)["instance"])
    log = (tmp / "instances" / second / "job.log").read_text()
    [resumed] = [line for line in log.splitlines() if line.startswith("resumed at step ")]
    assert int(resumed.split()[-1]) >= after_kill  # nothing done after the kill was lost
    final = checkpoints.fetch(checkpoints.newest_verified(), tmp / "final")
    assert np.load(final / "checkpoint.npz")["w"].tobytes() == expected

"""launchers/agent_recovery.py with the local launcher and real processes: a hung agent
(stopped, its heartbeat old) is seen and recovered like a dead one; the agent's heartbeat
is written while it runs; leftovers already in the store are not published again."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import time
from pathlib import Path

import pytest

from launchers.agent_recovery import publish_leftovers
from launchers.checkpoints import open_store
from launchers.heartbeats import HEARTBEAT
from launchers.heartbeats import read_local as read_heartbeat
from launchers.local import LocalLauncher
from launchers.procfs import group_members, proc_stat
from tests.launchers.test_local import launcher, spec, wait_for  # noqa: F401 - fixture


def test_the_agent_beats_while_its_job_runs(launcher: LocalLauncher,  # noqa: F811
                                            tmp_path: Path) -> None:
    instance = launcher.launch(spec(tmp_path, "a0", command="sleep 30"))
    folder = tmp_path / "instances" / instance.id
    wait_for(lambda: read_heartbeat(folder))
    first = read_heartbeat(folder)["at"]
    wait_for(lambda: read_heartbeat(folder)["at"] > first)  # every poll interval (0.1 s)
    assert read_heartbeat(folder)["pid"] == json.loads((folder / "instance.json")
                                                       .read_text())["pid"]
    assert launcher.status(instance.id).agent == ""
    launcher.terminate(instance.id)


def test_a_hung_agent_is_said_then_ended_and_its_job_checkpointed(
        launcher: LocalLauncher, tmp_path: Path) -> None:  # noqa: F811
    instance = launcher.launch(spec(tmp_path, "a0"))
    folder = tmp_path / "instances" / instance.id
    store = open_store(str(tmp_path / "store"))
    wait_for(store.newest_verified)
    agent = json.loads((folder / "instance.json").read_text())["pid"]
    os.kill(agent, signal.SIGSTOP)  # hung: alive, and silent
    try:
        # Stopped once it no longer runs (T; D: waiting in the kernel, it stops on its way
        # out): the signal is delivered when it next runs, and a beat it was writing then
        # would otherwise land over the one below.
        wait_for(lambda: getattr(proc_stat(agent), "state", "") in ("T", "t", "D"))
        # Its last heartbeat, as if long ago (a stopped agent does not write another).
        (folder / HEARTBEAT).write_text(json.dumps({"pid": agent, "at": time.time() - 3600}))
        seen = launcher.status(instance.id)
        assert seen.state == "running"
        assert "has not reported for" in seen.agent and "hung" in seen.agent
        assert seen.checkpoint_error == seen.agent
        published = store.newest_verified().version
        assert launcher.recover_agent(instance.id)
    finally:
        with contextlib.suppress(ProcessLookupError):  # gone by now, unless a step failed
            os.kill(agent, signal.SIGCONT)
    after = launcher.status(instance.id)
    assert after.state == "stopped" and "the agent was gone" in after.detail
    assert not group_members(agent)
    assert store.newest_verified().version > published  # the job's SIGTERM checkpoint
    assert (folder / "agent-lost").exists()
    assert "SIGTERM: checkpointed" in launcher.logs(instance.id)


def test_leftovers_the_store_holds_already_are_not_published_again(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "store"))
    folder = tmp_path / "checkpoints"
    folder.mkdir()
    (folder / "a.bin").write_bytes(b"one")
    store.publish(folder / "a.bin")
    (folder / "b.bin").write_bytes(b"two")
    (folder / "c.bin.tmp123").write_bytes(b"half written")
    assert publish_leftovers(store, folder) == 2  # b.bin uploaded, a.bin named
    assert [[(p.name, p.version) for p in c.parts] for c in store.list()] == [
        [("a.bin", 1)], [("a.bin", 1), ("b.bin", 2)]]
    assert publish_leftovers(store, folder) is None
    (folder / "a.bin").write_bytes(b"one, later")
    assert publish_leftovers(store, folder) == 3


def test_a_dead_agents_container_is_stopped_before_its_job_is_relaunched(
        launcher: LocalLauncher, tmp_path: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A job in a Docker image whose agent died with its docker client (their process
    group killed): the container, in the runtime's care, runs on, and the instance reads
    as killed. Ending the instance, as the recovery does before it relaunches the job,
    stops the container as a stop ends a job (SIGTERM: the job checkpoints), so the
    relaunched job never runs beside it."""
    import dataclasses

    from tests.launchers import fake_docker
    from tests.launchers.test_local import TRAIN

    docker = tmp_path / "docker.log"
    fake_docker.install(tmp_path / "bin", docker)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    job = spec(tmp_path, "a0", command=f"python {TRAIN} --steps 1000000 --step-seconds 0.005 "
               "--checkpoint-every 0.1")
    instance = launcher.launch(dataclasses.replace(
        job, task={"image_id": "docker:python:3.11-slim"}))
    folder = tmp_path / "instances" / instance.id
    wait_for(open_store(str(tmp_path / "store")).newest_verified, timeout=60)
    agent = json.loads((folder / "instance.json").read_text())["pid"]
    [running] = docker.with_suffix(".containers").glob("*-run.pid")
    container = int(running.read_text())
    os.killpg(agent, signal.SIGKILL)  # the agent and its docker client
    wait_for(lambda: not group_members(agent))
    assert group_members(container)  # runs on
    assert launcher.status(instance.id).state == "preempted"

    launcher.terminate(instance.id)
    assert not group_members(container)
    [stop] = [c for c in fake_docker.calls(docker) if c["cmd"] == "stop"]
    assert stop["running"] and stop["graceful"]  # it stopped on its SIGTERM
    assert "SIGTERM: checkpointed at step" in (folder / "job.log").read_text()
    key = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:10]
    assert not Path(f"/dev/shm/costsched-{key}").exists()  # its envs, secrets included
    assert not (folder / f"costsched-{key}").exists()

"""A stop never turns a job that has ended into a stopped one, and `start` never runs a
finished job again: a stop in the seconds after the job's instance exited 0 (before the
supervisor's next pass) closes it as succeeded, with its progress and final checkpoint;
a start of a job whose last instance exited 0 at its last step is refused. A job lost and
then stopped before any pass stands at its newest checkpoint's step. Real local-launcher
jobs, no pass run in between."""

from __future__ import annotations

import sys
from datetime import datetime, timezone

import pytest

from costsched.model import InvalidInput
from costsched.service import jobs as service
from launchers.checkpoints import open_store
from tests.costsched.service.job_scripts import PREAMBLE
from tests.costsched.service.test_jobs import STEPS, wait_for, world, write_spec  # noqa: F401

# Checkpoints at step HALF and reports it; once `go` exists, reports step 303 and, given
# `end`, checkpoints at step END too and exits 0; else trains on.
JOB = PREAMBLE + """\
(saved / "step.txt").write_text("200")
report(200)
while not Path(sys.argv[1]).exists():
    time.sleep(0.05)
report(303)
if sys.argv[2] == "end":
    (saved / "step.txt").write_text(sys.argv[3])
    report(int(sys.argv[3]))
    time.sleep(1.0)  # its agent publishes the checkpoint
    sys.exit(0)
while True:
    time.sleep(0.1)
"""


def _launched(world, end: bool):  # noqa: ANN001, ANN202, F811
    store, launcher, tmp = world
    script, go = tmp / "job.py", tmp / "go"
    script.write_text(JOB)
    run = f"{sys.executable} {script} {go} {'end' if end else 'on'} {STEPS}"
    [job] = service.launch(store, write_spec(tmp, run=run), launcher=launcher,
                           wait_seconds=20, checkpoint_root=str(tmp / "checkpoints"))
    instance = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    wait_for(lambda: launcher.status(instance).checkpoint_step == 200)
    return store, launcher, job.id, instance, go


def _finished(world) -> tuple:  # noqa: ANN001, F811
    """A job whose instance has exited 0 at its last step, its end not yet seen by a
    pass (none runs)."""
    store, launcher, job, instance, go = _launched(world, end=True)
    go.touch()
    wait_for(lambda: launcher.status(instance).state == "succeeded")
    assert store.jobs.get(job).state == "running"  # no pass saw it end
    return store, launcher, job, instance


def test_a_stop_after_the_job_ended_closes_it_as_succeeded(world) -> None:  # noqa: F811
    store, launcher, job, _ = _finished(world)
    with pytest.raises(InvalidInput, match=r"^job \d+ \(train\) has succeeded: nothing to "
                                           r"stop$"):
        service.stop(store, launcher, job)
    record = store.jobs.get(job)
    assert record.state == "succeeded"
    [shown] = service.status(store, launcher, job, reconcile_first=False)
    assert shown.progress == 1.0 and shown.resumes == ""
    newest = open_store(record.checkpoint_location).newest_verified()
    assert newest is not None and newest.version >= 2  # the final checkpoint is kept
    with pytest.raises(InvalidInput, match="has succeeded: only a stopped or failed job"):
        service.start(store, launcher, job)
    assert len(store.jobs.placements(job)) == 1  # never run again


def test_start_refuses_a_job_whose_last_instance_exited_0_at_its_last_step(
        world) -> None:  # noqa: F811
    store, launcher, job, instance = _finished(world)
    # A stop recorded after the job's end (as one came, before `stop` looked first).
    now = datetime.now(timezone.utc)
    store.jobs.transition(job, "stopped", at=now, expect="running", detail="stopped")
    launcher.terminate(instance)
    store.jobs.end_placement(job, now)
    with pytest.raises(InvalidInput, match=(
            rf"^job {job} \(train\) ran to its end: its last instance \({instance}\) "
            rf"exited 0 at step {STEPS:,} of {STEPS:,}; nothing to start")):
        service.start(store, launcher, job)
    assert store.jobs.get(job).state == "stopped"
    assert len(store.jobs.placements(job)) == 1  # never run again


def test_a_job_lost_then_stopped_stands_at_its_newest_checkpoint(world) -> None:  # noqa: F811
    store, launcher, job, instance, go = _launched(world, end=False)
    go.touch()
    wait_for(lambda: launcher.status(instance).step == 303)
    launcher.preempt(instance)
    wait_for(lambda: launcher.status(instance).state == "preempted")
    record = service.stop(store, launcher, job)  # before any pass saw it lost
    assert record.state == "stopped"
    [shown] = service.status(store, launcher, job, reconcile_first=False)
    assert (shown.step, shown.reported_step) == (200, 303)
    assert shown.resumes.startswith("resumes at step 200, its newest checkpoint's")
    assert shown.steps_left == STEPS - 200
    assert not [i for i in launcher.instances(job) if i.live]  # nothing was recovered

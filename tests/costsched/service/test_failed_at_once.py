"""A job whose command fails at once on the local launcher: its name is free, and a start
of it works, as soon as its instance says it failed (never only at the next pass); and its
placement is billed until its agent wrote its end (the local instance's life), not until
the pass that closed it. Real jobs on the local launcher, no pass run between the failure
and what is asked."""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

from costsched.service import jobs as service
from costsched.service.jobs.watch import reconcile
from tests.real_jobs import instance_of, wait_for, world, write_spec  # noqa: F401

# Fails (exit 3) once the test lets it: its launch's own look sees it running.
FAILS = """\
import pathlib, sys, time
go = pathlib.Path(sys.argv[1])
while not go.exists():
    time.sleep(0.05)
sys.exit(3)
"""


def _launched_then_failed(world) -> tuple[int, str, Path]:  # noqa: ANN001, F811
    """The job launched (running), then failed: (its id, its instance, its file)."""
    store, launcher, tmp = world
    script, go = tmp / "fails.py", tmp / "go"
    script.write_text(FAILS)
    path = write_spec(tmp, run=f"{sys.executable} {script} {go}")
    [job] = service.launch(store, path, launcher=launcher, wait_seconds=0,
                           checkpoint_root=str(tmp / "checkpoints"))
    instance = instance_of(store, job.id)
    assert store.jobs.get(job.id).state == "running"
    go.touch()
    wait_for(lambda: launcher.status(instance).state == "failed", seconds=120)
    assert store.jobs.get(job.id).state == "running"  # no pass has closed it yet
    return job.id, instance, path


def test_a_name_is_free_once_its_instance_says_the_job_failed(world) -> None:  # noqa: ANN001, F811
    store, launcher, tmp = world
    job_id, instance, path = _launched_then_failed(world)
    seen = launcher.status(instance)  # (before the launch that closes it ends it)
    [again] = service.launch(store, path, launcher=launcher, wait_seconds=0,
                             checkpoint_root=str(tmp / "checkpoints"))
    assert again.id != job_id
    ended = seen.ended_at
    assert ended is not None
    first = store.jobs.get(job_id)
    assert first.state == "failed"
    # Billed until its agent wrote its end, not until the launch that closed it.
    [placed] = store.jobs.placement_rows([job_id])
    assert placed.end_at == ended.replace(microsecond=0)  # (stored to the second)


def test_a_start_right_after_the_failure_is_not_refused(world) -> None:  # noqa: ANN001, F811
    store, launcher, _ = world
    job_id, _, _ = _launched_then_failed(world)
    started = service.start(store, launcher, job_id)
    assert started.id == job_id
    assert store.jobs.get(job_id).state in ("running", "failed")  # (it fails again)
    assert len(store.jobs.placement_rows([job_id])) == 2


def test_a_pass_long_after_the_end_bills_until_the_end(world) -> None:  # noqa: ANN001, F811
    store, launcher, _ = world
    job_id, instance, _ = _launched_then_failed(world)
    ended = launcher.status(instance).ended_at
    assert ended is not None
    reconcile(store, launcher, at=ended + timedelta(hours=1))
    assert store.jobs.get(job_id).state == "failed"
    [placed] = store.jobs.placement_rows([job_id])
    assert placed.end_at == ended.replace(microsecond=0)  # (stored to the second)

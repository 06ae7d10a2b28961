"""A job's measured speed over several short placements, at the level of the stored
progress rows: a job that trains TRUE_SPS steps per second, writes its step every 100
steps, is read every few seconds, and runs three placements of about 20 s (preempted, then
stopped by the user, then started again to its end) measures within about a tenth of
TRUE_SPS (its readings, a third of a second past whole seconds, are kept in whole seconds
rounded outward: a placement read over 5 s counts 6), never faster: every step it counts
was trained in the time it counts. A stop's
last step, reached after the stop was asked for (the instance is ended after the stop's
time), is no reading of the placement's training (its time is not known), as for an
instance found gone. On SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from costsched.measured import TOO_SHORT
from costsched.migration.launcher import Instance, Launcher
from costsched.report import build
from costsched.service import speeds as speed_service
from costsched.service.jobs.stopping import stop_job
from costsched.store import PriceStore

T0 = datetime(2026, 11, 29, 9, tzinfo=timezone.utc)
KEY = ("aws", "us-east-1", "us-east-1a", "g2-standard-4", "spot", "linux")
TRUE_SPS = 44.0  # 20 ms of sleep a step, and the rest of the loop
REPORT_EVERY, CHECKPOINT_EVERY = 100, 200
SETUP = 1.0  # seconds from a placement's start to its first step
PASS = 5.0  # seconds between two reads of the job's step


class StopLate(Launcher):
    """One running instance whose job reaches `step` by the time the stop ends it."""

    name = "fake"

    def __init__(self, instance_id: str, job_id: int, step: int) -> None:
        self.instance = Instance(instance_id, job_id, "a", KEY, "running", step=step)

    def can_launch(self, offering: object) -> bool:
        return False

    def launch(self, spec: object) -> Instance:
        raise AssertionError("no launch")

    def request_stop(self, instance_id: str) -> None:
        raise AssertionError("no stop request")

    def status(self, instance_id: str) -> Instance:
        return self.instance

    def terminate(self, instance_id: str) -> None:
        self.instance = Instance(self.instance.id, self.instance.job_id, "a", KEY,
                                 "terminated", step=self.instance.step)

    def instances(self, job_id: int | None = None) -> list[Instance]:
        return [self.instance]


def _job(store: PriceStore) -> int:
    spec = {"name": "slow", "throughputs": {"L4": 40.0}, "steps": 3000,
            "run": "python slow.py"}
    job = store.jobs.create("slow", {"spec": spec, "source": "slow.yaml"}, 3000, at=T0)
    store.jobs.transition(job, "running", at=T0)
    return job


def _run(store: PriceStore, job: int, start: float, resume: int, seconds: float,
         reason: str, trained: float | None = None) -> tuple[str, int]:
    """A placement `start` s after T0, its job resuming at step `resume`, read every PASS
    seconds for `seconds`: its instance and the step it reached when it ended, `trained`
    s after its start (`seconds` when None)."""
    instance = f"i-{reason}"
    store.jobs.place(job, KEY, gpu_model="L4", gpu_count=1, usd_per_hour=0.2,
                     at=T0 + timedelta(seconds=start), reason=reason, instance=instance)

    def done(t: float) -> int:  # its step `t` s after its start
        return resume + int(max(t - SETUP, 0.0) * TRUE_SPS)

    t = PASS * 0.7  # the first pass after its start
    while t < seconds:
        written = min(done(t) // REPORT_EVERY * REPORT_EVERY, 3000)  # its progress file
        if written > resume:  # read off an instance found finished: not extended
            store.jobs.record_step(job, written, at=T0 + timedelta(seconds=start + t),
                                   extend=done(t) < 3000)
        t += PASS
    ended = seconds if trained is None else trained
    return instance, resume + int((ended - SETUP) * TRUE_SPS)


def test_short_placements_measure_the_steps_they_trained_in_the_time_they_took(
        any_store: PriceStore) -> None:
    store = any_store
    job = _job(store)
    # Launched; preempted without notice after 9 s: its last step is lost, it resumes
    # from its last checkpoint.
    _, reached = _run(store, job, 0.0, 0, 9.0, "launch")
    store.jobs.end_placement(job, T0 + timedelta(seconds=9))
    resume = reached // CHECKPOINT_EVERY * CHECKPOINT_EVERY
    # Recovered there; stopped by the user 20 s on: the stop is asked for at 20 s, the
    # job gets its SIGTERM 6 s later (the stop waited for a move's step to end), and
    # checkpoints there.
    instance, reached = _run(store, job, 12.0, resume, 20.0, "recovery", 26.0)
    stop_job(store, StopLate(instance, job, reached), job, T0 + timedelta(seconds=32),
             wait_seconds=0)
    # Started again, from the step its stop checkpointed, to its end.
    store.jobs.transition(job, "running", at=T0 + timedelta(seconds=40))
    _run(store, job, 40.0, reached, 3000 / TRUE_SPS, "start")
    store.jobs.end_placement(job, T0 + timedelta(seconds=110))
    store.jobs.transition(job, "succeeded", at=T0 + timedelta(seconds=110))

    record = store.jobs.get(job)
    found = speed_service.checks([record], store.jobs.placement_rows([job]),
                                 readings=store.jobs.reading_rows([job]))
    measured = found[job].measured_sps
    assert measured == pytest.approx(TRUE_SPS, rel=0.12)
    assert measured <= TRUE_SPS * 1.01  # never steps without their time
    assert TOO_SHORT not in found[job].line()


def test_too_short_says_what_was_short(any_store: PriceStore) -> None:
    """Three placements of 20 s, each read once (the watcher looks every 30 s): each trained
    well over 10 s, but no two reads of its step were apart on any of them. The verdict
    says that, not that the job trained under 10 s or that setup may be most of it."""
    from costsched.measured import MIN_TRAINING_SECONDS, TOO_SHORT

    store = any_store
    job = _job(store)
    resume = 0
    for n, (start, reason) in enumerate(((0.0, "launch"), (30.0, "recovery"),
                                         (60.0, "start"))):
        store.jobs.place(job, KEY, gpu_model="L4", gpu_count=1, usd_per_hour=0.2,
                         at=T0 + timedelta(seconds=start), reason=reason,
                         instance=f"i-{n}")
        step = resume + 600
        store.jobs.record_step(job, step, at=T0 + timedelta(seconds=start + 15))
        store.jobs.end_placement(job, T0 + timedelta(seconds=start + 25))
        resume = step - 200
    store.jobs.transition(job, "succeeded", at=T0 + timedelta(seconds=85))
    [row] = build(store, now=T0 + timedelta(seconds=90)).speeds.to_dict("records")
    assert row["flag"] == f"job {job} (slow): {TOO_SHORT}"
    assert "trained under" not in TOO_SHORT and "most of it" not in TOO_SHORT
    assert "No placement of it had its step read twice" in TOO_SHORT
    assert f"{MIN_TRAINING_SECONDS:.0f} s" in TOO_SHORT

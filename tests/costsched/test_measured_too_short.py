"""A job that ended too soon to judge its speed: a job of steps reads "slower than
planned" (its plan's steps/s are in its steps); a job whose work is hours on a reference
GPU has no plan's speed in its steps, so its flag says what was measured in its hours: the
hours its placements ran, of its hours of work, and the step it reached. SQLite and
PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from costsched.measured import TOO_SHORT, too_short
from costsched.report import build
from costsched.store import PriceStore

T0 = datetime(2026, 11, 29, 9, tzinfo=timezone.utc)
KEY = ("aws", "us-east-1", "us-east-1a", "g2-standard-4", "spot", "linux")


def _ended_after_eight_seconds(store: PriceStore, spec: dict, total: float) -> dict:
    """The job ran 8 s (setup most of it) and reported step 2 once: 0.25 steps/s over all
    it ran, below its table's 1 on its reference GPU."""
    job = store.jobs.create(spec["name"], {"spec": spec, "source": "job.yaml"}, total, at=T0)
    store.jobs.transition(job, "running", at=T0)
    store.jobs.place(job, KEY, gpu_model="L4", gpu_count=1, usd_per_hour=0.2, at=T0,
                     reason="launch", instance="i-1")
    store.jobs.record_step(job, 2, at=T0 + timedelta(seconds=8))
    store.jobs.end_placement(job, T0 + timedelta(seconds=8))
    store.jobs.transition(job, "succeeded", at=T0 + timedelta(seconds=8))
    [row] = build(store, now=T0 + timedelta(seconds=9)).speeds.to_dict("records")
    assert row["job_id"] == job and not row["flagged"]
    return row


def test_an_hours_jobs_too_short_flag_says_what_it_ran_in_its_hours(
        any_store: PriceStore) -> None:
    spec = {"name": "fit", "hours": 2, "reference_gpu": "L4", "run": "true"}
    row = _ended_after_eight_seconds(any_store, spec, 7200)
    flag = row["flag"]
    assert flag == (
        f"job {row['job_id']} (fit): too short to judge. No placement of it had its step read "
        "twice 10 s apart, and it ran under 10 minutes in all, setup and restarts included. "
        "It ran 0.0022 h of its 2 h of work on 1xL4 and reached step 2, in steps of its own. "
        "Its work is given in hours, so no plan's steps/s stand beside them"), flag
    assert "slower" not in flag


def test_a_steps_jobs_too_short_flag_is_unchanged(any_store: PriceStore) -> None:
    spec = {"name": "slow", "throughputs": {"L4": 1.0}, "steps": 3000, "run": "true"}
    row = _ended_after_eight_seconds(any_store, spec, 3000)
    assert row["flag"] == f"job {row['job_id']} (slow): {TOO_SHORT}"
    assert TOO_SHORT == (
        "too short to judge. No placement of it had its step read twice 10 s apart, and it "
        "ran under 10 minutes in all, setup and restarts included. Over a run that short, "
        "setup weighs so much that its speed would read slower than planned whatever it was")


def test_each_sentence_has_at_most_one_colon() -> None:
    hours = {"spec": {"hours": 3, "reference_gpu": "CPU"}}
    for words in (TOO_SHORT, too_short(hours, 0.01, 40)):
        assert all(s.count(":") <= 1 for s in words.split(". ")), words


def test_the_words_of_cpu_and_assumed_hours() -> None:
    cpu = {"spec": {"hours": 3, "reference_gpu": "CPU"}}
    assert "0.01 h of its 3 h of work on a CPU instance and reached step 40" in too_short(
        cpu, 0.01, 40)
    assumed = {"spec": {"hours": 1, "reference_gpu": "V100", "task": {"work_assumed": True}}}
    said = too_short(assumed, 0.01, 40)
    assert "of its 1 h of work on 1xV100 (assumed)" in said and "is not given" in said
    steps = {"spec": {"steps": 10, "model": "resnet"}}
    assert too_short(steps, 0.01, 4) == TOO_SHORT

"""Estimate versus actual judges a running job as `status` judges its speed: not before it
trained MIN_TRAINING_SECONDS from its first reported step. A job 12 s old, mostly boot and
setup, is too early to tell, never '19.85x over'; once it trained long enough, it is
judged."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pytest

from costsched.measured import (
    JUDGED_AFTER,
    MEASURING,
    MIN_TRAINING_SECONDS,
    TOO_EARLY,
    not_judged_yet,
    stored_readings,
)
from costsched.report.estimates import estimate_table

T0 = datetime(2026, 12, 2, 7, 46, 28, tzinfo=timezone.utc)


def _row(readings: list[tuple], steps: float) -> dict:
    predictions = {6: dict(job_id=6, expected_hours=8000 / 66 / 3600, expected_usd=0.0225,
                           model="walk2", gpu_count=1, gpu_model="T4",
                           expected_preemptions=0.0)}
    jobs = {6: SimpleNamespace(id=6, name="walk2", state="running", steps_done=steps,
                               steps_total=8000.0)}
    life = SimpleNamespace(id=7, job_id=6, gpu_model="T4", gpu_count=1, start_at=T0,
                           end_at=T0 + timedelta(seconds=17))
    [row] = estimate_table(predictions, jobs, [(life, 0.00075)], [], {},  # type: ignore[arg-type]
                           readings)
    return row


def _at(seconds: float) -> float:
    return (T0 + timedelta(seconds=seconds)).timestamp()


def test_a_job_in_its_first_seconds_of_training_is_too_early_to_tell() -> None:
    # Boot and setup took 12 s; its first step was read then, its last 4 s later.
    row = _row([(7, 6, 1.0, _at(12), 153.0, _at(16))], 153.0)
    assert row["vs_estimate"] == TOO_EARLY
    assert "over" not in row["vs_estimate"] and "under" not in row["vs_estimate"]
    for ratio in ("training_hours_ratio", "usd_ratio"):
        assert row[ratio] != row[ratio], row  # NaN: no ratio
    assert row["training_hours"] != row["training_hours"]  # its setup is no training
    assert row["usd"] == pytest.approx(0.00075)  # what it was billed stands


def test_status_and_the_report_judge_by_the_same_rule() -> None:
    assert MEASURING.endswith(JUDGED_AFTER) and TOO_EARLY == "too early to tell"
    life = SimpleNamespace(id=7, job_id=6, gpu_model="T4", gpu_count=1, start_at=T0,
                           end_at=None)
    short = stored_readings([(7, 6, 1.0, _at(12), 153.0, _at(16))])
    enough = stored_readings([(7, 6, 1.0, _at(12), 400.0, _at(12 + MIN_TRAINING_SECONDS))])
    assert not_judged_yet([life], short, 153.0) and not_judged_yet([life], [], 0.0)
    assert not not_judged_yet([life], enough, 400.0)


def test_a_job_that_trained_long_enough_is_judged() -> None:
    row = _row([(7, 6, 1.0, _at(2), 700.0, _at(2 + MIN_TRAINING_SECONDS + 4))], 700.0)
    assert row["vs_estimate"] != TOO_EARLY
    assert row["training_hours_ratio"] == row["training_hours_ratio"]  # a ratio
    assert row["vs_estimate"] in {"under", "within", "over"} or "," in row["vs_estimate"]

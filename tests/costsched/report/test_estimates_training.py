"""Estimate versus actual compares training hours with the plan's: the time a job sat
stopped by its user, its setup and the watcher's lag after it exited are not counted."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pytest

from costsched.report.estimates import estimate_table

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)


def h(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def table(readings: list[tuple] | None) -> dict:
    predictions = {1: dict(job_id=1, expected_hours=1.0, expected_usd=1.0, model="linreg",
                           gpu_count=1, gpu_model="A100", expected_preemptions=0.0)}
    jobs = {1: SimpleNamespace(id=1, name="fit", state="succeeded", steps_done=2000.0,
                               steps_total=2000.0)}
    # Two instances: 0-0.6 h, then stopped by its user for an hour, 1.6-2.2 h.
    lives = [(SimpleNamespace(job_id=1, start_at=h(0), end_at=h(0.6)), 0.5),
             (SimpleNamespace(job_id=1, start_at=h(1.6), end_at=h(2.2)), 0.5)]
    [row] = estimate_table(predictions, jobs, lives, [], {}, readings)  # type: ignore[arg-type]
    return row


def ts(at: datetime) -> int:
    return int(at.timestamp())


def test_training_hours_leave_out_setup_stops_and_lag() -> None:
    # Setup 0.1 h on each instance, 0.05 h of lag after its last step on each.
    # (placement, job, first step, when, last step, when), as the store reads them.
    readings = [(1, 1, 0.0, ts(h(0.1)), 1000.0, ts(h(0.55))),
                (2, 1, 1000.0, ts(h(1.7)), 2000.0, ts(h(2.15)))]
    row = table(readings)
    assert row["training_hours"] == pytest.approx(0.9)
    assert row["expected_training_hours"] == pytest.approx(1.0)
    assert row["training_hours_ratio"] == pytest.approx(0.9) and row["vs_estimate"] == "within"


def test_without_readings_the_stopped_time_is_still_left_out() -> None:
    row = table(None)
    assert row["training_hours"] == pytest.approx(1.2)  # on instances, not the 2.2 h span


def test_the_expected_hours_are_of_the_work_the_expected_dollars_are_of() -> None:
    """Readings that saw half the steps (the first came late): the plan's hours for all
    the work done, which its price makes its expected dollars, against that work at the
    pace the readings measured; the hours for the half seen stood beside the dollars
    of the whole."""
    readings = [(1, 1, 500.0, ts(h(0.1)), 1500.0, ts(h(0.55)))]  # 1,000 steps in 0.45 h
    row = table(readings)
    price = 1.0  # $/h of the prediction in `table`: 1 h for $1
    assert row["expected_training_hours"] * price == pytest.approx(row["expected_usd"])
    assert row["expected_training_hours"] == pytest.approx(1.0)
    assert row["training_hours"] == pytest.approx(0.9)  # 2,000 steps at 1,000 per 0.45 h
    assert row["training_hours_ratio"] == pytest.approx(0.9)

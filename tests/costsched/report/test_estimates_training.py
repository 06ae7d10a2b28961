"""Estimate versus actual compares training hours with the plan's: the time a job sat
stopped by its user, its setup and the watcher's lag after it exited are not counted."""

from __future__ import annotations

import pandas as pd
import pytest

from costsched.report.estimates import estimate_table

T0 = pd.Timestamp("2026-03-01 00:00", tz="UTC")


def h(hours: float) -> pd.Timestamp:
    return T0 + pd.Timedelta(hours=hours)


def table(readings: pd.DataFrame | None) -> pd.Series:
    predictions = pd.DataFrame([dict(job_id=1, expected_hours=1.0, expected_usd=1.0,
                                     model="linreg", gpu_count=1, gpu_model="A100",
                                     expected_preemptions=0.0)])
    jobs = pd.DataFrame([dict(id=1, name="fit", state="succeeded", steps_done=2000.0,
                              steps_total=2000.0)])
    # Two instances: 0-0.6 h, then stopped by its user for an hour, 1.6-2.2 h.
    lives = pd.DataFrame([dict(job_id=1, start_at=h(0), end_at=h(0.6), usd=0.5),
                          dict(job_id=1, start_at=h(1.6), end_at=h(2.2), usd=0.5)])
    egress = pd.DataFrame(columns=["job_id", "at", "usd"])
    return estimate_table(predictions, jobs, lives, egress, pd.Series(dtype=int),
                          readings).iloc[0]


def test_training_hours_leave_out_setup_stops_and_lag() -> None:
    # Setup 0.1 h on each instance, 0.05 h of lag after its last step on each.
    readings = pd.DataFrame([
        dict(id=1, job_id=1, first_step=0.0, first_at=h(0.1), last_step=1000.0,
             last_at=h(0.55)),
        dict(id=2, job_id=1, first_step=1000.0, first_at=h(1.7), last_step=2000.0,
             last_at=h(2.15))])
    row = table(readings)
    assert row["training_hours"] == pytest.approx(0.9)
    assert row["expected_training_hours"] == pytest.approx(1.0)
    assert row["training_hours_ratio"] == pytest.approx(0.9) and row["vs_estimate"] == "within"


def test_without_readings_the_stopped_time_is_still_left_out() -> None:
    row = table(None)
    assert row["training_hours"] == pytest.approx(1.2)  # on instances, not the 2.2 h span

"""Estimate versus actual never reads more training hours than the job's instances ran, a
job whose work is hours on a reference GPU gets no share done from its own steps, and a
job on the local launcher is compared without its plan's first start (it boots none)."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pytest

from costsched.report.estimates import estimate_table

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)


def h(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def ts(hours: float) -> int:
    return int(h(hours).timestamp())


def row(spec: dict, state: str, steps_done: float, steps_total: float,
        readings: list[tuple], expected_usd: float = 1.0) -> dict:
    predictions = {1: dict(job_id=1, expected_hours=1.0, expected_usd=expected_usd,
                           model="m", gpu_count=1, gpu_model="V100",
                           expected_preemptions=0.0, usd_per_hour=1.0)}
    jobs = {1: SimpleNamespace(id=1, name="fit", state=state, steps_done=steps_done,
                               steps_total=steps_total, spec=spec)}
    lives = [(SimpleNamespace(id=1, job_id=1, gpu_model="A100", gpu_count=1, start_at=h(0),
                             end_at=h(0.04)), 0.04)]
    [found] = estimate_table(predictions, jobs, lives, [], {}, readings)  # type: ignore[arg-type]
    return found


HOURS = {"spec": {"hours": 1, "reference_gpu": "V100"}}


def test_hours_of_work_get_no_share_done_from_the_job_s_own_steps() -> None:
    # 240 steps of its own reported; readings saw 210 of them in 0.035 h.
    readings = [(1, 1, 30.0, ts(0.005), 240.0, ts(0.04))]
    found = row(HOURS, "running", 240.0, 3600.0, readings)
    assert math.isnan(found["done"]) and math.isnan(found["expected_training_hours"])
    assert found["training_hours"] == pytest.approx(0.04)  # 240 steps at 6,000 steps/h
    assert found["training_hours"] <= 0.04


def test_hours_of_work_once_succeeded_compare_on_measured_time() -> None:
    readings = [(1, 1, 0.0, ts(0.005), 240.0, ts(0.04))]
    found = row(HOURS, "succeeded", 240.0, 3600.0, readings)
    assert found["done"] == 1.0 and found["training_hours"] == pytest.approx(0.035)


# Two placements, each read a watch pass after it began and before it ended, at 20
# steps/s: steps 100-300 in 10 s on the first (it ran to step 313), 400-1,900 in 75 s on
# the second (resumed at 300, done at 2,000). The readings span 85 s; 2,000 steps at
# 20 steps/s took 100 s.
SPANS = [(1, 1, 100.0, ts(0) + 5, 300.0, ts(0) + 15),
         (2, 1, 400.0, ts(0) + 40, 1900.0, ts(0) + 115)]


def test_hours_of_work_train_for_their_steps_at_their_measured_pace() -> None:
    found = row(HOURS, "succeeded", 2000.0, 3600.0, SPANS)
    assert found["training_hours"] == pytest.approx(100 / 3600)  # not the 85 s read


def test_hours_and_steps_of_work_read_their_training_hours_by_one_rule() -> None:
    hours = row(HOURS, "succeeded", 2000.0, 3600.0, SPANS)["training_hours"]
    steps = row({"spec": {"steps": 2000}}, "succeeded", 2000.0, 2000.0, SPANS)
    assert hours == pytest.approx(steps["training_hours"])
    running = row(HOURS, "running", 1000.0, 3600.0, SPANS)  # at step 1,000: 50 s
    assert running["training_hours"] == pytest.approx(50 / 3600)


def test_training_hours_never_exceed_the_hours_the_instances_ran() -> None:
    # Its own steps: 1,000 done, readings saw 40 in 0.035 h: at that pace the work done
    # would take 0.9 h, on an instance that ran 0.04 h.
    readings = [(1, 1, 960.0, ts(0.005), 1000.0, ts(0.04))]
    found = row({"spec": {"steps": 4000}}, "running", 1000.0, 4000.0, readings)
    assert found["training_hours"] == pytest.approx(0.04)


def test_the_local_launcher_is_compared_without_the_cloud_start_it_never_paid() -> None:
    """Like for like: a plan's start is a cloud instance's boot and setup (assumed); the
    local launcher boots none, and what it spent getting the job going (its setup) is in
    its total as billed. Its expected dollars leave the plan's start out (the table's note
    says so), else every job there reads 'cost under' by the start alone."""
    readings = [(1, 1, 0.0, ts(0.005), 4000.0, ts(0.04))]
    # The plan: 1 h at $1/h and a first start of $0.25 (0.25 h of boot and setup).
    local = row({"spec": {"steps": 4000}, "launcher": "local"}, "succeeded", 4000.0,
                4000.0, readings, expected_usd=1.25)
    cloud = row({"spec": {"steps": 4000}, "launcher": "aws"}, "succeeded", 4000.0,
                4000.0, readings, expected_usd=1.25)
    assert local["expected_usd"] == pytest.approx(1.0)
    assert cloud["expected_usd"] == pytest.approx(1.25)
    # Half done on the local launcher: half its training, no start.
    half = row({"spec": {"steps": 4000}, "launcher": "local"}, "running", 2000.0,
               4000.0, readings, expected_usd=1.25)
    assert half["expected_usd"] == pytest.approx(0.5)


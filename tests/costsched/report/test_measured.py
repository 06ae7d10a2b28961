"""Savings compare like with like: each baseline is charged over the time it would have
taken for the work the job did, at the speed the job measured, never at a declared figure
the run contradicts; a declared figure far from the measured one is flagged."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest

from costsched.measured import speed_on, speeds
from costsched.report import build
from costsched.store import OBSERVATION_COLUMNS, PriceStore

T0 = datetime(2026, 1, 3, 12, 0, tzinfo=timezone.utc)
ZONE_A = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")
ZONE_B = ("aws", "us-east-1", "us-east-1b", "p3.2xlarge", "spot", "linux")
A100 = ("aws", "us-east-1", "us-east-1a", "p4d.24xlarge", "spot", "linux")


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def prices(store: PriceStore, rows: list[tuple[tuple, str, int, float]]) -> None:
    store.ingest(pd.DataFrame(
        [(*key, gpu, count, 8, 61.0, usd, pd.Timestamp(T0 - timedelta(days=1)), "test")
         for key, gpu, count, usd in rows], columns=OBSERVATION_COLUMNS))


def new_job(store: PriceStore, name: str, throughputs: dict, steps: float) -> int:
    spec = {"name": name, "throughputs": throughputs, "steps": steps,
            "checkpoint": {"size_gb": 0.1}, "constraints": {}}
    return store.jobs.create(name, {"spec": spec, "source": "test"}, steps, at=at(-60))


def place(store: PriceStore, job_id: int, key: tuple, gpu: str, seconds: float,
          reason: str, instance: str, count: int = 1) -> None:
    store.jobs.place(job_id, key, gpu_model=gpu, gpu_count=count, at=at(seconds),
                     usd_per_hour=1.0, reason=reason, instance=instance)


def test_the_demo_job_saves_the_price_difference_over_the_hours_it_ran(
        store: PriceStore) -> None:
    """`make demo`'s job as it was: declared 0.025 steps/s (a 40-hour run) but 4,000 steps
    done in 36 s, 10 s on zone a at $2.75/h, then moved to zone b at $0.61/h. The launch
    choice kept (zone a) would have taken the 36 s the job took: saved (2.75 - 0.61) x 26 s,
    not the $122.21 that 44 hours at the declared speed made."""
    prices(store, [(ZONE_A, "V100", 1, 2.75), (ZONE_B, "V100", 1, 0.61)])
    job = new_job(store, "demo-train", {"V100": 0.025}, 4000)
    place(store, job, ZONE_A, "V100", 0, "launch", "i-1")
    place(store, job, ZONE_B, "V100", 10, "migration", "i-2")
    store.jobs.record_step(job, 4000, at=at(36))
    store.jobs.end_placement(job, at(36))
    store.jobs.transition(job, "succeeded", at=at(36))

    report = build(store, now=at(600), factor=1.5)
    [row] = report.jobs.to_dict("records")
    assert row["usd"] == pytest.approx((2.75 * 10 + 0.61 * 26) / 3600)
    assert row["launch_choice_usd"] == pytest.approx(2.75 * 36 / 3600)
    assert row["saved_vs_launch_choice_usd"] == pytest.approx((2.75 - 0.61) * 26 / 3600)
    assert report.totals["saved_vs_launch_choice_usd"] < 0.02  # was $122.21
    [speed] = report.speeds.to_dict("records")
    assert speed["planned_sps"] == pytest.approx(0.025)
    assert speed["measured_sps"] == pytest.approx(4000 / 36)
    assert speed["flagged"] and "0.025 its plan used" in speed["flag"]
    assert "measured 111 steps/s on 1xV100, 4,444.44x faster" in speed["flag"]


def test_a_job_ten_times_slower_than_declared_is_flagged_and_saves_by_its_measured_speed(
        store: PriceStore, cli) -> None:
    """Declared 10 steps/s, ran at 1: 3,600 steps in an hour on zone b at $0.61 after
    launching on zone a ($2.75). At the declared speed the launch choice kept would have
    taken 6 minutes; at the measured one it takes the hour the job took."""
    prices(store, [(ZONE_A, "V100", 1, 2.75), (ZONE_B, "V100", 1, 0.61)])
    job = new_job(store, "slow", {"V100": 10.0}, 36_000)
    place(store, job, ZONE_A, "V100", 0, "launch", "i-1")
    place(store, job, ZONE_B, "V100", 60, "migration", "i-2")
    store.jobs.record_step(job, 100, at=at(100))  # its first step read on zone b
    store.jobs.record_step(job, 3600, at=at(3600))  # 3,500 steps in 3,500 s of training
    report = build(store, now=at(3600), factor=1.5)
    [row] = report.jobs.to_dict("records")
    assert row["launch_choice_usd"] == pytest.approx(2.75)
    assert row["saved_vs_launch_choice_usd"] == pytest.approx(
        2.75 - (2.75 * 60 + 0.61 * 3540) / 3600)
    [speed] = report.speeds.to_dict("records")
    assert speed["measured_vs_planned"] == pytest.approx(0.1)
    assert speed["flagged"]
    assert "10.00x slower than the 10 its plan used (the job spec's throughputs)" in speed["flag"]
    # Within the factor: not flagged.
    assert not build(store, now=at(3600), factor=11).speeds["flagged"].any()

    shown = cli("report").output
    assert "throughput: job 1 (slow): measured 1 steps/s on 1xV100, 10.00x slower" in shown
    assert "Measured speed against the plan's" in shown


def test_without_a_reported_step_no_launch_choice_saving_is_shown(store: PriceStore) -> None:
    prices(store, [(ZONE_A, "V100", 1, 2.75), (ZONE_B, "V100", 1, 0.61)])
    job = new_job(store, "silent", {"V100": 10.0}, 36_000)
    place(store, job, ZONE_A, "V100", 0, "launch", "i-1")
    place(store, job, ZONE_B, "V100", 60, "migration", "i-2")
    report = build(store, now=at(3600), factor=1.5)
    [row] = report.jobs.to_dict("records")
    assert math.isnan(row["launch_choice_usd"]) and math.isnan(row["saved_vs_launch_choice_usd"])
    assert report.totals["saved_vs_launch_choice_usd"] is None
    assert row["on_demand_usd"] > 0  # the same instance on-demand, for the same hours
    assert report.speeds.empty


def test_another_gpu_is_reached_by_the_table_ratio_not_its_figure(store: PriceStore) -> None:
    """Launched on a V100 for an hour, then four A100s for an hour; the spec says 1 and 4
    steps/s (a ratio of 4), the job did 25,000 steps: 5,000 on the V100 and 20,000 on the
    A100s by that ratio. Its launch choice kept (the V100) does the 25,000 at 5,000 steps
    an hour: five hours."""
    prices(store, [(ZONE_A, "V100", 1, 1.0), (A100, "A100", 4, 10.0)])
    job = new_job(store, "mixed", {"V100": 1.0, "A100:4": 4.0}, 100_000)
    place(store, job, ZONE_A, "V100", 0, "launch", "i-1")
    store.jobs.record_step(job, 0, at=at(0))  # readings: 5,000 steps in the V100's hour
    store.jobs.record_step(job, 5000, at=at(3600))
    place(store, job, A100, "A100", 3600, "migration", "i-2", count=4)
    store.jobs.record_step(job, 5000, at=at(3600))  # ... and 20,000 in the A100s'
    store.jobs.record_step(job, 25_000, at=at(7200))
    report = build(store, now=at(7200), factor=1.5)
    [row] = report.jobs.to_dict("records")
    assert row["launch_choice_usd"] == pytest.approx(5 * 1.0)

    placed = store.jobs.placements(job)
    found = speeds(placed, {job: 25_000}, {job: pd.Timestamp(at(7200))},
                   {job: lambda gpu, count: {"V100": 1.0, "A100": 4.0}[gpu]})
    by_gpu = found.set_index("gpu_model")["measured_sps"]
    assert by_gpu["V100"] == pytest.approx(5000 / 3600)
    assert by_gpu["A100"] == pytest.approx(20_000 / 3600)
    # A GPU it never ran on: its speed where it ran longest (the first of a tie), times
    # the table's ratio between the two.
    table = {"V100": 1.0, "A100": 4.0, "K80": 0.25}
    assert speed_on(found, "K80", 1, lambda gpu, count: table[gpu]) == pytest.approx(
        by_gpu["V100"] * 0.25)


def test_the_html_report_says_so_too(store: PriceStore) -> None:
    from costsched.report.html import render

    prices(store, [(ZONE_A, "V100", 1, 2.75)])
    job = new_job(store, "slow", {"V100": 10.0}, 36_000)
    place(store, job, ZONE_A, "V100", 0, "launch", "i-1")
    store.jobs.record_step(job, 100, at=at(100))
    store.jobs.record_step(job, 3600, at=at(3600))
    page = render(build(store, now=at(3600), factor=1.5))
    assert "<p>throughput: job 1 (slow): measured 1 steps/s on 1xV100, 10.00x slower" in page
    assert "<th>measured steps/s</th>" in page and ">0.10x</td>" in page


def test_a_task_without_work_is_compared_with_no_plan(store: PriceStore) -> None:
    """A SkyPilot task that gives no work is planned on an assumed hour (1 step/s of
    nothing): its run has no planned speed to be measured against, and no estimate to be
    set beside; it stays out of the calibration."""
    prices(store, [(ZONE_A, "V100", 1, 2.75)])
    spec = {"name": "clf", "hours": 1.0, "reference_gpu": "V100", "run": "true",
            "task": {"work_assumed": True}, "constraints": {}}
    job = store.jobs.create("clf", {"spec": spec, "source": "sky.yaml"}, 3600, at=at(-60))
    place(store, job, ZONE_A, "V100", 0, "launch", "i-1")
    assert store.jobs.predict(job, {
        "model": "clf", "cloud": "aws", "region": "us-east-1", "zone": "us-east-1a",
        "instance_type": "p3.2xlarge", "market": "spot", "gpu_model": "V100", "gpu_count": 1,
        "usd_per_hour": 2.75, "steps": 3600, "steps_per_second": 1.0,
        "throughput_source": "job spec sky.yaml: 1.0 h on 1xV100, assumed (no work given)",
        "expected_hours": 1.0, "expected_usd": 2.75, "expected_preemptions": 0.1}, at=at(0))
    store.jobs.record_step(job, 100, at=at(10))
    store.jobs.record_step(job, 3000, at=at(160))  # its own steps, 19 a second
    store.jobs.end_placement(job, at(170))
    store.jobs.transition(job, "succeeded", at=at(170))

    report = build(store, now=at(600), factor=1.5)
    [speed] = report.speeds.to_dict("records")
    assert speed["measured_sps"] == pytest.approx(2900 / 150)
    assert math.isnan(speed["planned_sps"]) and math.isnan(speed["measured_vs_planned"])
    assert not speed["flagged"] and speed["planned_from"] == "an assumed hour of work"
    assert report.estimates.empty and report.calibration.empty


def test_a_gangs_measured_speed_is_worded_as_status_words_it(store: PriceStore) -> None:
    """A gang of two 1xV100 nodes that trains ten times slower than declared: the report's
    flag names its nodes as `status` (and the daemon's log) do, in the same words."""
    from costsched.service.speeds import checks

    prices(store, [(ZONE_B, "V100", 1, 0.61)])
    spec = {"name": "pair", "throughputs": {"V100": 10.0}, "steps": 36_000,
            "num_nodes": 2, "checkpoint": {"size_gb": 0.1}, "constraints": {}}
    job = store.jobs.create("pair", {"spec": spec, "source": "test"}, 36_000, at=at(-60))
    place(store, job, ZONE_B, "V100", 0, "launch", "g-1")
    store.jobs.record_step(job, 100, at=at(100))
    store.jobs.record_step(job, 3600, at=at(3600))
    [speed] = build(store, now=at(3600), factor=1.5).speeds.to_dict("records")
    found = checks(store.jobs.records([job]), store.jobs.placement_rows([job]),
                   factor=1.5, readings=store.jobs.reading_rows([job]))[job]
    assert speed["flagged"] and " on 2 nodes of 1xV100, 10.00x slower" in speed["flag"]
    assert speed["flag"] == found.line()  # one wording: the report's is status's

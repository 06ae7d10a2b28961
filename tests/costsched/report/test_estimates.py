"""Estimate versus actual: each job's plan at launch beside what its run did, per job and
per model and GPU (median and worst ratio), for runs that beat, meet and miss their plans."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest

from costsched.report import build
from costsched.report.estimates import vs_estimate
from costsched.store import OBSERVATION_COLUMNS, PriceStore

T0 = datetime(2026, 3, 1, tzinfo=timezone.utc)
EAST = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def planned_job(store: PriceStore, name: str, *, hours: float = 10.0, usd: float = 10.0,
                preemptions: float = 0.5) -> int:
    """A job of 36,000 steps planned at 1 step/s on EAST: `hours` and `usd` predicted."""
    spec = {"name": name, "model": "ResNet-50 (batch size 64)", "steps": 36_000,
            "throughputs": {"V100": 1.0}, "constraints": {}}
    job = store.jobs.create(name, {"spec": spec, "source": "test"}, 36_000, at=at(0))
    store.jobs.place(job, EAST, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=1.0,
                     reason="launch", instance=f"{name}-1")
    assert store.jobs.predict(job, {
        "model": "ResNet-50 (batch size 64)", "cloud": "aws", "region": "us-east-1",
        "zone": "us-east-1a", "instance_type": "p3.2xlarge", "market": "spot",
        "gpu_model": "V100", "gpu_count": 1, "usd_per_hour": 1.0, "steps": 36_000,
        "steps_per_second": 1.0, "throughput_source": "job spec test",
        "expected_hours": hours, "expected_usd": usd, "expected_preemptions": preemptions},
        at=at(0))
    return job


def finish(store: PriceStore, job: int, hours: float) -> None:
    store.jobs.record_step(job, 36_000, at=at(hours))
    store.jobs.end_placement(job, at(hours))
    store.jobs.transition(job, "succeeded", at=at(hours))


@pytest.fixture()
def runs(any_store: PriceStore) -> PriceStore:
    store = any_store
    store.ingest(pd.DataFrame([(*EAST, "V100", 1, 8, 61.0, 1.0, pd.Timestamp(at(-1)), "test")],
                              columns=OBSERVATION_COLUMNS))
    finish(store, planned_job(store, "beat"), 8)  # 8 h, $8 for 10 h, $10 planned
    finish(store, planned_job(store, "met"), 10.2)
    # Half done after 7 h (one preemption, recovered at once): 5 h, $5 expected by then.
    missed = planned_job(store, "missed")
    store.jobs.end_placement(missed, at(3))
    store.moves.create(missed, "recovery", [], at=at(3), source_instance="missed-1",
                       detail="instance missed-1 preempted")
    store.jobs.place(missed, EAST, gpu_model="V100", gpu_count=1, at=at(3),
                     usd_per_hour=1.0, reason="recovery", instance="missed-2")
    # Its steps read from its restart (no checkpoint: from step 0): a running job is
    # judged once its readings span some training, as status judges its speed.
    store.jobs.record_step(missed, 0, at=at(3))
    store.jobs.record_step(missed, 18_000, at=at(7))
    # Launched without a plan kept: nothing to compare.
    store.jobs.create("unplanned", {"spec": {"name": "unplanned"}, "source": "test"}, 10.0,
                      at=at(0))
    return store


def test_each_job_beside_its_plan(runs: PriceStore) -> None:
    report = build(runs, now=at(11), factor=1.5)
    rows = report.estimates.set_index("name")
    assert list(rows.index) == ["beat", "met", "missed"]
    assert list(rows["vs_estimate"])[:2] == ["under", "within"]
    # It trained faster than planned (18,000 steps in 4 h) but cost more: the 3 h lost to
    # its preemption are billed, not training.
    assert rows.loc["missed", "vs_estimate"].startswith("hours under, cost over")
    beat, met, missed = rows.loc["beat"], rows.loc["met"], rows.loc["missed"]
    assert (beat["training_hours"], beat["usd"]) == (pytest.approx(8.0), pytest.approx(8.0))
    assert beat["training_hours_ratio"] == pytest.approx(0.8)
    assert beat["usd_ratio"] == pytest.approx(0.8)
    assert met["training_hours_ratio"] == pytest.approx(1.02)
    # Compared on the work done: half the steps, so half the plan, up to the reading at 7 h
    # (not the 11 h of now).
    assert missed["done"] == pytest.approx(0.5)
    assert (missed["expected_training_hours"], missed["expected_usd"]) == (5.0, 5.0)
    # Its training hours up to that reading; its dollars its spend, as "Spend per job" has
    # it (to the 11 h of now: one figure per job in one report).
    assert missed["training_hours"] == pytest.approx(4.0) and missed["usd"] == pytest.approx(11.0)
    assert missed["usd"] == report.jobs.set_index("name").loc["missed", "usd"]
    assert missed["training_hours_ratio"] == pytest.approx(0.8)
    assert (missed["expected_preemptions"], missed["preemptions"]) == (0.25, 1)
    assert beat["preemptions"] == 0 and beat["gpu"] == "1xV100"


def test_median_and_worst_per_model_and_gpu(runs: PriceStore, cli) -> None:
    """Over the jobs that ended (beat, met); the one still running (missed, half done) has
    a row of its own but is no measure of its estimate yet: it is left out."""
    report = build(runs, now=at(11), factor=1.5)
    [group, overall] = report.calibration.to_dict("records")
    assert (group["model"], group["gpu"], group["jobs"]) == (
        "ResNet-50 (batch size 64)", "1xV100", 2)
    assert group["median_training_hours_ratio"] == pytest.approx((0.8 + 1.02) / 2)
    assert group["worst_training_hours_ratio"] == pytest.approx(0.8)  # further from 1
    rows = report.estimates.set_index("name")
    assert group["worst_usd_ratio"] == pytest.approx(0.8)  # not missed's 2.2 ($11 of $5)
    assert rows.loc["missed", "usd_ratio"] == pytest.approx(2.2)  # its row stands
    assert (overall["model"], overall["jobs"]) == ("(all)", 2)


def test_the_report_shows_the_section(db_path, cli) -> None:  # noqa: ANN001
    store = PriceStore(str(db_path))
    store.ingest(pd.DataFrame([(*EAST, "V100", 1, 8, 61.0, 1.0, pd.Timestamp(at(-1)), "test")],
                              columns=OBSERVATION_COLUMNS))
    finish(store, planned_job(store, "beat"), 8)
    store.dispose()
    shown = cli("report", "--until", at(11).isoformat()).output
    assert "Estimate versus actual, per job" in shown
    assert "Estimate versus actual, by model and GPU" in shown
    assert "0.80x" in shown and "under" in shown and "vs estimate" in shown


def test_against_the_estimate_needs_a_ratio() -> None:
    assert vs_estimate(math.nan, math.nan) == ""
    assert vs_estimate(0.95, 1.05) == "within"
    assert vs_estimate(1.2, 1.3) == "over" and vs_estimate(0.5, 0.8) == "under"
    assert vs_estimate(math.nan, 0.5) == "under"  # the one ratio known judges alone


def test_the_verdict_never_reads_within_beside_a_cost_far_off() -> None:
    """Where the hours and the cost disagree, the verdict names each: a run on its plan's
    hours that cost a tenth of its estimate is not 'within' it."""
    assert vs_estimate(1.0, 0.10) == "hours within, cost under"
    assert vs_estimate(5.93, 0.08) == "hours over, cost under"
    assert vs_estimate(0.5, 1.2) == "hours under, cost over"


def test_a_job_that_failed_at_step_0_shows_what_it_spent(runs: PriceStore) -> None:
    """Nothing done, nothing to compare: its actual cost is what it spent all the same, as
    the spend table has it."""
    failed = planned_job(runs, "failed")
    runs.jobs.end_placement(failed, at(0.5))
    runs.jobs.transition(failed, "failed", at=at(0.5))
    report = build(runs, now=at(11), factor=1.5)
    row = report.estimates.set_index("name").loc["failed"]
    spent = report.jobs.set_index("name").loc["failed", "usd"]
    assert row["done"] == 0 and spent == pytest.approx(0.5)
    assert row["usd"] == pytest.approx(spent)
    assert math.isnan(row["usd_ratio"]) and math.isnan(row["training_hours"])


def test_the_hours_show_at_the_precision_their_ratio_reads() -> None:
    """0.0152 against 0.024 hours read 0.02 and 0.02 at two decimals, beside 0.63x: the
    table's hours take the decimals at which the figures shown make their ratio."""
    from costsched.amounts import half_up
    from costsched.report.cells import format_cell, table_places

    row = {"job_id": 1, "done": 1.0, "expected_training_hours": 0.024,
           "training_hours": 0.0152, "training_hours_ratio": 0.0152 / 0.024,
           "expected_usd": 0.03, "usd": 0.03, "usd_ratio": 1.0}
    places = table_places([row])
    shown = [float(format_cell(c, row[c], places)) for c in
             ("expected_training_hours", "training_hours")]
    ratio = format_cell("training_hours_ratio", row["training_hours_ratio"], places)
    # 0.015 / 0.024 = 0.625: 0.63x, a half rounded up as every figure is (`half_up`)
    assert f"{half_up(shown[1] / shown[0], 2)}x" == ratio
    assert places["hours"] <= 4
    # Hours that read their ratio at two decimals keep two.
    big = {**row, "expected_training_hours": 10.0, "training_hours": 8.0,
           "training_hours_ratio": 0.8}
    assert table_places([big])["hours"] == 2

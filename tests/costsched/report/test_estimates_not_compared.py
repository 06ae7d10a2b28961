"""Estimate versus actual leaves out of its calibration the runs that say nothing of an
estimate's accuracy: one that failed, one that exited 0 short of its declared steps (step 0
included), and, from the by-GPU groups, one that ran on several GPU types. Their rows say
what they are (failed, ended short, the GPUs it ran on), never 'under' or 'over'."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from costsched.report import build
from costsched.report.estimates import ALL
from costsched.store import OBSERVATION_COLUMNS, PriceStore
from tests.costsched.report.test_estimates import EAST, at, finish, planned_job

A100 = ("aws", "us-east-1", "us-east-1a", "p4d.24xlarge", "spot", "linux")


@pytest.fixture()
def runs(any_store: PriceStore) -> PriceStore:
    store = any_store
    store.ingest(pd.DataFrame([(*EAST, "V100", 1, 8, 61.0, 1.0, pd.Timestamp(at(-1)), "test")],
                              columns=OBSERVATION_COLUMNS))
    finish(store, planned_job(store, "beat"), 8)  # 0.8x on hours and dollars
    failed = planned_job(store, "failed")  # reported step 0, then failed
    store.jobs.record_step(failed, 0, at=at(0.1))
    store.jobs.end_placement(failed, at(0.2))
    store.jobs.transition(failed, "failed", at=at(0.2))
    short = planned_job(store, "short")  # reported step 0, then exited 0
    store.jobs.record_step(short, 0, at=at(0.1))
    store.jobs.end_placement(short, at(0.2))
    store.jobs.transition(short, "succeeded", at=at(0.2))
    moved = planned_job(store, "moved")  # half on V100, half on A100
    store.jobs.end_placement(moved, at(4))
    store.jobs.place(moved, A100, gpu_model="A100", gpu_count=1, at=at(4),
                     usd_per_hour=2.0, reason="migration", instance="moved-2")
    finish(store, moved, 8)
    return store


def test_failed_and_short_runs_are_no_calibration(runs: PriceStore) -> None:
    report = build(runs, now=at(11))
    rows = report.estimates.set_index("name")
    failed, short = rows.loc["failed"], rows.loc["short"]
    assert failed["vs_estimate"].startswith("failed"), failed["vs_estimate"]  # was: under
    assert short["vs_estimate"].startswith("ended short"), short["vs_estimate"]  # was: under
    for row in (failed, short):
        assert row["done"] == 0.0  # was 1.0 for the short one: all of its steps
        assert math.isnan(row["training_hours_ratio"]) and math.isnan(row["usd_ratio"])
    calibration = report.calibration.set_index(["model", "gpu"])
    assert calibration.loc[(ALL, ALL), "jobs"] == 2  # beat, moved: not failed, not short
    assert calibration.loc[(ALL, ALL), "median_usd_ratio"] > 0.5


def test_a_moved_run_says_its_gpus_and_is_no_gpus_calibration(runs: PriceStore) -> None:
    report = build(runs, now=at(11))
    rows = report.estimates.set_index("name")
    assert rows.loc["moved", "gpu"] == "1xV100 then 1xA100"  # was: 1xV100
    groups = report.calibration.set_index(["model", "gpu"])
    [(model, gpu)] = [k for k in groups.index if k[1] != ALL]
    assert gpu == "1xV100" and groups.loc[(model, gpu), "jobs"] == 1  # beat alone


def test_spend_per_job_shows_a_short_run_as_every_view_does(runs: PriceStore) -> None:
    states = build(runs, now=at(11)).jobs.set_index("name")["state"]
    assert states["short"] == "ended-short"  # was: succeeded (its stored state)
    assert states["beat"] == "succeeded" and states["failed"] == "failed"

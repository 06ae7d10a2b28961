"""The collection backtest over the recorded prices, through the service."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from costsched.model import InvalidInput
from costsched.service.collection_backtest import collection_backtest

SWEEP = "examples/sweep.yaml"


@pytest.fixture(scope="module")
def sweep(recorded_store):
    root = Path(__file__).resolve().parents[3]
    return collection_backtest(recorded_store, job_files=[root / SWEEP], starts=2,
                               first_start="2020-03-01")


def test_the_example_sweep_is_replayed_by_every_approach(sweep) -> None:
    runs = sweep.runs
    assert sweep.errors.empty, sweep.errors
    assert sorted(runs["approach"].unique()) == sorted(
        ["collection", "alone", "alone-daily", "cheapest-hourly"])
    assert (runs.groupby("approach").size() == 2).all()
    assert (runs["jobs"] == 6).all() and len(sweep.jobs) == 6
    assert (runs["cost_usd"] > 0).all()
    # The planners meet the sweep's 12 h deadline; the instance log adds up to each run.
    planned = runs[runs["approach"] != "cheapest-hourly"]
    assert (planned["deadline_misses"] == 0).all()
    assert (planned["makespan_hours"] <= 12).all()
    billed = sweep.instances.groupby(["approach", "start"])["cost_usd"].sum()
    assert np.allclose(billed[list(zip(runs["approach"], runs["start"], strict=True))],
                       runs["cost_usd"])


def test_the_sweep_shares_multi_gpu_instances(sweep) -> None:
    shared = sweep.instances[(sweep.instances["approach"] == "collection")
                             & sweep.instances["jobs"].str.contains(", ", regex=False)]
    assert len(shared) >= 1
    assert (shared["gpu_count"] > 1).all()
    assert (shared["gpus_used"] <= shared["gpu_count"]).all()
    summary = sweep.summary.set_index("approach")
    assert summary.loc["cheapest-hourly", "vs_cheapest_hourly"] == pytest.approx(1.0)


def test_jobs_from_models_cycle_through_them(recorded_store) -> None:
    result = collection_backtest(recorded_store, models=["A3C", "CycleGAN"], n_jobs=3,
                                 days=0.25, regions=["us-east-1"], starts=1,
                                 first_start="2020-03-01", approaches=["alone"])
    assert result.jobs == ["A3C #1", "CycleGAN #1", "A3C #2"]
    assert result.errors.empty, result.errors
    assert result.runs["deadline_misses"].iloc[0] == 0


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"approaches": ["static"]}, "approaches 'static': expected one of collection"),
    ({"replan_hours": 0}, "replan_hours 0: expected a positive number"),
    ({"deadline_hours": -1}, "deadline_hours -1: expected a positive number"),
])
def test_bad_values_are_named(recorded_store, kwargs, message) -> None:
    with pytest.raises(InvalidInput, match=message):
        collection_backtest(recorded_store, starts=1, first_start="2020-03-01", **kwargs)

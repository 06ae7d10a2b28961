"""Estimate versus the replay: each run keeps what a plan at its start predicted on the
first offering chosen, and `calibration` gives the median and worst ratio per model, GPU
and policy, as `costsched report` does for real jobs."""

from __future__ import annotations

import pandas as pd
import pytest

from costsched.backtest import BacktestConfig, run_backtest
from costsched.backtest.report import calibration
from costsched.optimize.decision import Overheads
from costsched.throughput import ThroughputTable
from tests.costsched.backtest.handmade import T0, V100_A, V100_B, job, trace

TABLE = ThroughputTable()
RESNET = "ResNet-50 (batch size 128)"


def test_a_price_rise_after_the_start_shows_as_a_cost_ratio_above_one() -> None:
    """Zone b is the cheapest V100 at the start (0.9) and triples a day later: the static
    policy, which stays, costs (0.9 + 3.0) / (2 x 0.9) of its plan over its two days; its
    hours are as planned (moves free, no preemptions in a price trace)."""
    prices = trace([(V100_A, 1.0, 0), (V100_B, 0.9, 0), (V100_B, 3.0, 1)])
    runs = run_backtest(prices, [job(RESNET, 2, TABLE)], [T0.to_pydatetime()],
                        ["static", "dynamic"], BacktestConfig(overheads=Overheads.free()),
                        TABLE)
    static = runs[runs["policy"] == "static"].iloc[0]
    assert static["expected_hours"] == pytest.approx(48.0, rel=1e-6)
    assert static["expected_usd"] == pytest.approx(0.9 * 48, rel=1e-6)
    assert static["first_gpu"] == "1xV100"

    found = calibration(runs).set_index("policy")
    assert found.loc["static", "runs"] == 1
    assert found.loc["static", "median_hours_ratio"] == pytest.approx(1.0)
    assert found.loc["static", "worst_usd_ratio"] == pytest.approx((0.9 + 3.0) / 1.8,
                                                                   rel=1e-3)
    # The dynamic policy moves to zone a when b rises: closer to its plan.
    assert 1.0 < found.loc["dynamic", "median_usd_ratio"] < found.loc["static",
                                                                      "median_usd_ratio"]


def test_median_and_worst_over_many_runs() -> None:
    runs = pd.DataFrame({
        "model": ["m"] * 3, "first_gpu": ["1xV100"] * 3, "policy": ["static"] * 3,
        "hours": [10.0, 10.0, 10.0], "expected_hours": [10.0, 10.0, 10.0],
        "cost_usd": [5.0, 10.0, 30.0], "expected_usd": [10.0, 10.0, 10.0]})
    [row] = calibration(runs).to_dict("records")
    assert (row["median_usd_ratio"], row["worst_usd_ratio"]) == (1.0, 3.0)
    assert row["worst_hours_ratio"] == 1.0
    assert calibration(runs.drop(columns="expected_usd")).empty  # results of older runs

"""The baselines rent what the job asked for (its GPU models and counts, from its
constraints or else its measured throughputs), and the summary counts and prices each
policy's replayed runs whatever a baseline did."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from costsched.backtest import BacktestConfig, baseline_terms, run_backtest, summarize
from costsched.model import Constraints
from costsched.optimize.decision import Overheads
from costsched.throughput import ThroughputTable
from tests.costsched.backtest.handmade import DAY, T0, V100_A, job, trace

TABLE = ThroughputTable()
RESNET = "ResNet-50 (batch size 128)"
T4_A = ("aws", "us-east-1", "us-east-1a", "g4dn.xlarge", "T4", 1)
# The V100 is far cheaper per step, so only the job's own terms keep a baseline on the T4.
TRACE = trace([(V100_A, 0.3, 0), (T4_A, 0.5, 0), (T4_A, 0.6, 1)])
STARTS = [T0.to_pydatetime(), (T0 + DAY / 4).to_pydatetime()]
BASELINES = ["static", "cheapest-hourly"]


def replay(bj, policies=BASELINES):  # noqa: ANN001, ANN201
    return run_backtest(TRACE, [bj], STARTS, policies,
                        BacktestConfig(overheads=Overheads.free()), TABLE)


def test_a_t4_only_job_has_its_baselines_on_the_t4() -> None:
    bj = job(RESNET, 1, TABLE)
    bj = replace(bj, job=replace(bj.job, constraints=Constraints(gpu_models=("T4",))))
    frame = replay(bj, [*BASELINES, "dynamic"])
    assert frame["error"].isna().all(), frame["error"].tolist()
    assert set(frame["first_offering"]) == {"aws:us-east-1a:g4dn.xlarge (1xT4)"}
    assert baseline_terms([bj], BASELINES) == {
        "static": ["1xT4 spot in us-east-1, the lowest expected cost at the start, kept"],
        "cheapest-hourly": ["1xT4 spot in any region, the lowest $/h, kept until it is gone"]}


def test_a_job_that_measured_only_a_t4_is_rented_a_t4_by_the_baselines() -> None:
    bj = replace(job(RESNET, 1, TABLE), measured=("T4",))
    frame = replay(bj, [*BASELINES, "gpu-type"])
    baselines = frame[frame["policy"].isin(BASELINES)]
    assert set(baselines["first_offering"]) == {"aws:us-east-1a:g4dn.xlarge (1xT4)"}
    # The other policies still choose among every GPU the job may run on (estimated ones).
    assert set(frame.loc[frame["policy"] == "gpu-type", "first_offering"]) == {
        "aws:us-east-1a:p3.2xlarge (1xV100)"}


def test_a_job_without_gpus_keeps_the_1xv100_baselines() -> None:
    frame = replay(job(RESNET, 1, TABLE))
    assert set(frame["first_offering"]) == {"aws:us-east-1a:p3.2xlarge (1xV100)"}


def test_a_job_asking_for_gpus_nobody_prices_says_so_in_its_terms() -> None:
    bj = job(RESNET, 1, TABLE)
    bj = replace(bj, job=replace(bj.job, constraints=Constraints(gpu_models=("A100",),
                                                                 gpu_counts=(8,))))
    frame = replay(bj)
    said = dict(zip(frame["policy"], frame["error"], strict=False))
    assert "(8xA100 spot in us-east-1)" in said["static"]
    assert "(8xA100 spot in any region)" in said["cheapest-hourly"]


def _results(policy: str, costs: list[float | None]) -> list[dict]:
    return [{"job": "j", "jobs": 1, "model": "m", "region": "r", "start": T0 + i * DAY,
             "policy": policy, "cost_usd": np.nan if c is None else c,
             "hours": np.nan if c is None else 10.0, "migrations": 0 if c is None else 1,
             "error": "no offering" if c is None else None}
            for i, c in enumerate(costs)]


def test_the_summary_counts_and_prices_runs_when_static_never_ran() -> None:
    results = pd.DataFrame([*_results("static", [None, None]),
                            *_results("cheapest-hourly", [4.0, 6.0]),
                            *_results("dynamic", [2.0, None])])
    summary = summarize(results).set_index("policy")
    assert summary.loc["cheapest-hourly", "runs"] == 2
    assert summary.loc["cheapest-hourly", "cost_usd"] == 10.0
    assert summary.loc["dynamic", ["runs", "failed", "cost_usd"]].tolist() == [1, 1, 2.0]
    assert summary.loc["static", ["runs", "failed"]].tolist() == [0, 2]
    assert np.isnan(summary.loc["static", "cost_usd"])
    # Against cheapest-hourly, over the one start both ran: 4 / 2.
    assert summary.loc["dynamic", "reduction_vs_cheapest_hourly"] == 2.0
    assert summary["reduction"].isna().all()

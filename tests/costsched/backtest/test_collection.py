"""The collection backtest on hand-made traces whose answers can be worked out by hand."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from costsched.backtest.collection import (
    APPROACHES,
    CollectionConfig,
    CollectionReplay,
    Decisions,
    run_collection_backtest,
    summarize,
)
from costsched.optimize.decision import Overheads
from costsched.service.collection_backtest import jobs_for_models
from costsched.throughput import ThroughputTable
from tests.costsched.backtest.handmade import K80_A, T0, V100_A, V100_B, V100X4_A, trace

MODEL = "ResNet-50 (batch size 128)"
START = int(T0.timestamp())


def jobs(n: int, days: float, **constraints: object) -> list:
    table = ThroughputTable.load()
    out = jobs_for_models([MODEL], n, days, ["us-east-1"], table, Overheads(), 1.0)
    return [replace(j, job=replace(j.job, constraints=replace(j.job.constraints, **constraints)))
            for j in out]


def run(tr, js, config=None, approaches=("collection", "alone", "alone-daily",
                                         "cheapest-hourly")):
    runs, instances = run_collection_backtest(tr, js, [START], config or CollectionConfig(),
                                              approaches)
    return runs.set_index("approach"), instances


def test_four_jobs_share_a_four_gpu_instance_cheaper_than_alone() -> None:
    # $2/GPU-hour on the 4xV100 against $3 on a 1xV100; each job is 12 h on one V100.
    tr = trace([(V100_A, 3.0, 0), (V100X4_A, 8.0, 0)])
    runs, instances = run(tr, jobs(4, 0.5))
    assert (runs["error"].isna()).all(), runs["error"]
    assert runs.loc["collection", "cost_usd"] == pytest.approx(8.0 * 12)
    assert runs.loc["collection", "shared_instances"] == 1
    shared = instances[instances["approach"] == "collection"]
    assert len(shared) == 1 and shared["gpus_used"].iloc[0] == 4
    scale = ThroughputTable.load().get(MODEL, "V100", 4).steps_per_second / \
        ThroughputTable.load().get(MODEL, "V100", 1).steps_per_second
    alone = min(3.0 * 12, 8.0 * 12 / scale)  # each job's own best, whole instances only
    assert runs.loc["alone", "cost_usd"] == pytest.approx(4 * alone)
    assert runs.loc["cheapest-hourly", "cost_usd"] == pytest.approx(4 * 3.0 * 12)
    # The instance log adds up to each run's cost.
    billed = instances.groupby("approach")["cost_usd"].sum()
    assert np.allclose(billed[runs.index], runs["cost_usd"])


def test_unshared_collection_places_jobs_on_whole_instances() -> None:
    tr = trace([(V100_A, 3.0, 0), (V100X4_A, 8.0, 0)])
    runs, instances = run(tr, jobs(4, 0.5), CollectionConfig(share_instances=False))
    assert runs.loc["collection", "shared_instances"] == 0
    assert runs.loc["collection", "cost_usd"] == pytest.approx(runs.loc["alone", "cost_usd"])


def test_replanning_moves_a_job_when_it_pays_and_charges_the_move() -> None:
    # Zone b drops from $3 to $1 after a day; the job is 2 days on a V100.
    tr = trace([(V100_A, 3.0, 0), (V100_B, 3.5, 0), (V100_B, 1.0, 1)])
    idle = 0.5  # hours a move idles
    config = CollectionConfig(overheads=Overheads(restart_minutes=idle * 60, warmup_minutes=0,
                                                  lost_work_minutes=0,
                                                  transfer_gbps=float("inf"), egress=False))
    runs, _ = run(tr, jobs(1, 2.0), config)
    assert runs.loc["alone", "moves"] == 0
    assert runs.loc["alone", "cost_usd"] == pytest.approx(3.0 * 48)
    assert runs.loc["alone-daily", "moves"] == 1
    # Day 0 on a; day 1 on b, idle first, so the job ends `idle` hours into day 2.
    assert runs.loc["alone-daily", "cost_usd"] == pytest.approx(3.0 * 24 + 1.0 * (24 + idle))
    assert runs.loc["alone-daily", "makespan_hours"] == pytest.approx(48 + idle)
    assert runs.loc["collection", "cost_usd"] == pytest.approx(runs.loc["alone-daily",
                                                                        "cost_usd"])


def test_cheapest_hourly_misses_a_deadline_the_planner_meets() -> None:
    # A K80 is the cheapest hour but too slow for a deadline of 1.5x the job's V100 length.
    tr = trace([(V100_A, 3.0, 0), (K80_A, 0.9, 0)])
    js = jobs(2, 0.5, gpu_models=("K80", "V100"), deadline_hours=18.0)
    runs, instances = run(tr, js)
    assert runs.loc["cheapest-hourly", "deadline_misses"] == 2
    assert runs.loc["alone", "deadline_misses"] == 0
    assert runs.loc["collection", "deadline_misses"] == 0
    cheap = instances[instances["approach"] == "cheapest-hourly"]
    assert cheap["offering"].str.contains("p2.xlarge").all()


def test_a_job_late_everywhere_goes_as_fast_as_it_can() -> None:
    tr = trace([(V100_A, 3.0, 0), (K80_A, 0.9, 0)])
    runs, _ = run(tr, jobs(1, 0.5, gpu_models=("K80", "V100"), deadline_hours=6.0))
    assert runs.loc["collection", "deadline_misses"] == 1
    assert runs.loc["collection", "makespan_hours"] == pytest.approx(12.0)  # on the V100


def test_a_run_without_any_usable_offering_reports_why() -> None:
    tr = trace([(V100_A, 3.0, 0)])
    runs, _ = run(tr, jobs(1, 0.5, regions=("eu-west-1",)), approaches=("collection",))
    assert np.isnan(runs.loc["collection", "cost_usd"])
    assert "no offering matches its constraints" in runs.loc["collection", "error"]


def test_summary_compares_with_cheapest_hourly() -> None:
    tr = trace([(V100_A, 3.0, 0), (V100X4_A, 8.0, 0)])
    runs, _ = run_collection_backtest(tr, jobs(4, 0.5), [START, START + 86_400])
    summary = summarize(runs).set_index("approach")
    assert (summary["runs"] == 2).all()
    base = summary.loc["cheapest-hourly", "cost_usd"]
    assert summary.loc["collection", "vs_cheapest_hourly"] == pytest.approx(
        base / summary.loc["collection", "cost_usd"])
    assert summary.loc["collection", "vs_cheapest_hourly"] > 1


def run_alone(tr, js, start: int, approach: str, config: CollectionConfig) -> tuple:
    replay = CollectionReplay(tr, js, start, approach, config)
    return replay.run(), replay.instances


@pytest.mark.parametrize("share", [True, False])
def test_runs_sharing_decisions_match_runs_planned_on_their_own(share: bool) -> None:
    # Zone b drops after a day: the daily approaches move, so later decisions differ by run.
    tr = trace([(V100_A, 3.0, 0), (V100_B, 3.5, 0), (V100X4_A, 9.0, 0), (V100_B, 1.0, 1)])
    js = jobs(3, 2.0)
    config = CollectionConfig(share_instances=share)
    starts = [START, START + 3_600]
    runs, instances = run_collection_backtest(tr, js, starts, config)
    for start in starts:
        when = instances["start"] == pd.Timestamp(start, unit="s", tz="UTC")
        for approach in APPROACHES:
            row, own = run_alone(tr, js, start, approach, config)
            got = runs[(runs["approach"] == approach)
                       & (runs["start"] == pd.Timestamp(start, unit="s", tz="UTC"))].iloc[0]
            assert got["cost_usd"] == row["cost_usd"] and got["moves"] == row["moves"]
            mine = instances[when & (instances["approach"] == approach)]
            assert mine["offering"].tolist() == [i["offering"] for i in own]
            assert mine["cost_usd"].tolist() == [i["cost_usd"] for i in own]


def test_a_state_met_again_is_not_solved_again() -> None:
    tr = trace([(V100_A, 3.0, 0), (V100_B, 3.5, 0), (V100_B, 1.0, 1)])
    js, config = jobs(2, 2.0), CollectionConfig(share_instances=False)
    decisions = Decisions()
    for approach in ("alone", "alone-daily", "collection"):
        CollectionReplay(tr, js, START, approach, config, decisions=decisions).run()
    # alone-daily meets alone's start and solves its later days; the unshared collection
    # without quotas meets every one of alone-daily's problems.
    assert len(decisions.plans) >= 2 and decisions.hits == len(decisions.plans) + 1

"""The oracle is the optimum: equal to a brute-force search on small traces, and never
above any policy on the recorded AWS/Azure traces with migration costs charged to all."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsched.backtest import (
    PUBLISHED_MODELS,
    BacktestConfig,
    PriceTrace,
    jobs_for_models,
    regular_starts,
    run_backtest,
    simulate,
    throughputs,
)
from costsched.backtest import REPLAY_POLICIES as POLICIES
from costsched.backtest import oracle as oracle_module
from costsched.backtest.accounting import Run
from costsched.backtest.oracle import Oracle
from costsched.model import InvalidInput
from costsched.optimize.decision import Overheads
from costsched.policies.base import JobState
from costsched.throughput import ThroughputTable
from tests.costsched.backtest.handmade import AZ_V100, K80_A, T0, V100_A, V100_B, job, trace

TABLE = ThroughputTable()
OFFERINGS = (V100_A, K80_A, AZ_V100)


def brute_force(run: Run, usable: list[int], periods: int, placed: int = -1) -> float:
    """The cheapest plan by trying every sequence of offerings (periods small), from
    offering `placed` (-1: not placed yet)."""
    best = math.inf

    def go(k: int, prev: int, done: float, usd: float) -> None:
        nonlocal best
        if usd >= best or k >= periods:
            return
        for new in usable:
            out = run.advance(k, np.array([prev]), np.array([new]),
                              np.array([run.steps - done]))
            total = usd + float(out.usd[0])
            if out.finished[0]:
                best = min(best, total)
            else:
                go(k + 1, new, done + float(out.steps[0]), total)

    go(0, placed, 0.0, 0.0)
    return best


@settings(max_examples=40, deadline=None)
@given(
    prices=st.lists(st.lists(st.floats(0.05, 3.0), min_size=4, max_size=4), min_size=3,
                    max_size=3),
    idle_hours=st.sampled_from([0.0, 1.0, 6.0]),
    days=st.floats(0.3, 1.6),
)
def test_oracle_equals_brute_force(prices: list[list[float]], idle_hours: float,
                                   days: float) -> None:
    rows = [(o, p, d) for o, series in zip(OFFERINGS, prices, strict=True)
            for d, p in enumerate(series)]
    tr = trace(rows)
    bj = job("A3C", days, TABLE)
    costs = Overheads(restart_minutes=idle_hours * 60, warmup_minutes=0,
                      lost_work_minutes=0, transfer_gbps=math.inf)
    sps = throughputs(tr, TABLE, "A3C")
    run = Run(tr, sps, bj.job.steps, int(T0.timestamp()), 86_400, costs, checkpoint_gb=5.0)
    state = JobState(bj.job, bj.region, bj.job.steps, None, costs)
    plan = Oracle().plan(run, state)
    frame = run_backtest(tr, [bj], [T0.to_pydatetime()], ["oracle"],
                         BacktestConfig(overheads=costs, checkpoint_gb=5.0), TABLE)
    periods = len(plan) + 1
    assert frame["cost_usd"].iloc[0] == pytest.approx(brute_force(run, [0, 1, 2], periods + 2),
                                                      rel=1e-9)


@settings(max_examples=40, deadline=None)
@given(
    prices=st.lists(st.lists(st.floats(0.05, 3.0), min_size=4, max_size=4), min_size=3,
                    max_size=3),
    idle_hours=st.sampled_from([1.0, 6.0]),
    days=st.floats(0.3, 1.6),
    placed=st.sampled_from(OFFERINGS),
)
def test_oracle_from_a_placed_job_equals_brute_force_from_there(
        prices: list[list[float]], idle_hours: float, days: float, placed: tuple) -> None:
    # The rest of a job that runs somewhere already: staying is free, the first move away
    # is charged like any other.
    rows = [(o, p, d) for o, series in zip(OFFERINGS, prices, strict=True)
            for d, p in enumerate(series)]
    tr = trace(rows)
    bj = job("A3C", days, TABLE)
    costs = Overheads(restart_minutes=idle_hours * 60, warmup_minutes=0,
                      lost_work_minutes=0, transfer_gbps=math.inf)
    run = Run(tr, throughputs(tr, TABLE, "A3C"), bj.job.steps, int(T0.timestamp()), 86_400,
              costs, checkpoint_gb=5.0)
    key = next(k for k in tr.keys if k[3] == placed[3] and k[0] == placed[0])
    state = JobState(bj.job, bj.region, bj.job.steps, key, costs)
    plan = Oracle().plan(run, state)
    replayed = simulate(Oracle(), run, state)
    assert replayed["cost_usd"] == pytest.approx(
        brute_force(run, [0, 1, 2], len(plan) + 3, placed=tr.rows[key]), rel=1e-9)


def test_a_placed_job_stays_on_its_own_offering_not_on_a_twin() -> None:
    # Two zones priced alike are searched once; the plan keeps the job where it runs.
    tr = trace([(V100_A, 1.0, 0), (V100_B, 1.0, 0), (K80_A, 2.0, 0)])
    bj = job("A3C", 2.0, TABLE)
    costs = Overheads()
    run = Run(tr, throughputs(tr, TABLE, "A3C"), bj.job.steps, int(T0.timestamp()), 86_400,
              costs, checkpoint_gb=1.0)
    key = next(k for k in tr.keys if k[2] == "us-east-1b")
    state = JobState(bj.job, bj.region, bj.job.steps, key, costs)
    assert Oracle().plan(run, state) == [tr.rows[key]] * 2
    row = simulate(Oracle(), run, state)
    assert row["migrations"] == 0
    assert row["cost_usd"] == pytest.approx(48.0)


def test_the_oracle_refuses_a_placement_without_a_price_at_the_start() -> None:
    tr = trace([(V100_A, 1.0, 0), (AZ_V100, 0.5, 1)])
    bj = job("A3C", 2.0, TABLE)
    run = Run(tr, throughputs(tr, TABLE, "A3C"), bj.job.steps, int(T0.timestamp()), 86_400,
              Overheads(), checkpoint_gb=1.0)
    key = next(k for k in tr.keys if k[0] == "azure")
    with pytest.raises(InvalidInput, match="no price at the start"):
        Oracle().plan(run, JobState(bj.job, bj.region, bj.job.steps, key, Overheads()))


@pytest.fixture(scope="module")
def recorded_results(recorded_store) -> pd.DataFrame:
    trace_ = PriceTrace.from_store(recorded_store, os=["linux", "linux-vpc"])
    jobs = jobs_for_models(PUBLISHED_MODELS, 4, ["us-east-1", "us-west-2"], TABLE)
    starts = regular_starts(pd.Timestamp("2020-02-10", tz="UTC").to_pydatetime(), 10,
                            every_hours=72)
    return run_backtest(trace_, jobs, starts, list(POLICIES), BacktestConfig(), TABLE)


def test_oracle_is_never_above_any_policy_on_the_recorded_traces(recorded_results) -> None:
    assert recorded_results["error"].isna().all()
    costs = recorded_results.pivot_table(index=["job", "start"], columns="policy",
                                         values="cost_usd")
    # cheapest-hourly may also use other regions of the home cloud, outside the oracle's
    # choice set (the multi-cloud one): it is a baseline, not one of the oracle's plans.
    others = costs.drop(columns=["oracle", "cheapest-hourly"])
    assert (costs["oracle"].to_numpy()[:, None] <= others.to_numpy() * (1 + 1e-9)).all()
    # ... and it does find savings the online policies miss.
    assert (costs["oracle"] < others.min(axis=1) * 0.99).any()


def test_ladder_of_choices_never_costs_more_at_the_start(recorded_results) -> None:
    """Each choose-once policy adds choices to the previous one and picks the cheapest per
    step at the start, so at constant prices it could not cost more; on the real traces
    it must at least be no worse on the whole."""
    totals = recorded_results.groupby("policy")["cost_usd"].sum()
    assert totals["gpu-type"] <= totals["static"]
    assert totals["multi-gpu"] <= totals["gpu-type"] * 1.001
    assert totals["multi-cloud"] <= totals["multi-gpu"]
    assert totals["oracle"] <= totals.drop("oracle").min()


def test_dynamic_aware_against_dynamic_with_the_same_costs_charged(recorded_results) -> None:
    r = recorded_results.set_index(["job", "start", "policy"])
    dyn = r.xs("dynamic", level="policy")
    aware = r.xs("dynamic-aware", level="policy")
    # Both pay for every move they make under the same cost model.
    # At least the idle hours of a 1 GB checkpoint and a 30-minute interval at $0.10/h.
    per_move = Overheads().move_idle_hours(1.0, 0.5) * 0.1
    for frame in (dyn, aware):
        moved = frame["migrations"] > 0
        assert (frame.loc[moved, "migration_usd"] >= frame.loc[moved, "migrations"] * per_move
                ).all()
        assert (frame.loc[~moved, "migration_usd"] == 0).all()
    assert aware["migrations"].sum() < dyn["migrations"].sum()
    assert aware["migration_usd"].sum() < dyn["migration_usd"].sum()
    # With cheap moves (the default half hour and 1 GB) the two end up level: the moves
    # dynamic-aware skips saved about what they cost.
    assert aware["cost_usd"].sum() == pytest.approx(dyn["cost_usd"].sum(), rel=0.01)


def test_dynamic_aware_beats_dynamic_when_moves_are_dear(recorded_store) -> None:
    trace_ = PriceTrace.from_store(recorded_store, os=["linux", "linux-vpc"])
    jobs = jobs_for_models(PUBLISHED_MODELS, 4, ["us-east-1"], TABLE)
    starts = regular_starts(pd.Timestamp("2020-02-10", tz="UTC").to_pydatetime(), 10, 72)
    dear = Overheads(restart_minutes=30, warmup_minutes=15, lost_work_minutes=120,
                     overlap_minutes=10)
    out = run_backtest(trace_, jobs, starts, ["dynamic", "dynamic-aware", "oracle"],
                       BacktestConfig(overheads=dear, checkpoint_gb=20), TABLE)
    totals = out.groupby("policy")["cost_usd"].sum()
    assert totals["dynamic-aware"] < totals["dynamic"] * 0.99
    assert totals["oracle"] <= totals["dynamic-aware"]


def test_runs_of_the_readme_window_stay_inside_the_trace(recorded_results) -> None:
    assert (recorded_results["hours_after_trace"] == 0).all()


def every_move(run: Run, k: int, offered: np.ndarray, prog: np.ndarray, *_: object
               ) -> tuple[np.ndarray, np.ndarray]:
    """All (label, offering) pairs, label-major: the search without the pre-cut."""
    return np.repeat(np.arange(len(prog)), len(offered)), np.tile(offered, len(prog))


def test_the_cut_before_running_a_period_leaves_the_plans_as_they_were(
        recorded_store, monkeypatch: pytest.MonkeyPatch) -> None:
    trace_ = PriceTrace.from_store(recorded_store, os=["linux", "linux-vpc"])
    jobs = jobs_for_models(PUBLISHED_MODELS, 4, ["us-east-1", "us-west-2"], TABLE)
    starts = regular_starts(pd.Timestamp("2020-02-18", tz="UTC").to_pydatetime(), 4, 168)
    dear = BacktestConfig(overheads=Overheads(lost_work_minutes=120), checkpoint_gb=20)
    for config in (BacktestConfig(), dear):
        cut = run_backtest(trace_, jobs, starts, ["oracle"], config, TABLE)
        with monkeypatch.context() as m:
            m.setattr(oracle_module, "_moves", every_move)
            full = run_backtest(trace_, jobs, starts, ["oracle"], config, TABLE)
        pd.testing.assert_frame_equal(cut, full, check_exact=True)

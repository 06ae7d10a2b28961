"""Per-job ranking against a plain loop over offerings (hypothesis), and its filters."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsched.model import Constraints
from costsched.optimize import rank as ranking


def expected_hours_loop(work: float, lam: float, tau: float, restart: float) -> float:
    """The risk formula written out for one offering, as a check on the vectorized one."""
    if lam == 0:
        return work
    full = math.floor(work / tau)
    rest = work - full * tau
    return (full * math.expm1(lam * tau) + math.expm1(lam * rest)) * (1 / lam + restart)


def brute_best(objective: str, steps: float, sps: list[float], price: list[float],
               rate: list[float], tau: float, restart: float, deadline: float, budget: float,
               weight: float) -> int:
    rows = []
    for i, (s, p, r) in enumerate(zip(sps, price, rate, strict=True)):
        if s <= 0:
            continue
        h = expected_hours_loop(steps / s / 3600, r, tau, restart)
        c = h * p
        if h <= deadline and c <= budget:
            rows.append((i, h, c))
    if not rows:
        return -1
    min_c = min(c for _, _, c in rows)
    min_h = min(h for _, h, _ in rows)
    key = {
        "cost": lambda r: r[2],
        "time": lambda r: r[1],
        "tradeoff": lambda r: weight * r[2] / min_c + (1 - weight) * r[1] / min_h,
    }[objective]
    best = min(key(r) for r in rows)
    return [r[0] for r in rows if key(r) <= best * (1 + 1e-9)]  # every optimum, for ties


offers = st.integers(1, 12).flatmap(lambda n: st.tuples(
    st.lists(st.sampled_from([0.0, 0.3, 1.0, 2.5, 7.0]), min_size=n, max_size=n),
    st.lists(st.floats(0.1, 30, allow_nan=False), min_size=n, max_size=n),
    st.lists(st.sampled_from([0.0, 0.0854, 0.633]), min_size=n, max_size=n),
))


@settings(max_examples=300, deadline=None)
@given(offers, st.sampled_from(ranking.OBJECTIVES), st.floats(1e3, 1e6),
       st.sampled_from([math.inf, 1.0, 5.0, 40.0]), st.sampled_from([math.inf, 2.0, 50.0]),
       st.floats(0, 1), st.sampled_from([0.25, 1.0]), st.sampled_from([0.0, 0.1]))
def test_best_matches_brute_force(data, objective, steps, deadline, budget, weight, tau,
                                  restart) -> None:  # noqa: ANN001
    sps, price, rate = data
    expected = brute_best(objective, steps, sps, price, rate, tau, restart, deadline, budget,
                          weight)
    s = np.array(sps)
    with np.errstate(divide="ignore"):
        sps_or_nan = np.where(s > 0, s, np.nan)
    choice, hours, cost = ranking.best(
        objective, np.array([steps]), sps_or_nan[None, :], np.array(price), np.array(rate),
        np.array([tau]), np.array([restart]), np.array([deadline]), np.array([budget]),
        weight=weight,
    )
    if expected == -1:
        assert choice[0] == -1
    else:
        assert choice[0] in expected
    # The one-job table agrees with the batched choice.
    frame = pd.DataFrame({"cloud": "aws", "region": "r", "market": "spot", "gpu_model": "V100",
                          "gpu_count": 1, "usd_per_hour": price})
    table = ranking.rank(frame, steps, sps_or_nan, Constraints(
        deadline_hours=None if math.isinf(deadline) else deadline,
        budget_usd=None if math.isinf(budget) else budget), objective,
        preemptions_per_hour=np.array(rate), checkpoint_hours=tau, restart_hours=restart,
        weight=weight)
    top = table.iloc[0]
    if expected == -1:
        assert top["excluded"] != ""
    else:
        assert top["excluded"] == ""
        assert top["score"] == pytest.approx(table["score"].min())
        assert cost[0] == pytest.approx(top["expected_cost"]) or objective != "cost"


def test_many_jobs_at_once_equal_one_at_a_time() -> None:
    rng = np.random.default_rng(1)
    n_jobs, n_offers = 300, 40
    sps = rng.uniform(0.1, 10, (n_jobs, n_offers))
    price = rng.uniform(0.1, 30, n_offers)
    rate = rng.choice([0.0, 0.0854, 0.633], n_offers)
    steps = rng.uniform(1e3, 1e6, n_jobs)
    tau = rng.uniform(0.1, 1, n_jobs)
    restart = np.full(n_jobs, 0.1)
    deadline = rng.choice([np.inf, 5.0, 50.0], n_jobs)
    budget = np.full(n_jobs, np.inf)
    batched = ranking.best("cost", steps, sps, price, rate, tau, restart, deadline, budget,
                           chunk=64)
    for j in range(n_jobs):
        one = ranking.best("cost", steps[j:j + 1], sps[j:j + 1], price, rate, tau[j:j + 1],
                           restart[j:j + 1], deadline[j:j + 1], budget[j:j + 1])
        assert batched[0][j] == one[0][0]


def test_constraints_exclude_with_a_reason() -> None:
    frame = pd.DataFrame({
        "cloud": ["aws", "aws", "azure", "aws"], "region": ["us-east-1"] * 4,
        "market": ["spot", "on_demand", "spot", "spot"],
        "gpu_model": ["K80", "V100", "V100", "V100"],
        "gpu_count": [1, 1, 1, 8], "usd_per_hour": [0.3, 3.06, 0.6, 7.3],
    })
    sps = np.array([1.0, 5.0, 5.0, np.nan])
    c = Constraints(clouds=("aws",), markets=("spot",), deadline_hours=1.0)
    table = ranking.rank(frame, 3600.0, sps, c)
    reasons = dict(zip(table["usd_per_hour"], table["excluded"], strict=True))
    assert reasons == {0.3: "", 3.06: "market not allowed", 0.6: "cloud not allowed",
                       7.3: "no throughput"}
    slow = ranking.rank(frame, 36000.0, sps, c)
    assert slow.loc[slow["usd_per_hour"] == 0.3, "excluded"].item() == "misses deadline"
    assert (slow["excluded"] != "").all()
    with pytest.raises(ValueError, match="objective 'fast'"):
        ranking.rank(frame, 1.0, sps, c, "fast")


@pytest.mark.parametrize("objective", ["cost", "time"])
def test_pruned_search_equals_evaluating_every_pair(objective: str) -> None:
    """`best` skips the preemption formula where a risk-free bound already loses; the
    choice must be exactly the one of evaluating every pair."""
    rng = np.random.default_rng(5)
    n_jobs, n_offers = 500, 120
    data = dict(
        steps=rng.uniform(1e3, 1e6, n_jobs),
        steps_per_second=np.where(rng.random((n_jobs, n_offers)) < 0.1, np.nan,
                                  rng.choice([0.5, 1.0, 2.0, 4.0], (n_jobs, n_offers))),
        usd_per_hour=rng.choice([0.3, 0.9, 3.06, 7.2], n_offers),  # ties are common
        preemptions_per_hour=rng.choice([0.0, 0.0854, 0.633, 3.0], n_offers),
        checkpoint_hours=rng.choice([0.25, 0.5, 2.0], n_jobs),
        restart_hours=rng.choice([0.0, 0.1], n_jobs),
        deadline_hours=rng.choice([np.inf, 20.0, 200.0], n_jobs),
        budget_usd=rng.choice([np.inf, 50.0, 500.0], n_jobs),
    )
    allowed = rng.random((n_jobs, n_offers)) < 0.8
    pruned = ranking.best(objective, **data, allowed=allowed, chunk=64)
    batch = ranking._Batch(*(np.asarray(data[k], dtype=float) for k in (
        "steps", "steps_per_second", "usd_per_hour", "preemptions_per_hour",
        "checkpoint_hours", "restart_hours", "deadline_hours", "budget_usd")), allowed)
    dense = ranking._dense(objective, batch, slice(0, n_jobs), 0.5)
    np.testing.assert_array_equal(pruned[0], dense[0])
    np.testing.assert_allclose(pruned[1], dense[1], rtol=1e-12)
    np.testing.assert_allclose(pruned[2], dense[2], rtol=1e-12)
    assert (pruned[0] == -1).any() and (pruned[0] >= 0).any()

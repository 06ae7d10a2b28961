"""Collection policies against brute force on small instances, and infeasibility reasons."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from costsched.optimize.collection import (
    CollectionProblem,
    diagnose,
    max_throughput_per_dollar,
    min_cost,
    min_makespan,
)


@st.composite
def problems(draw: st.DrawFn) -> CollectionProblem:
    n_jobs = draw(st.integers(1, 4))
    n_offers = draw(st.integers(1, 4))
    # Small integer grids make ties (the hard case for reading off an LP solution) common.
    sps = np.array(draw(st.lists(st.integers(1, 4), min_size=n_jobs * n_offers,
                                 max_size=n_jobs * n_offers)), float).reshape(n_jobs, n_offers)
    price = np.array(draw(st.lists(st.integers(1, 5), min_size=n_offers, max_size=n_offers)),
                     float)
    steps = np.array(draw(st.lists(st.integers(1, 3), min_size=n_jobs, max_size=n_jobs)),
                     float) * 3600
    hours = steps[:, None] / sps / 3600
    n_groups = draw(st.integers(1, n_offers))
    group = np.array(draw(st.lists(st.integers(0, n_groups - 1), min_size=n_offers,
                                   max_size=n_offers)))
    capacity = np.array(draw(st.lists(st.sampled_from([1.0, 2.0, 3.0, np.inf]),
                                      min_size=n_groups, max_size=n_groups)))
    deadline = np.array(draw(st.lists(st.sampled_from([1.0, 2.0, 3.0, np.inf]),
                                      min_size=n_jobs, max_size=n_jobs)))
    allowed = np.array(draw(st.lists(st.booleans(), min_size=n_jobs * n_offers,
                                     max_size=n_jobs * n_offers))).reshape(n_jobs, n_offers)
    allowed |= draw(st.booleans())  # often everything allowed
    budget = draw(st.one_of(st.none(), st.integers(1, 40).map(float)))
    return CollectionProblem(
        jobs=[f"j{i}" for i in range(n_jobs)], offerings=[f"o{i}" for i in range(n_offers)],
        hours=hours, cost=hours * price, steps_per_second=sps, usd_per_hour=price,
        group=group, capacity=capacity, group_names=[f"g{g}" for g in range(n_groups)],
        deadline_hours=deadline, allowed=allowed, budget_usd=budget,
    )


def feasible_assignments(p: CollectionProblem, with_budget: bool = False):
    usable = p.usable
    jobs = np.arange(len(p.jobs))
    for choice in itertools.product(range(len(p.offerings)), repeat=len(p.jobs)):
        a = np.array(choice)
        if not usable[jobs, a].all():
            continue
        used = np.bincount(p.group[a], minlength=len(p.capacity))
        if (used > p.capacity).any():
            continue
        if with_budget and p.budget_usd is not None and p.cost[jobs, a].sum() > p.budget_usd:
            continue
        yield a


def gavel_value(p: CollectionProblem, a: np.ndarray) -> float:
    usable = p.usable
    best = np.where(usable, p.steps_per_second, 0).max(axis=1)
    jobs = np.arange(len(p.jobs))
    return float((p.steps_per_second[jobs, a] / best / p.usd_per_hour[a]).sum())


def check_plan(plan, p: CollectionProblem, best: float | None, value) -> None:  # noqa: ANN001
    if best is None:
        assert not plan.feasible
        assert plan.reasons, "an infeasible plan must say why"
        return
    assert plan.feasible, plan.reasons
    a = np.empty(len(p.jobs), dtype=int)
    a[[p.jobs.index(j) for j in plan.assignment["job"]]] = plan.assignment["offering_index"]
    assert len(plan.assignment) == len(p.jobs)
    assert a.tolist() in [x.tolist() for x in feasible_assignments(p, with_budget=True)]
    assert value(a) == pytest.approx(best, rel=1e-6, abs=1e-9)
    assert plan.objective == pytest.approx(best, rel=1e-6, abs=1e-9)


SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(problems())
def test_min_cost_matches_brute_force(p: CollectionProblem) -> None:
    jobs = np.arange(len(p.jobs))
    values = [p.cost[jobs, a].sum() for a in feasible_assignments(p, with_budget=True)]
    check_plan(min_cost.solve(p), p, min(values) if values else None,
               lambda a: p.cost[jobs, a].sum())


@SETTINGS
@given(problems())
def test_min_makespan_matches_brute_force(p: CollectionProblem) -> None:
    jobs = np.arange(len(p.jobs))
    values = [p.hours[jobs, a].max() for a in feasible_assignments(p, with_budget=True)]
    check_plan(min_makespan.solve(p), p, min(values) if values else None,
               lambda a: p.hours[jobs, a].max())


@SETTINGS
@given(problems())
def test_max_throughput_per_dollar_matches_brute_force(p: CollectionProblem) -> None:
    values = [gavel_value(p, a) for a in feasible_assignments(p, with_budget=True)]
    check_plan(max_throughput_per_dollar.solve(p), p, max(values) if values else None,
               lambda a: gavel_value(p, a))


def test_lp_solutions_are_integral_without_fallback() -> None:
    """Total unimodularity: the LP vertex HiGHS returns is already a 0/1 assignment."""
    rng = np.random.default_rng(7)
    p = random_problem(rng, 60, 25, capacity=6.0)
    plan = min_cost.solve(p)
    assert plan.feasible and plan.integral_lp


def random_problem(rng: np.random.Generator, n_jobs: int, n_offers: int,
                   capacity: float = np.inf) -> CollectionProblem:
    sps = rng.uniform(0.5, 5, (n_jobs, n_offers))
    price = rng.uniform(0.3, 3, n_offers)
    hours = rng.uniform(1e3, 1e5, n_jobs)[:, None] / sps / 3600
    group = np.arange(n_offers) // 2
    n_groups = group.max() + 1
    return CollectionProblem(
        jobs=[f"j{i}" for i in range(n_jobs)], offerings=[f"o{i}" for i in range(n_offers)],
        hours=hours, cost=hours * price, steps_per_second=sps, usd_per_hour=price,
        group=group, capacity=np.full(n_groups, capacity),
        group_names=[f"g{g}" for g in range(n_groups)], deadline_hours=np.full(n_jobs, np.inf),
        allowed=np.ones((n_jobs, n_offers), bool),
    )


def small(hours: list[list[float]], price: list[float], deadline: list[float],
          capacity: list[float] | None = None, budget: float | None = None,
          allowed: np.ndarray | None = None) -> CollectionProblem:
    h = np.array(hours, float)
    n_jobs, n_offers = h.shape
    cap = np.array(capacity if capacity is not None else [np.inf] * n_offers, float)
    return CollectionProblem(
        jobs=[f"job{i}" for i in range(n_jobs)],
        offerings=[f"offer{i}" for i in range(n_offers)], hours=h, cost=h * np.array(price),
        steps_per_second=1 / h, usd_per_hour=np.array(price, float),
        group=np.arange(n_offers), capacity=cap, group_names=[f"type{i}" for i in range(n_offers)],
        deadline_hours=np.array(deadline, float),
        allowed=np.ones(h.shape, bool) if allowed is None else allowed, budget_usd=budget,
    )


def test_infeasible_deadline_names_the_job_and_the_fastest_offering() -> None:
    p = small([[10, 4], [3, 2]], [1, 3], deadline=[3, 5])
    plan = min_cost.solve(p)
    assert not plan.feasible
    assert len(plan.reasons) == 1
    reason = plan.reasons[0]
    assert "job0" in reason and "deadline of 3 h" in reason
    assert "offer1" in reason and "needs 4.00 h" in reason


def test_infeasible_when_nothing_is_allowed() -> None:
    allowed = np.array([[True, True], [False, False]])
    plan = min_cost.solve(small([[1, 1], [1, 1]], [1, 1], [9, 9], allowed=allowed))
    assert plan.reasons == ["job job1: no offering matches its constraints"]


def test_infeasible_quota_says_how_many_fit() -> None:
    # Three jobs, each can only meet its deadline on offer0, which allows two instances.
    p = small([[1, 9], [1, 9], [1, 9]], [1, 1], deadline=[2, 2, 2], capacity=[2, 5])
    plan = min_cost.solve(p)
    assert not plan.feasible
    assert "at most 2 of 3 jobs" in plan.reasons[0]
    assert "type0 <= 2" in plan.reasons[0]


def test_infeasible_budget_says_how_much_is_missing() -> None:
    # Cheapest: job0 on offer0 (2 h x $1) + job1 on offer0 (3 h x $1) = $5.
    p = small([[2, 1], [3, 1]], [1, 4], deadline=[9, 9], budget=4.0)
    plan = min_makespan.solve(p)
    assert not plan.feasible
    assert plan.reasons == ["budget: the cheapest placement that meets every deadline and "
                            "quota costs $5.00, $1.00 more than the budget of $4.00"]
    assert diagnose(p) == plan.reasons


def test_makespan_spends_the_budget_to_go_faster() -> None:
    p = small([[2, 1], [3, 1]], [1, 4], deadline=[9, 9], budget=9.0)
    plan = min_makespan.solve(p)
    # $9 buys one job on the fast offer (4 $) and the other on the slow one: makespan 2 h
    # (job1 fast: 4 + job0 slow: 2 = $6, makespan 2; both fast = $8, makespan 1).
    assert plan.feasible and plan.makespan_hours == pytest.approx(1.0)
    p.budget_usd = 6.0
    assert min_makespan.solve(p).makespan_hours == pytest.approx(2.0)


@pytest.mark.parametrize("solver", ["ECOS", "SCS"])
def test_other_solvers_reach_the_same_cost(solver: str) -> None:
    rng = np.random.default_rng(3)
    p = random_problem(rng, 30, 10, capacity=8.0)
    reference = min_cost.solve(p)
    assert reference.feasible
    other = min_cost.solve(p, solver=solver)
    assert other.feasible
    assert other.total_cost == pytest.approx(reference.total_cost, rel=1e-3)

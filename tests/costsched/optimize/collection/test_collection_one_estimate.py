"""A job on an offering has one estimate: a collection's hours and cost of each job (its
table, its JSON) are the ones its ranking shows, its first start and its expected
preemptions counted, a gang's N instances priced N times; so its choices, its own budget
and its deadline are held to the figures the ranking holds them to."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from costsched.jobspec import parse, resolve
from costsched.optimize.collection import plan_collection_shared
from costsched.optimize.collection.build import plan_collection
from costsched.optimize.planner import plan_jobs, prepare
from costsched.prices import prices_at
from costsched.throughput import ThroughputTable

AT = datetime(2020, 3, 1, tzinfo=timezone.utc)


def _sweep(n: int = 3, nodes: int = 1, **constraints: object) -> list:
    """`n` jobs of one file: 2,000 steps at 20 steps/s given on a K80, V100 and T4."""
    return [resolve(parse({"name": f"lr-{i}", "run": "true", "num_nodes": nodes,
                           "throughputs": {"K80": 20.0, "V100": 60.0, "T4": 30.0},
                           "steps": 2_000, "constraints": constraints}),
                    ThroughputTable(), AT, source="sweep.yaml") for i in range(1, n + 1)]


@pytest.fixture(scope="module")
def offerings(recorded_store):  # noqa: ANN001, ANN201
    return prepare(prices_at(recorded_store, AT))


def _ranked(jobs: list, offerings):  # noqa: ANN001, ANN202
    """Each job's ranking, by offering: (expected hours, expected cost)."""
    return {p.job.name: {r.offering: (r.expected_hours, r.expected_cost)
                         for r in p.ranked.itertuples()}
            for p in plan_jobs(jobs, offerings)}


@pytest.mark.parametrize("nodes", [1, 2])
@pytest.mark.parametrize("objective", ["cost", "time", "throughput-per-dollar"])
def test_each_job_reads_as_its_ranking(offerings, objective: str, nodes: int) -> None:  # noqa: ANN001
    jobs = _sweep(nodes=nodes, markets=["spot"])
    assert jobs[0].start_hours > 0.2  # a start that matters beside 0.03 h of work
    ranked = _ranked(jobs, offerings)
    plan = plan_collection(jobs, offerings, objective)
    assert plan.feasible and len(plan.assignment) == 3
    for row in plan.assignment.itertuples():
        hours, cost = ranked[row.job][row.offering]
        assert row.hours == pytest.approx(hours, rel=1e-9)
        assert row.cost == pytest.approx(cost, rel=1e-9)
    assert plan.total_cost == pytest.approx(plan.assignment["cost"].sum())
    if objective == "cost":  # each job alone on its ranking's first choice
        first = plan_jobs(jobs, offerings)[0].best
        assert set(plan.assignment["offering"]) == {first["offering"]}
        assert plan.total_cost == pytest.approx(3 * first["expected_cost"], rel=1e-9)


def test_a_whole_instance_on_shared_instances_reads_as_its_ranking(offerings) -> None:  # noqa: ANN001
    jobs = _sweep(markets=["spot"], gpu_counts=[1])  # one GPU each: no slot to share
    ranked = _ranked(jobs, offerings)
    plan = plan_collection_shared(jobs, offerings, "cost")
    assert plan.feasible
    for row in plan.assignment.itertuples():
        hours, cost = ranked[row.job][row.offering]
        assert (row.hours, row.cost) == (pytest.approx(hours), pytest.approx(cost))


def test_a_budget_the_start_passes_is_over_in_both(offerings) -> None:  # noqa: ANN001
    """A job's own budget that its work fits but its work and first start do not: no
    offering in its ranking, none in the collection."""
    ranking = plan_jobs(_sweep(1, markets=["spot"]), offerings)[0]
    best = ranking.best
    work_cost = best["expected_cost"] - best["start_cost"]
    budget = (work_cost + best["expected_cost"]) / 2
    jobs = _sweep(markets=["spot"], budget=budget, instance_types=[best["instance_type"]],
                  regions=[best["region"]])
    assert all(p.best is None for p in plan_jobs(jobs, offerings))
    plan = plan_collection(jobs, offerings, "cost")
    assert not plan.feasible


def test_a_running_job_replanned_pays_no_first_start(offerings) -> None:  # noqa: ANN001
    """The rest of a job that runs already (a backtest's re-plan) pays no start where it
    runs, as the decision model has it: its figures are the work alone (a move's restart
    is charged apart by whoever weighs the move)."""
    from dataclasses import replace

    jobs = _sweep(markets=["spot"])
    new = plan_collection(jobs, offerings, "cost")
    running = plan_collection([replace(j, running=True) for j in jobs], offerings, "cost")
    best = plan_jobs(jobs, offerings)[0].best
    assert set(running.assignment["offering"]) == {best["offering"]}
    assert running.total_cost == pytest.approx(3 * (best["expected_cost"] - best["start_cost"]))
    assert new.total_cost == pytest.approx(3 * best["expected_cost"])

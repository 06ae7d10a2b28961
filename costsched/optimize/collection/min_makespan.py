"""Minimise the makespan (the last job's expected finish) within a total budget."""

from __future__ import annotations

from costsched.optimize.collection.problem import (
    CollectionPlan,
    CollectionProblem,
    Pairs,
    solve_assignment,
)
from costsched.optimize.collection.solver import HIGHS, cp

NAME = "min_makespan"


def build(pairs: Pairs, x: cp.Variable, budget_usd: float | None) -> tuple[cp.Problem, object]:
    hours, cost = pairs.hours, pairs.cost
    makespan = cp.Variable(nonneg=True)
    job_hours = pairs.by_job.multiply(hours[None, :]).tocsr()  # (J, P): each job's hours
    constraints = [*pairs.shared(x), job_hours @ x <= makespan]
    if budget_usd is not None:
        constraints.append(cost @ x <= budget_usd)
    program = cp.Problem(cp.Minimize(makespan), constraints)
    return program, lambda chosen: float((hours * chosen).max(initial=0.0))


def solve(problem: CollectionProblem, solver: str = HIGHS) -> CollectionPlan:
    """A MILP: the budget row breaks total unimodularity, so the LP alone could split jobs."""
    return solve_assignment(
        NAME, problem, lambda pairs, x: build(pairs, x, problem.budget_usd),
        solver=solver, integer=True,
    )

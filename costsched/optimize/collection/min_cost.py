"""Minimise the collection's total expected cost; every job meets its deadline, within quotas."""

from __future__ import annotations

from costsched.lazy import numpy as np
from costsched.optimize.collection.problem import (
    CollectionPlan,
    CollectionProblem,
    Pairs,
    diagnose,
    infeasible,
    solve_assignment,
)
from costsched.optimize.collection.solver import HIGHS, cp

NAME = "min_cost"


def build(pairs: Pairs, x: cp.Variable) -> tuple[cp.Problem, object]:
    cost = pairs.cost
    ranked = cost * pairs.problem.tie_factor[pairs.offering]  # ties by the tie rule
    program = cp.Problem(cp.Minimize(ranked @ x), pairs.shared(x))
    return program, lambda chosen: float(cost @ chosen)


def solve(problem: CollectionProblem, solver: str = HIGHS,
          **solver_opts: object) -> CollectionPlan:
    """An LP: its optimum is a 0/1 assignment (see `problem`). A total budget needs no row
    of its own: the plan fits it or nothing does (`diagnose` says by how much)."""
    plan = solve_assignment(NAME, problem, build, solver=solver, **solver_opts)
    over = problem.budget_usd is not None and plan.total_cost > problem.budget_usd * (1 + 1e-9)
    if plan.feasible and over:
        return infeasible(NAME, diagnose(problem, solver), solver, plan.solve_seconds)
    return plan


def total(problem: CollectionProblem, offering_of_job: np.ndarray) -> float:
    """The objective of a given assignment (for checks)."""
    return float(problem.cost[np.arange(len(offering_of_job)), offering_of_job].sum())

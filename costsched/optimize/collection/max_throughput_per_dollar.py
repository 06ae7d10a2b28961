"""Maximise total throughput per dollar (Gavel's sum over jobs of T[j,o] / c_o X[j,o]),
every job meeting its deadline (its SLO), within quotas.

Throughputs are normalised per job by the job's best throughput on any usable offering, so
that a fast-stepping model (LM: hundreds of steps/s) does not outweigh a slow one.
"""

from __future__ import annotations

from costsched.lazy import numpy as np
from costsched.optimize.collection.problem import (
    CollectionPlan,
    CollectionProblem,
    Pairs,
    solve_assignment,
)
from costsched.optimize.collection.solver import HIGHS, cp

NAME = "max_throughput_per_dollar"


def value_per_pair(pairs: Pairs) -> np.ndarray:
    p = pairs.problem
    sps = p.steps_per_second[pairs.job, pairs.offering]
    best = np.zeros(len(p.jobs))
    np.maximum.at(best, pairs.job, sps)
    return sps / best[pairs.job] / p.usd_per_hour[pairs.offering]


def build(pairs: Pairs, x: cp.Variable) -> tuple[cp.Problem, object]:
    value = value_per_pair(pairs)
    constraints = pairs.shared(x)
    budget = pairs.problem.budget_usd
    if budget is not None:
        constraints.append(pairs.cost @ x <= budget)
    program = cp.Problem(cp.Maximize(value @ x), constraints)
    return program, lambda chosen: float(value @ chosen)


def solve(problem: CollectionProblem, solver: str = HIGHS,
          **solver_opts: object) -> CollectionPlan:
    """An LP whose optimum is a 0/1 assignment (see `problem`); with a total budget, whose
    row breaks that property, a MILP."""
    return solve_assignment(NAME, problem, build, solver=solver,
                            integer=problem.budget_usd is not None, **solver_opts)

"""A collection of jobs (a sweep) to place at once, the constraints every policy shares,
and the diagnosis of infeasible inputs.

Decision: x[p] for each usable (job, offering) pair p = 1 if the job runs on one instance of
that offering from now until it finishes. Shared constraints (Gavel's base class, here one
function): every job is placed exactly once, and at most `capacity[g]` instances run in
each quota group g (an instance type in a region, over its zones and markets). A pair is
usable if the job's constraints allow the offering, it has a throughput, and the expected
hours meet the job's deadline (the per-job SLO). Expected hours and cost are the job's
ranking's (`build.expected`): its first start and its expected preemptions counted.

Those constraints form the incidence matrix of a bipartite (job, quota group) multigraph,
which is totally unimodular: with a linear objective the LP's vertices are 0/1 assignments,
so an LP solver gives the integer optimum. `solve_assignment` checks that and falls back to
a MILP when a solver returns a non-vertex optimum (ties under an interior-point method).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from costsched.amounts import usd_all
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.lazy import scipy_sparse as sp
from costsched.optimize.collection.solver import HIGHS, cp, solve_quietly
from costsched.optimize.unmatched import deadline_missed

_TOL = 1e-6
# Ties between offerings of equal cost go by the tie rule (`optimize.rank.tie_order`: fewer
# GPUs, then the on-demand reference price, then the key). A program has no such order, so
# its cost coefficients are scaled by 1 + TIE_WEIGHT x (GPUs - 1 + position / offerings):
# costs within a few millionths count as equal, and the rule decides.
TIE_WEIGHT = 1e-6
# (mark, words) of figures computed from placed pairs (job, offering, on one GPU of it):
# `unmatched_estimates.estimates_said` of the jobs' rows, ('', '') on given speeds.
Said = Callable[[Sequence[tuple[int, int, bool]]], tuple[str, str]]


def tie_weights(offerings: pd.DataFrame) -> np.ndarray:
    """(O,) the factor on each offering's cost coefficients that breaks ties by the rule."""
    from costsched.optimize.rank import tie_order  # rank is a sibling the planner imports

    n = max(len(offerings), 1)
    gpus = offerings["gpu_count"].to_numpy(dtype=float)
    return 1.0 + TIE_WEIGHT * (gpus - 1 + tie_order(offerings) / n)


@dataclass
class CollectionProblem:
    """J jobs x O offerings. hours/cost: expected, as the job's ranking has them (its first
    start counted), NaN where the job cannot run there."""

    jobs: list[str]
    offerings: list[str]  # labels, for messages and plans
    hours: np.ndarray  # (J, O)
    cost: np.ndarray  # (J, O)
    steps_per_second: np.ndarray  # (J, O)
    usd_per_hour: np.ndarray  # (O,)
    group: np.ndarray  # (O,) quota group of each offering
    capacity: np.ndarray  # (G,) instances at most at once (inf = no quota)
    group_names: list[str]
    deadline_hours: np.ndarray  # (J,) inf = none
    allowed: np.ndarray  # (J, O) the job's constraints permit the offering
    budget_usd: float | None = None  # for the whole collection
    tie: np.ndarray | None = None  # (O,) `tie_weights`; None: ties go any way
    # (J,) each job's first start (`planner.start_hours`), counted in `hours` and `cost`:
    # kept to say a refusal's hours to run and to start apart
    start_hours: np.ndarray | None = None
    # What a refusal's figures rest on (`Said`); None: on given speeds
    said: Said | None = None

    def __post_init__(self) -> None:
        self.hours = np.asarray(self.hours, dtype=float)
        self.cost = np.asarray(self.cost, dtype=float)
        j, o = self.hours.shape
        assert self.cost.shape == (j, o) and self.allowed.shape == (j, o)
        assert len(self.jobs) == j and len(self.offerings) == o
        assert len(self.group) == o and len(self.capacity) == len(self.group_names)

    @property
    def tie_factor(self) -> np.ndarray:
        """(O,) the factor on cost coefficients that breaks ties (ones without `tie`)."""
        return np.ones(len(self.offerings)) if self.tie is None else self.tie

    def estimate(self, pairs: Sequence[tuple[int, int, bool]]) -> tuple[str, str]:
        """(mark, words) of a refusal's figures of the placed `pairs` (`Said`)."""
        return ("", "") if self.said is None or not pairs else self.said(pairs)

    @property
    def starts(self) -> np.ndarray:
        """(J,) `start_hours` (zeros without it)."""
        return (np.zeros(len(self.jobs)) if self.start_hours is None
                else np.asarray(self.start_hours, dtype=float))

    def within_deadline(self, hours: np.ndarray) -> np.ndarray:
        """(J, O) whether `hours` (J, O; each job's start counted in them) fit in its
        deadline."""
        return hours <= self.deadline_hours[:, None] * (1 + 1e-12)

    @property
    def usable(self) -> np.ndarray:
        """(J, O): allowed, with a finite expected time, within the job's deadline."""
        return (self.allowed & np.isfinite(self.hours) & np.isfinite(self.cost)
                & self.within_deadline(self.hours))

    def pairs(self) -> Pairs:
        jobs, offers = np.nonzero(self.usable)
        return Pairs(self, jobs, offers)


@dataclass
class Pairs:
    """The usable pairs as flat vectors, with the sparse matrices of the shared constraints."""

    problem: CollectionProblem
    job: np.ndarray
    offering: np.ndarray
    by_job: sp.csr_matrix = field(init=False)  # (J, P): row j sums job j's pairs
    by_group: sp.csr_matrix = field(init=False)  # (G', P): rows of quota-limited groups
    group_capacity: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        p = self.problem
        n = len(self.job)
        ones = np.ones(n)
        cols = np.arange(n)
        self.by_job = sp.csr_matrix((ones, (self.job, cols)), shape=(len(p.jobs), n))
        limited = np.flatnonzero(np.isfinite(p.capacity))
        row_of = np.full(len(p.capacity), -1)
        row_of[limited] = np.arange(len(limited))
        rows = row_of[p.group[self.offering]]
        keep = rows >= 0
        self.by_group = sp.csr_matrix((ones[keep], (rows[keep], cols[keep])),
                                      shape=(len(limited), n))
        self.group_capacity = p.capacity[limited]

    @property
    def hours(self) -> np.ndarray:
        return self.problem.hours[self.job, self.offering]

    @property
    def cost(self) -> np.ndarray:
        return self.problem.cost[self.job, self.offering]

    def shared(self, x: cp.Variable, place_all: bool = True) -> list[cp.Constraint]:
        """Each job placed exactly once (or at most once), and the quotas."""
        placed = self.by_job @ x == 1 if place_all else self.by_job @ x <= 1
        out = [placed]
        if self.by_group.shape[0]:
            out.append(self.by_group @ x <= self.group_capacity)
        return out


@dataclass
class CollectionPlan:
    """The outcome: an offering per job (or the reasons there is none)."""

    policy: str
    status: str  # optimal | infeasible
    reasons: list[str]
    assignment: pd.DataFrame  # job, offering, offering_index, hours, cost, steps_per_second
    objective: float
    total_cost: float
    makespan_hours: float
    solver: str
    solve_seconds: float
    integral_lp: bool  # the LP's own solution was 0/1 (no MILP fallback needed)
    # Shared-instance plans (`packing`): one row per instance rented, with its jobs.
    instances: pd.DataFrame | None = None

    @property
    def feasible(self) -> bool:
        return self.status == "optimal"


def diagnose(problem: CollectionProblem, solver: str = HIGHS) -> list[str]:
    """Why no placement meets the constraints: each job that has no usable offering (with
    the binding constraint), else the quotas, else the budget with the amount missing."""
    reasons = [r for j in range(len(problem.jobs)) if (r := _job_reason(problem, j))]
    if reasons:
        return reasons
    pairs = problem.pairs()
    x = unit_variable(len(pairs.job))
    fit = cp.Problem(cp.Maximize(cp.sum(x)), pairs.shared(x, place_all=False))
    solve_quietly(fit, solver=solver)
    placed = int(round(fit.value or 0))
    if placed < len(problem.jobs):
        left = np.flatnonzero(pairs.by_job @ np.round(x.value) < 0.5)
        names = ", ".join(problem.jobs[j] for j in left[:5]) + (", ..." if len(left) > 5 else "")
        quotas = ", ".join(f"{problem.group_names[g]} <= {int(problem.capacity[g])}"
                           for g in np.unique(problem.group[pairs.offering])
                           if np.isfinite(problem.capacity[g]))
        return [f"quotas: at most {placed} of {len(problem.jobs)} jobs fit on the offerings "
                f"that meet their deadlines ({quotas}); left out, e.g.: {names}"]
    if problem.budget_usd is not None:
        cheapest, placed = _cheapest(pairs, solver)
        if cheapest > problem.budget_usd * (1 + 1e-9):
            return [over_budget(problem, "", cheapest, placed)]
    return []


def over_budget(problem: CollectionProblem, where: str, cheapest: float,
                placed: Sequence[tuple[int, int, bool]]) -> str:
    """The budget's refusal: the cheapest placement (`where`: ' on shared instances', or
    '') of the `placed` pairs costs `cheapest`, marked where it rests on an estimated speed
    (`CollectionProblem.estimate`), as a job's own budget's refusal is."""
    budget = float(problem.budget_usd or 0.0)
    cost, over, cap = usd_all(cheapest, cheapest - budget, budget)
    mark, said = problem.estimate(placed)
    return (f"budget: the cheapest placement{where} that {meets(problem.deadline_hours)} "
            f"costs {cost}{mark}, {over}{mark} more than the budget of {cap}{said}")


def meets(deadline_hours: np.ndarray) -> str:
    """What a placement of the jobs must meet: 'meets every deadline and quota', or
    'meets every quota' when no job has a deadline (none is named that does not exist)."""
    return ("meets every deadline and quota" if np.isfinite(deadline_hours).any()
            else "meets every quota")


def _job_reason(problem: CollectionProblem, j: int) -> str:
    name = problem.jobs[j]
    allowed = problem.allowed[j]
    if not allowed.any():
        return f"job {name}: no offering matches its constraints"
    hours = np.where(allowed & np.isfinite(problem.hours[j]), problem.hours[j], np.inf)
    if not np.isfinite(hours).any():
        return f"job {name}: no throughput on any allowed offering"
    fastest = int(np.argmin(hours))
    deadline, start = problem.deadline_hours[j], float(problem.starts[j])
    if hours[fastest] > deadline * (1 + 1e-12):  # (its start counted in them)
        return deadline_missed(name, float(deadline), str(problem.offerings[fastest]),
                               float(hours[fastest]) - start, start,
                               problem.estimate([(j, fastest, False)]))
    return ""


def _cheapest(pairs: Pairs, solver: str) -> tuple[float, list[tuple[int, int, bool]]]:
    """The least cost of a placement of every job, and its pairs (none when there is none)."""
    x = unit_variable(len(pairs.job))
    lp = cp.Problem(cp.Minimize(pairs.cost @ x), pairs.shared(x))
    solve_quietly(lp, solver=solver)
    if lp.status != cp.OPTIMAL:
        return np.inf, []
    chosen = np.flatnonzero(_round(pairs, np.asarray(x.value)) > 0.5)
    return float(lp.value), [(int(pairs.job[q]), int(pairs.offering[q]), False)
                             for q in chosen]


def unit_variable(n: int) -> cp.Variable:
    """x in [0, 1]^n as variable bounds: HiGHS gets column bounds instead of n extra rows
    (4-5x faster on 200k pairs)."""
    return cp.Variable(n, bounds=[0, 1])


Build = Callable[[Pairs, "cp.Variable"], tuple["cp.Problem", Callable[["np.ndarray"], float]]]


def solve_assignment(policy: str, problem: CollectionProblem, build: Build,
                     solver: str = HIGHS, integer: bool = False,
                     **solver_opts: object) -> CollectionPlan:
    """Solve a policy's program over the usable pairs and read off the assignment.

    `build(pairs, x)` returns the cvxpy problem and a function giving the objective of a
    0/1 vector (to check the rounded LP solution against the LP's optimum).
    """
    started = time.perf_counter()
    reasons = [r for j in range(len(problem.jobs)) if (r := _job_reason(problem, j))]
    if reasons:
        return infeasible(policy, reasons, solver, time.perf_counter() - started)
    pairs = problem.pairs()
    x = cp.Variable(len(pairs.job), boolean=True) if integer else unit_variable(len(pairs.job))
    program, value_of = build(pairs, x)
    solve_quietly(program, solver=solver, **solver_opts)
    if program.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        reasons = diagnose(problem) or [f"solver status {program.status}"]
        return infeasible(policy, reasons, solver, time.perf_counter() - started)
    chosen = _round(pairs, np.asarray(x.value))
    integral = bool(np.all(np.abs(x.value - chosen) < 1e-4))
    lp_value = float(program.value)
    if not integer and not _matches(pairs, chosen, value_of, lp_value):
        # A non-vertex optimum (ties under an interior-point method): solve the MILP.
        x_int = cp.Variable(len(pairs.job), boolean=True)
        program, value_of = build(pairs, x_int)
        solve_quietly(program, solver=cp.HIGHS)
        chosen = _round(pairs, np.asarray(x_int.value))
        lp_value = float(program.value)
    return _plan(policy, problem, pairs, chosen, value_of(chosen), solver, started,
                 integral and not integer)


def _round(pairs: Pairs, x: np.ndarray) -> np.ndarray:
    """The 0/1 vector placing each job on its largest pair."""
    out = np.zeros(len(pairs.job))
    order = np.lexsort((-x, pairs.job))  # by job, largest x first
    first = np.ones(len(order), dtype=bool)
    first[1:] = pairs.job[order][1:] != pairs.job[order][:-1]
    out[order[first]] = 1.0
    return out


def _matches(pairs: Pairs, chosen: np.ndarray, value_of: Callable[[np.ndarray], float],
             lp_value: float) -> bool:
    fits = (not pairs.by_group.shape[0]
            or bool(np.all(pairs.by_group @ chosen <= pairs.group_capacity + _TOL)))
    return fits and abs(value_of(chosen) - lp_value) <= 1e-6 * max(1.0, abs(lp_value))


def _plan(policy: str, problem: CollectionProblem, pairs: Pairs, chosen: np.ndarray,
          objective: float, solver: str, started: float, integral: bool) -> CollectionPlan:
    picked = np.flatnonzero(chosen > 0.5)
    jobs, offers = pairs.job[picked], pairs.offering[picked]
    order = np.argsort(jobs)
    jobs, offers = jobs[order], offers[order]
    assignment = pd.DataFrame({
        "job": [problem.jobs[j] for j in jobs],
        "offering": [problem.offerings[o] for o in offers],
        "offering_index": offers,
        "hours": problem.hours[jobs, offers],
        "cost": problem.cost[jobs, offers],
        "steps_per_second": problem.steps_per_second[jobs, offers],
    })
    return CollectionPlan(
        policy=policy, status="optimal", reasons=[], assignment=assignment,
        objective=objective, total_cost=float(assignment["cost"].sum()),
        makespan_hours=float(assignment["hours"].max()) if len(assignment) else 0.0,
        solver=solver, solve_seconds=time.perf_counter() - started, integral_lp=integral,
    )


def infeasible(policy: str, reasons: list[str], solver: str, seconds: float) -> CollectionPlan:
    empty = pd.DataFrame(columns=["job", "offering", "offering_index", "hours", "cost",
                                  "steps_per_second"])
    return CollectionPlan(policy=policy, status="infeasible", reasons=reasons,
                          assignment=empty, objective=np.nan, total_cost=np.nan,
                          makespan_hours=np.nan, solver=solver,
                          solve_seconds=seconds, integral_lp=False)

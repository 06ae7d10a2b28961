"""Shared instances: the single-GPU jobs of a sweep packed onto multi-GPU instances, an
integer program solved with cvxpy and HiGHS.

A job may run alone on a whole instance (the pairs of `CollectionProblem`, at the
throughput of all its GPUs), or, if it may run on one GPU, take one GPU of a multi-GPU
instance at one GPU's throughput. Decisions:

- x[p] in {0, 1}: job j runs alone on an instance of offering o (a whole pair (j, o));
- open[b] in {0, 1}: instance b is rented (the k-th instance of an offering);
- y[q] in {0, 1}: job j takes one GPU of instance b (a slot pair (j, b));
- hours[b] >= 0: how long instance b is rented: until its last job is expected to finish.

Every job is placed once; an instance holds at most its GPU count of jobs; instances count
against their quota group as whole pairs do; a pair is usable only within the job's
deadline. Cost: the whole pairs' expected cost plus each instance's price x hours. A spot
preemption stops every job of an instance and each restarts from its own checkpoint, so a
job's expected hours on a GPU of it come from the instance's preemption rate; the instance's
hours are the longest of its jobs' (an approximation of the expected maximum).

Instances of a cheaper offering that no job can tell apart from a dearer one (same quota
group, GPU count, expected hours and permissions) dominate it: only the cheapest of such a
class gets instances, unless the dearer one is cheaper for some job to stay on (`slot_extra`).

Two families of rows change no plan's cost but shrink HiGHS's search about tenfold: an
instance's GPUs over its hours cover its jobs' GPU-hours (a tighter relaxation), and an
offering's instances are opened in order, the longest-rented first (no interchangeable twins).
The solve is exact (no relative or absolute gap).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.lazy import scipy_sparse as sp
from costsched.model import InvalidInput
from costsched.optimize.collection.problem import (
    CollectionPlan,
    CollectionProblem,
    Pairs,
    infeasible,
    over_budget,
)
from costsched.optimize.collection.problem import _job_reason as job_reason
from costsched.optimize.collection.solver import cp, solve_quietly
from costsched.optimize.unmatched import deadline_missed

if TYPE_CHECKING:
    from costsched.optimize.job import Workload

NAME = "shared_instances"
OBJECTIVES = ("cost", "time")
# HiGHS stops at a relative gap of 1e-4 unless told otherwise: prove the least cost.
EXACT = {"mip_rel_gap": 0.0, "mip_abs_gap": 0.0}
INSTANCE_COLUMNS = ["instance", "offering", "offering_index", "gpu_count", "jobs",
                    "gpus_used", "gpus_idle", "hours", "cost"]


@dataclass
class PackingProblem:
    """A `CollectionProblem` (the whole-instance pairs) with the GPU slots of multi-GPU
    offerings. Matrices are (jobs, offerings)."""

    base: CollectionProblem
    gpus: np.ndarray  # (O,) GPUs per instance
    slot_hours: np.ndarray  # expected hours of the job on one GPU of the offering; NaN = none
    slot_steps_per_second: np.ndarray
    slot_allowed: np.ndarray  # the job may take one GPU of the offering
    whole_extra: np.ndarray | None = None  # USD added to a whole pair (e.g. a move's cost)
    slot_extra: np.ndarray | None = None  # USD added to a slot pair

    def __post_init__(self) -> None:
        shape = self.base.hours.shape
        self.gpus = np.asarray(self.gpus, dtype=int)
        self.slot_hours = np.asarray(self.slot_hours, dtype=float)
        zeros = np.zeros(shape)
        self.whole_extra = zeros if self.whole_extra is None else np.asarray(self.whole_extra)
        self.slot_extra = zeros if self.slot_extra is None else np.asarray(self.slot_extra)
        assert self.slot_hours.shape == shape and self.slot_allowed.shape == shape
        assert self.whole_extra.shape == shape and self.slot_extra.shape == shape

    @property
    def slot_usable(self) -> np.ndarray:
        p = self.base
        return (self.slot_allowed & (self.gpus[None, :] > 1) & np.isfinite(self.slot_hours)
                & p.within_deadline(self.slot_hours))


@dataclass
class Slots:
    """The instances that may be rented and the usable (job, instance) pairs, with the
    sparse matrices of their constraints."""

    offering: np.ndarray  # (B,) offering of each instance
    first: np.ndarray  # (B,) the instance is the first of its offering
    job: np.ndarray  # (Q,) per slot pair
    bin: np.ndarray  # (Q,) per slot pair
    hours: np.ndarray  # (Q,)
    extra: np.ndarray  # (Q,)

    @classmethod
    def of(cls, pp: PackingProblem) -> Slots:
        p = pp.base
        usable = pp.slot_usable & _undominated(pp)[None, :]
        wanted = np.ceil(usable.sum(axis=0) / np.maximum(pp.gpus, 1))
        count = np.minimum(wanted, p.capacity[p.group]).astype(int)
        offering = np.repeat(np.arange(len(count)), count)
        first = np.r_[True, offering[1:] != offering[:-1]] if len(offering) else offering
        bins_job = [(j, b) for b, o in enumerate(offering) for j in np.flatnonzero(usable[:, o])]
        job, bin_ = (np.array(a, dtype=int) for a in zip(*bins_job, strict=True)) \
            if bins_job else (np.zeros(0, int), np.zeros(0, int))
        o = offering[bin_]
        return cls(offering, np.asarray(first, dtype=bool), job, bin_,
                   pp.slot_hours[job, o], pp.slot_extra[job, o])


def _undominated(pp: PackingProblem) -> np.ndarray:
    """(O,): the offerings whose instances a plan may need (see the module's note)."""
    p = pp.base
    usable = pp.slot_usable
    keep = np.zeros(len(pp.gpus), dtype=bool)
    classes: dict[tuple, int] = {}
    for o in np.argsort(p.usd_per_hour, kind="stable"):
        if not usable[:, o].any():
            continue
        key = (int(p.group[o]), int(pp.gpus[o]), np.nan_to_num(pp.slot_hours[:, o]).tobytes(),
               usable[:, o].tobytes())
        rep = classes.setdefault(key, int(o))
        keep[o] = rep == o or bool(np.any(pp.slot_extra[usable[:, o], o]
                                          < pp.slot_extra[usable[:, o], rep]))
    return keep


def packing_problem(jobs: Sequence[Workload], offerings: pd.DataFrame,
                    quota: int | Mapping[str, int] | None = None,
                    budget_usd: float | None = None) -> PackingProblem:
    """The collection's matrices (`build.collection_problem`) with one GPU's throughput and
    expected hours on every multi-GPU offering. A job may take one GPU if its `gpu_counts`
    allow 1 (or are not given); its `max_price` and budget then apply to its share of the
    instance's price (price / GPUs)."""
    from costsched.optimize import rank
    from costsched.optimize.collection.build import collection_problem  # it imports this
    from costsched.optimize.decision import outcomes

    base = collection_problem(jobs, offerings, quota, budget_usd)
    gpus = offerings["gpu_count"].to_numpy(dtype=int)
    share = base.usd_per_hour / gpus
    one_gpu = offerings.assign(gpu_count=1, usd_per_hour=share)
    sps = _one_gpu_rates(jobs, offerings["gpu_model"])
    out = outcomes(np.array([j.job.steps for j in jobs])[:, None], sps, share,
                   offerings["preemptions_per_hour"].to_numpy(dtype=float),
                   np.array([j.checkpoint_hours for j in jobs])[:, None],
                   np.array([j.restart_hours for j in jobs])[:, None],
                   base.starts[:, None])  # the instance's first start, as a whole pair's
    allowed = np.vstack([(rank.allowed_offerings(one_gpu, j.job.constraints) == "").to_numpy()
                         for j in jobs])
    budgets = np.array([j.job.constraints.budget_usd or np.inf for j in jobs])
    allowed &= out.cost <= budgets[:, None]
    return PackingProblem(base, gpus, out.hours, sps, allowed)


def _one_gpu_rates(jobs: Sequence[Workload], gpu_models: pd.Series) -> np.ndarray:
    """(J, O): each job's steps/s on one GPU of each offering, one lookup per model (a
    sweep's jobs share theirs)."""
    ones = np.ones(len(gpu_models))
    rates: dict[tuple[int, str], np.ndarray] = {}
    for j in jobs:
        key = (id(j.table), j.job.model)
        if key not in rates:
            rates[key] = j.table.lookup(j.job.model, gpu_models, ones)[0]
    return np.vstack([rates[(id(j.table), j.job.model)] for j in jobs])


def plan_collection_shared(jobs: Sequence[Workload], offerings: pd.DataFrame,
                           objective: str = "cost",
                           quota: int | Mapping[str, int] | None = None,
                           budget_usd: float | None = None) -> CollectionPlan:
    """`build.plan_collection` with shared instances: jobs that may run on one GPU can
    share multi-GPU instances. `cost`: the least total cost with every deadline met (and
    within `budget_usd`); `time`: the least makespan within `budget_usd`. The plan's
    `instances` says which jobs share which instance."""
    if objective not in OBJECTIVES:
        raise InvalidInput(f"objective {objective!r} for a collection on shared instances: "
                           f"expected one of {', '.join(OBJECTIVES)}")
    return solve(packing_problem(jobs, offerings, quota, budget_usd), objective)


def solve(pp: PackingProblem, objective: str = "cost", **solver_opts: object) -> CollectionPlan:
    """The least-cost (or least-makespan) packing; an infeasible plan names the reason."""
    started = time.perf_counter()
    p = pp.base
    whole, slots = p.pairs(), Slots.of(pp)
    stuck = [j for j in range(len(p.jobs))
             if not (np.isin(j, whole.job) or np.isin(j, slots.job))]
    if stuck:
        reasons = [job_reason(p, j) or _slot_reason(pp, j) for j in stuck]
        return infeasible(NAME, reasons, cp.HIGHS, time.perf_counter() - started)
    program, v = _program(pp, whole, slots, objective, p.budget_usd)
    solve_quietly(program, solver=cp.HIGHS, **(EXACT | solver_opts))
    if program.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        return infeasible(NAME, _diagnose(pp, whole, slots), cp.HIGHS,
                          time.perf_counter() - started)
    value = program.value if v.cost is None else v.cost.value  # type: ignore[attr-defined]
    plan = _plan(pp, whole, slots, v, float(value), started)
    if p.budget_usd is not None and plan.total_cost > p.budget_usd * (1 + 1e-9):
        return infeasible(NAME, _diagnose(pp, whole, slots), cp.HIGHS, plan.solve_seconds)
    return plan


@dataclass
class _Vars:
    x: cp.Variable | None  # whole pairs
    y: cp.Variable | None  # slot pairs
    open: cp.Variable | None  # instances
    hours: cp.Variable | None  # instances
    cost: object = None  # the plan's USD (the objective before ties are broken)


def _program(pp: PackingProblem, whole: Pairs, slots: Slots, objective: str,
             budget_usd: float | None) -> tuple[cp.Problem, _Vars]:
    p = pp.base
    n_jobs, n_bins = len(p.jobs), len(slots.offering)
    x = cp.Variable(len(whole.job), boolean=True) if len(whole.job) else None
    y = cp.Variable(len(slots.job), boolean=True) if len(slots.job) else None
    opened = cp.Variable(n_bins, boolean=True) if n_bins else None
    hours = cp.Variable(n_bins, nonneg=True) if n_bins else None
    placed, cost, ranked, constraints = 0, 0, 0, []
    tie = p.tie_factor  # the cost objective breaks ties by the tie rule
    if x is not None:
        placed = placed + whole.by_job @ x
        whole_usd = whole.cost + pp.whole_extra[whole.job, whole.offering]
        cost = cost + whole_usd @ x
        ranked = ranked + (whole_usd * tie[whole.offering]) @ x
    if y is not None:
        ones = np.ones(len(slots.job))
        by_job = sp.csr_matrix((ones, (slots.job, np.arange(len(ones)))),
                               shape=(n_jobs, len(ones)))
        by_bin = sp.csr_matrix((ones, (slots.bin, np.arange(len(ones)))),
                               shape=(n_bins, len(ones)))
        placed = placed + by_job @ y
        cost = cost + p.usd_per_hour[slots.offering] @ hours + slots.extra @ y
        ranked = (ranked + (p.usd_per_hour * tie)[slots.offering] @ hours
                  + (slots.extra * tie[slots.offering[slots.bin]]) @ y)
        constraints += [
            by_bin @ y <= cp.multiply(pp.gpus[slots.offering], opened),  # GPUs per instance
            hours[slots.bin] >= cp.multiply(slots.hours, y),  # rented until its last job ends
            # Its GPUs for its hours cover its jobs' GPU-hours: implied by the rows above
            # for whole decisions, it tightens the relaxation where a job is split.
            cp.multiply(pp.gpus[slots.offering], hours) >= by_bin @ cp.multiply(slots.hours, y),
        ]
        later = np.flatnonzero(~slots.first)
        if len(later):  # an offering's instances open in order, longest first (no twins)
            constraints += [opened[later] <= opened[later - 1],
                            hours[later] <= hours[later - 1]]
    constraints.append(placed == 1)
    limited = np.flatnonzero(np.isfinite(p.capacity))
    if len(limited):
        row_of = np.full(len(p.capacity), -1)
        row_of[limited] = np.arange(len(limited))
        used = 0
        if x is not None:
            used = used + whole.by_group @ x
        if opened is not None:
            rows = row_of[p.group[slots.offering]]
            keep = np.flatnonzero(rows >= 0)
            by_group = sp.csr_matrix((np.ones(len(keep)), (rows[keep], keep)),
                                     shape=(len(limited), n_bins))
            used = used + by_group @ opened
        constraints.append(used <= p.capacity[limited])
    if objective == "time":
        makespan = cp.Variable(nonneg=True)
        if x is not None:
            constraints.append(cp.multiply(whole.hours, x) <= makespan)
        if hours is not None:
            constraints.append(hours <= makespan)
        if budget_usd is not None:
            constraints.append(cost <= budget_usd)
        return cp.Problem(cp.Minimize(makespan), constraints), _Vars(x, y, opened, hours)
    return cp.Problem(cp.Minimize(ranked), constraints), _Vars(x, y, opened, hours, cost)


def _plan(pp: PackingProblem, whole: Pairs, slots: Slots, v: _Vars,
          objective: float, started: float) -> CollectionPlan:
    p = pp.base
    jobs, instances = [], []
    if v.x is not None:
        for q in np.flatnonzero(v.x.value > 0.5):
            j, o = int(whole.job[q]), int(whole.offering[q])
            name = f"i{len(instances) + 1}"
            jobs.append((j, o, p.hours[j, o], p.cost[j, o], p.steps_per_second[j, o], name,
                         int(pp.gpus[o])))
            instances.append((name, p.offerings[o], o, int(pp.gpus[o]), p.jobs[j],
                              int(pp.gpus[o]), 0, p.hours[j, o], p.cost[j, o]))
    if v.y is not None:
        chosen = v.y.value > 0.5
        for b in np.unique(slots.bin[chosen]):
            on = np.flatnonzero(chosen & (slots.bin == b))
            o = int(slots.offering[b])
            hours = slots.hours[on]
            usd = float(p.usd_per_hour[o] * hours.max())
            name = f"i{len(instances) + 1}"
            for q, h in zip(on, hours, strict=True):
                j = int(slots.job[q])
                # The instance's cost shared by its jobs' GPU-hours (idle GPUs included).
                jobs.append((j, o, h, usd * h / hours.sum(), pp.slot_steps_per_second[j, o],
                             name, 1))
            names = ", ".join(p.jobs[int(slots.job[q])] for q in on)
            instances.append((name, p.offerings[o], o, int(pp.gpus[o]), names, len(on),
                              int(pp.gpus[o]) - len(on), float(hours.max()), usd))
    frame = pd.DataFrame(jobs, columns=["j", "offering_index", "hours", "cost",
                                        "steps_per_second", "instance", "gpus"])
    frame = frame.sort_values("j", kind="stable")
    assignment = pd.DataFrame({
        "job": [p.jobs[j] for j in frame["j"]],
        "offering": [p.offerings[o] for o in frame["offering_index"]],
        "offering_index": frame["offering_index"].to_numpy(),
        "hours": frame["hours"].to_numpy(dtype=float),
        "cost": frame["cost"].to_numpy(dtype=float),
        "steps_per_second": frame["steps_per_second"].to_numpy(dtype=float),
        "instance": frame["instance"].to_numpy(),
        "gpus": frame["gpus"].to_numpy(),
    })
    table = pd.DataFrame(instances, columns=INSTANCE_COLUMNS)
    return CollectionPlan(
        policy=NAME, status="optimal", reasons=[], assignment=assignment, objective=objective,
        total_cost=float(table["cost"].sum()),
        makespan_hours=float(assignment["hours"].max()) if len(assignment) else 0.0,
        solver=cp.HIGHS, solve_seconds=time.perf_counter() - started, integral_lp=False,
        instances=table,
    )


def _slot_reason(pp: PackingProblem, j: int) -> str:
    """Why job j has no GPU of any instance within its deadline (whole pairs are fine)."""
    name, p = pp.base.jobs[j], pp.base
    hours = np.where(pp.slot_allowed[j] & (pp.gpus > 1), pp.slot_hours[j], np.nan)
    whole = np.where(p.allowed[j], p.hours[j], np.nan)
    both = np.fmin(hours, whole)
    if np.isnan(both).all():
        return f"job {name}: no offering matches its constraints"
    fastest = int(np.nanargmin(both))
    one_gpu = not whole[fastest] <= hours[fastest]  # (NaN: not on the whole instance)
    return deadline_missed(name, float(p.deadline_hours[j]), str(p.offerings[fastest]),
                           float(both[fastest] - p.starts[j]), float(p.starts[j]),
                           p.estimate([(j, fastest, one_gpu)]))


def _diagnose(pp: PackingProblem, whole: Pairs, slots: Slots) -> list[str]:
    """Every job has a usable pair, so the quotas or the budget stand in the way."""
    p = pp.base
    if p.budget_usd is not None:
        free = PackingProblem(_without_budget(p), pp.gpus, pp.slot_hours,
                              pp.slot_steps_per_second, pp.slot_allowed, pp.whole_extra,
                              pp.slot_extra)
        program, v = _program(free, whole, slots, "cost", None)
        solve_quietly(program, solver=cp.HIGHS, **EXACT)
        if program.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            cheapest = _plan(free, whole, slots, v, float(program.value), time.perf_counter())
            return [over_budget(p, " on shared instances", cheapest.total_cost,
                                _placed(whole, slots, v))]
    groups = np.unique(np.r_[p.group[whole.offering], p.group[slots.offering]].astype(int))
    quotas = ", ".join(f"{p.group_names[g]} <= {int(p.capacity[g])}" for g in groups
                       if np.isfinite(p.capacity[g]))
    return [f"quotas: the {len(p.jobs)} jobs do not all fit on the instances the quotas allow "
            f"among the offerings that meet their deadlines ({quotas})"]


def _placed(whole: Pairs, slots: Slots, v: _Vars) -> list[tuple[int, int, bool]]:
    """The pairs a solved program placed: (job, offering, on one GPU of it)."""
    out = []
    if v.x is not None:
        out += [(int(whole.job[q]), int(whole.offering[q]), False)
                for q in np.flatnonzero(v.x.value > 0.5)]
    if v.y is not None:
        out += [(int(slots.job[q]), int(slots.offering[slots.bin[q]]), True)
                for q in np.flatnonzero(v.y.value > 0.5)]
    return out


def _without_budget(p: CollectionProblem) -> CollectionProblem:
    return replace(p, budget_usd=None)

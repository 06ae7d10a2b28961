"""A collection of jobs planned together: the collection's matrices from the planner's
ranked offerings (identical jobs computed once), and its plan by an objective."""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import replace
from functools import partial

from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.model import Constraints, InvalidInput
from costsched.optimize import rank as ranking
from costsched.optimize.collection import POLICIES
from costsched.optimize.collection.problem import CollectionPlan, CollectionProblem, tie_weights
from costsched.optimize.decision import Outcome
from costsched.optimize.job import Workload
from costsched.optimize.planner import rank_key, start_hours, throughputs
from costsched.optimize.unmatched_estimates import estimates_said


def collection_problem(jobs: Sequence[Workload], offerings: pd.DataFrame,
                       quota: int | Mapping[str, int] | None = None,
                       budget_usd: float | None = None) -> CollectionProblem:
    """The collection's matrices. `quota`: instances at most per (cloud, region, type),
    one number for all or a mapping from 'cloud region type' to a number; None = no quota."""
    price = offerings["usd_per_hour"].to_numpy(dtype=float)
    # Identical jobs (`rank_key`) share their rows: computed once per kind, then repeated.
    kind, kinds = _kinds(jobs)
    sps = np.vstack([throughputs(j, offerings)[0] for j in kinds])
    out, gang_price = expected(kinds, offerings, sps)
    allowed = np.vstack([
        (ranking.allowed_offerings(_priced(offerings, j, gang_price, k),
                                   _without_limits(j.job.constraints)) == "").to_numpy()
        for k, j in enumerate(kinds)
    ]).reshape(len(kinds), len(offerings))
    budgets = np.array([j.job.constraints.budget_usd or np.inf for j in kinds])
    allowed &= out.cost <= budgets[:, None]  # a job's own budget limits its choices too
    hours, cost, sps, allowed = (a[kind] for a in (out.hours, out.cost, sps, allowed))
    codes, names = pd.factorize(offerings["quota_group"])
    capacity = np.full(len(names), np.inf)
    if isinstance(quota, Mapping):
        unknown = sorted(set(quota) - set(names))
        if unknown:
            raise InvalidInput(f"quota {unknown[0]!r}: expected 'cloud region instance_type' "
                               f"of a priced offering, such as {names[0]!r}")
        capacity = np.array([float(quota.get(n, np.inf)) for n in names])
    elif quota is not None:
        capacity[:] = quota
    deadlines = np.array([j.job.constraints.deadline_hours or np.inf for j in jobs])
    return CollectionProblem(
        jobs=[j.name for j in jobs], offerings=list(offerings["offering"]),
        hours=hours, cost=cost, steps_per_second=sps, usd_per_hour=price,
        group=codes, capacity=capacity, group_names=list(names), deadline_hours=deadlines,
        allowed=allowed, budget_usd=budget_usd, tie=tie_weights(offerings),
        start_hours=np.array([start_hours(j) for j in jobs]),
        said=partial(_estimated, jobs, offerings),
    )


def expected(kinds: Sequence[Workload], offerings: pd.DataFrame,
             sps: np.ndarray) -> tuple[Outcome, np.ndarray]:
    """Each job's expected hours and cost on each offering, the one estimate its ranking
    shows (`planner.plan_job`'s inputs to `rank.outcomes`): a gang of N nodes priced N
    times and preempted N times as often, its first start counted once. Also the $/h
    each job pays ((J, O) with a gang's N instances, else (1, O)), which its `max_price`
    is held to."""
    nodes = np.array([j.nodes for j in kinds], dtype=float)[:, None]
    price = offerings["usd_per_hour"].to_numpy(dtype=float)[None, :]
    rates = offerings["preemptions_per_hour"].to_numpy(dtype=float)[None, :]
    if (nodes > 1).any():  # (J, O) then; (1, O) for jobs of one node, as most are
        price, rates = price * nodes, rates * nodes

    def column(values: list[float]) -> np.ndarray:
        return np.array(values, dtype=float)[:, None]

    out = ranking.outcomes(column([j.job.steps for j in kinds]), sps, price, rates,
                           column([j.checkpoint_hours for j in kinds]),
                           column([j.restart_hours for j in kinds]),
                           column([start_hours(j) for j in kinds]))
    return out, price


def _priced(offerings: pd.DataFrame, job: Workload, price: np.ndarray,
            k: int) -> pd.DataFrame:
    """The offerings at the $/h the job (kind `k` of `expected`'s price) pays, as its
    ranking has them: a gang's N instances."""
    return offerings if job.nodes <= 1 else offerings.assign(usd_per_hour=price[k])


def _estimated(jobs: Sequence[Workload], offerings: pd.DataFrame,
               pairs: Sequence[tuple[int, int, bool]]) -> tuple[str, str]:
    """`problem.Said` of a collection: each placed job's row, its speed on the offering
    (or on one GPU of it) estimated or not as its plan's table says, read only for a
    refusal's few pairs."""
    placed = []
    for j, o, one_gpu in pairs:
        row = offerings.iloc[[o]]
        if one_gpu:
            row = row.assign(gpu_count=1)
        placed.append((jobs[j], {
            "throughput_estimated": bool(np.asarray(throughputs(jobs[j], row)[1])[0]),
            "gpu_model": row["gpu_model"].iloc[0], "gpu_count": row["gpu_count"].iloc[0]}))
    return estimates_said(placed)


def _without_limits(c: Constraints) -> Constraints:
    """The job's offering filters only (deadline and budget are handled by the problem)."""
    return Constraints(clouds=c.clouds, regions=c.regions, markets=c.markets,
                       gpu_models=c.gpu_models, gpu_counts=c.gpu_counts,
                       max_price_per_hour=c.max_price_per_hour, zones=c.zones,
                       instance_types=c.instance_types, alternatives=c.alternatives)


def plan_collection(jobs: Sequence[Workload], offerings: pd.DataFrame,
                    objective: str = "cost", quota: int | Mapping[str, int] | None = None,
                    budget_usd: float | None = None) -> CollectionPlan:
    """`cost`: min total cost, deadlines met; `time`: min makespan within `budget_usd`;
    `throughput-per-dollar`: Gavel's objective, deadlines met. All within the quotas."""
    if objective not in POLICIES:
        raise InvalidInput(f"objective {objective!r} for a collection: expected one of "
                           f"{', '.join(POLICIES)}")
    kind, kinds = _kinds(jobs)
    if quota is None and budget_usd is None and len(kinds) < len(jobs):
        # Nothing couples the jobs (no quota, no total budget): each job's own optimum is
        # the collection's, and identical jobs share it, so one job per kind is solved.
        problem = collection_problem(kinds, offerings)
        return _repeated(POLICIES[objective](problem), problem, jobs, kind)
    problem = collection_problem(jobs, offerings, quota, budget_usd)
    return POLICIES[objective](problem)


def _kinds(jobs: Sequence[Workload]) -> tuple[np.ndarray, list[Workload]]:
    """Each job's kind (identical `rank_key`) and the first job of each kind."""
    index: dict[Hashable, int] = {}
    kind = np.array([index.setdefault(rank_key(j), len(index)) for j in jobs], dtype=int)
    return kind, [jobs[i] for i in np.unique(kind, return_index=True)[1]]


def _repeated(plan: CollectionPlan, problem: CollectionProblem, jobs: Sequence[Workload],
              kind: np.ndarray) -> CollectionPlan:
    """The plan of one job per kind as the plan of every job: each gets its kind's offering;
    sums count every job, the makespan is the same."""
    counts = np.bincount(kind, minlength=len(problem.jobs))
    if not plan.feasible:
        return replace(plan, reasons=[_for_kind(r, problem.jobs, counts) for r in plan.reasons])
    kind_of = {name: k for k, name in enumerate(problem.jobs)}
    row_of = {name: i for i, name in enumerate(plan.assignment["job"])}
    rows = np.array([row_of[problem.jobs[k]] for k in kind])
    assignment = (plan.assignment.iloc[rows].assign(job=[j.name for j in jobs])
                  .reset_index(drop=True))
    planned = [kind_of[n] for n in plan.assignment["job"]]
    additive = plan.policy != "min_makespan"  # min cost, throughput per dollar: sums
    return replace(
        plan, assignment=assignment, total_cost=float(assignment["cost"].sum()),
        objective=(_weighted_objective(plan, problem, planned, counts[planned]) if additive
                   else plan.objective))


def _weighted_objective(plan: CollectionPlan, problem: CollectionProblem, jobs: list[int],
                        counts: np.ndarray) -> float:
    """A sum objective with each kind's term counted once per job of the kind."""
    offers = plan.assignment["offering_index"].to_numpy(dtype=int)
    if plan.policy == "min_cost":
        terms = problem.cost[jobs, offers]
    else:  # Gavel's: throughput, normalised by the job's best usable one, per dollar
        usable_sps = np.where(problem.usable, problem.steps_per_second, 0.0)
        terms = (problem.steps_per_second[jobs, offers] / usable_sps.max(axis=1)[jobs]
                 / problem.usd_per_hour[offers])
    return float((terms * counts).sum())


def _for_kind(reason: str, kinds: list[str], counts: np.ndarray) -> str:
    """A reason about one job of a kind, said of the others too."""
    for name, n in zip(kinds, counts, strict=True):
        if n > 1 and (reason.startswith(f"job {name}:") or reason.startswith(f"job {name} ")):
            return f"{reason} (and so for {n - 1} more jobs like it)"
    return reason

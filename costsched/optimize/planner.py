"""From resolved jobs and a price frame to ranked offerings and a collection plan.

The glue the CLI, the daemon and the backtest share: frames in, frames out, no I/O. The
price frame is `costsched.prices.prices_at` output (one row per offering).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from costsched import catalog
from costsched.jobspec import ResolvedJob
from costsched.model import Constraints, InvalidInput
from costsched.optimize import rank as ranking
from costsched.optimize.collection import POLICIES, CollectionPlan, CollectionProblem
from costsched.optimize.decision import offering_rates
from costsched.prices import listed_on_demand, on_demand_reference

BASELINE_GPU = "V100"
QUOTA_KEY = ["cloud", "region", "instance_type"]


def prepare(prices: pd.DataFrame, measured_rates: pd.DataFrame | None = None) -> pd.DataFrame:
    """The price frame with a label, a preemption rate and a quota group per offering."""
    frame = prices.reset_index(drop=True)
    where = frame["zone"].where(frame["zone"].astype(str) != "", frame["region"])
    label = (frame["cloud"] + " " + where + " " + frame["instance_type"] + " "
             + frame["market"].str.replace("_", "-"))
    rates = offering_rates(frame, measured_rates)
    groups = frame[QUOTA_KEY].astype(str).agg(" ".join, axis=1)
    return frame.assign(offering=label, quota_group=groups, **rates)


@dataclass(frozen=True)
class Baseline:
    """The job on an on-demand 1xV100: what the ranking is compared with."""

    usd_per_hour: float
    steps_per_second: float
    hours: float
    cost: float
    basis: str


def baseline(job: ResolvedJob, offerings: pd.DataFrame) -> Baseline | None:
    """The cheapest on-demand 1xV100 price known: the frame's own on-demand reference of its
    1xV100 rows (`costsched.prices.on_demand_reference`, which `prices_at` puts beside every
    row), else the catalog's list price as of the frame's newest price; None if none."""
    v100 = offerings[(offerings["gpu_model"] == BASELINE_GPU) & (offerings["gpu_count"] == 1)]
    prices = (v100["on_demand_usd_per_hour"] if "on_demand_usd_per_hour" in v100
              else on_demand_reference(v100)).dropna()
    basis = "on-demand 1xV100 in the price frame"
    if prices.empty:
        newest = offerings["effective_at"].max() if len(offerings) else None
        listed = listed_on_demand(None if pd.isna(newest) else newest)
        listed = listed[(listed["gpu_model"] == BASELINE_GPU) & (listed["gpu_count"] == 1)]
        prices, basis = listed["usd_per_hour"], f"on-demand 1xV100, {catalog.CATALOG_SOURCE}"
    if prices.empty:
        return None
    price = float(prices.min())
    sps = job.table.get(job.job.model, BASELINE_GPU, 1).steps_per_second
    hours = job.job.steps / sps / 3600
    return Baseline(price, sps, hours, hours * price, basis)


@dataclass(frozen=True)
class JobPlan:
    job: ResolvedJob
    ranked: pd.DataFrame  # every offering, choosable first (excluded == '')
    baseline: Baseline | None
    reason: str  # why nothing is choosable ('' if something is)

    @property
    def choices(self) -> pd.DataFrame:
        return self.ranked[self.ranked["excluded"] == ""]

    @property
    def best(self) -> pd.Series | None:
        return None if self.choices.empty else self.choices.iloc[0]


def throughputs(job: ResolvedJob, offerings: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    return job.table.lookup(job.job.model, offerings["gpu_model"], offerings["gpu_count"])


def plan_job(job: ResolvedJob, offerings: pd.DataFrame, objective: str = "cost",
             weight: float = 0.5) -> JobPlan:
    """Rank `prepare`d offerings for one job."""
    sps, estimated = throughputs(job, offerings)
    ranked = ranking.rank(
        offerings.assign(throughput_estimated=estimated), job.job.steps, sps,
        job.job.constraints, objective, preemptions_per_hour=offerings["preemptions_per_hour"],
        checkpoint_hours=job.checkpoint_hours, restart_hours=job.restart_hours, weight=weight,
    )
    return JobPlan(job, ranked, baseline(job, offerings), _no_choice_reason(job, ranked))


def _no_choice_reason(job: ResolvedJob, ranked: pd.DataFrame) -> str:
    if (ranked["excluded"] == "").any():
        return ""
    name, c = job.name, job.job.constraints
    if ranked.empty:
        return f"job {name}: no offering has a price at this time"
    counts = ranked["excluded"].value_counts()
    runnable = ranked[ranked["excluded"].isin(["misses deadline", "over budget"])]
    if runnable.empty:
        shown = ", ".join(f"{n} {why}" for why, n in counts.items())
        return f"job {name}: no offering matches its constraints ({shown})"
    if c.deadline_hours is not None and (runnable["excluded"] == "misses deadline").any():
        fastest = runnable.loc[runnable["expected_hours"].idxmin()]
        if fastest["expected_hours"] > c.deadline_hours:
            return (f"job {name} cannot meet its deadline of {c.deadline_hours:.4g} h on any "
                    f"allowed offering: the fastest, {fastest['offering']}, needs "
                    f"{fastest['expected_hours']:.4g} h")
    cheapest = runnable.loc[runnable["expected_cost"].idxmin()]
    within = runnable if c.deadline_hours is None else runnable[
        runnable["expected_hours"] <= c.deadline_hours]
    cheapest = within.loc[within["expected_cost"].idxmin()] if not within.empty else cheapest
    missing = cheapest["expected_cost"] - (c.budget_usd or 0)
    return (f"job {name}: budget ${c.budget_usd:,.2f} is ${missing:,.2f} short: the cheapest "
            f"offering that meets the deadline, {cheapest['offering']}, costs "
            f"${cheapest['expected_cost']:,.2f}")


def collection_problem(jobs: Sequence[ResolvedJob], offerings: pd.DataFrame,
                       quota: int | Mapping[str, int] | None = None,
                       budget_usd: float | None = None) -> CollectionProblem:
    """The collection's matrices. `quota`: instances at most per (cloud, region, type),
    one number for all or a mapping from 'cloud region type' to a number; None = no quota."""
    price = offerings["usd_per_hour"].to_numpy(dtype=float)
    rates = offerings["preemptions_per_hour"].to_numpy(dtype=float)
    sps = np.vstack([throughputs(j, offerings)[0] for j in jobs])
    steps = np.array([j.job.steps for j in jobs])[:, None]
    out = ranking.outcomes(steps, sps, price, rates,
                           np.array([j.checkpoint_hours for j in jobs])[:, None],
                           np.array([j.restart_hours for j in jobs])[:, None])
    allowed = np.vstack([
        (ranking.allowed_offerings(offerings, _without_limits(j.job.constraints)) == "")
        .to_numpy() for j in jobs
    ])
    budgets = np.array([j.job.constraints.budget_usd or np.inf for j in jobs])
    allowed &= out.cost <= budgets[:, None]  # a job's own budget limits its choices too
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
        hours=out.hours, cost=out.cost, steps_per_second=sps, usd_per_hour=price,
        group=codes, capacity=capacity, group_names=list(names), deadline_hours=deadlines,
        allowed=allowed, budget_usd=budget_usd,
    )


def _without_limits(c: Constraints) -> Constraints:
    """The job's offering filters only (deadline and budget are handled by the problem)."""
    return Constraints(clouds=c.clouds, regions=c.regions, markets=c.markets,
                       gpu_models=c.gpu_models, gpu_counts=c.gpu_counts,
                       max_price_per_hour=c.max_price_per_hour)


def plan_collection(jobs: Sequence[ResolvedJob], offerings: pd.DataFrame,
                    objective: str = "cost", quota: int | Mapping[str, int] | None = None,
                    budget_usd: float | None = None) -> CollectionPlan:
    """`cost`: min total cost, deadlines met; `time`: min makespan within `budget_usd`;
    `throughput-per-dollar`: Gavel's objective, deadlines met. All within the quotas."""
    if objective not in POLICIES:
        raise InvalidInput(f"objective {objective!r} for a collection: expected one of "
                           f"{', '.join(POLICIES)}")
    problem = collection_problem(jobs, offerings, quota, budget_usd)
    return POLICIES[objective](problem)

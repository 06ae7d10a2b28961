"""From jobs (`Workload`s) and a price frame to ranked offerings and a collection plan.

The glue the CLI, the daemon and the backtest share: frames in, frames out, no I/O. The
price frame is `costsched.prices.prices_at` output (one row per offering).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Generic, TypeVar

import numpy as np
import pandas as pd

from costsched import catalog
from costsched.amounts import per_hour, usd_all
from costsched.list_prices import listed_on_demand, on_demand_reference
from costsched.optimize import rank as ranking
from costsched.optimize.decision import offering_rates
from costsched.optimize.hazard import Evidence
from costsched.optimize.job import Workload
from costsched.vocabulary import did_you_mean

BASELINE_GPU = "V100"
# The job a plan is of: a `Workload`, or one with more said of it (the job spec's
# `ResolvedJob`), handed back as it came.
W = TypeVar("W", bound=Workload)
QUOTA_KEY = ["cloud", "region", "instance_type"]


def prepare(prices: pd.DataFrame,
            measured_rates: pd.DataFrame | Evidence | None = None) -> pd.DataFrame:
    """The price frame with a label, a preemption rate and a quota group per offering."""
    frame = prices.reset_index(drop=True)
    text = {c: frame[c].astype(str) for c in ("cloud", "region", "zone", "instance_type",
                                                "market")}
    where = text["zone"].where(text["zone"] != "", text["region"])
    label = (text["cloud"] + " " + where + " " + text["instance_type"] + " "
             + text["market"].str.replace("_", "-"))
    rates = offering_rates(frame, measured_rates)
    groups = text["cloud"] + " " + text["region"] + " " + text["instance_type"]
    return frame.assign(offering=label, quota_group=groups, **rates)


@dataclass(frozen=True)
class Baseline:
    """The job on an on-demand 1xV100: what the ranking is compared with."""

    usd_per_hour: float
    steps_per_second: float
    hours: float
    cost: float
    basis: str


def baseline(job: Workload, offerings: pd.DataFrame) -> Baseline | None:
    """The cheapest on-demand 1xV100 price known: the frame's own on-demand reference of its
    1xV100 rows (`costsched.list_prices.on_demand_reference`, which `prices_at` puts beside
    every row), else the catalog's list price as of the frame's newest price; None if none."""
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
    if not np.isfinite(job.table.lookup(job.job.model, [BASELINE_GPU], [1])[0][0]):
        return None  # a CPU job: a V100 machine is no yardstick for it
    sps = job.table.get(job.job.model, BASELINE_GPU, 1).steps_per_second
    hours = job.job.steps / sps / 3600
    return Baseline(price, sps, hours, hours * price, basis)


@dataclass(frozen=True)
class JobPlan(Generic[W]):
    job: W
    ranked: pd.DataFrame  # every offering, choosable first (excluded == '')
    baseline: Baseline | None
    reason: str  # why nothing is choosable ('' if something is)

    @property
    def choices(self) -> pd.DataFrame:
        return self.ranked[self.ranked["excluded"] == ""]

    @property
    def best(self) -> pd.Series | None:
        return None if self.choices.empty else self.choices.iloc[0]

    def for_job(self, other: W) -> JobPlan[W]:
        """The same plan for a job identical in what is ranked (`rank_key`): the ranking
        is shared, the reason names the other job."""
        if other is self.job:
            return self
        reason = self.reason.replace(f"job {self.job.name}", f"job {other.name}", 1)
        return replace(self, job=other, reason=reason)


def throughputs(job: Workload, offerings: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Steps/s and an `estimated` flag per offering; CPU instance types (GPU count 0, no
    GPU model) have none for a GPU job, and GPU types none for a CPU job."""
    return job.table.lookup(job.job.model, offerings["gpu_model"].fillna(""),
                            offerings["gpu_count"].fillna(0))


def plan_job(job: W, offerings: pd.DataFrame, objective: str = "cost",
             weight: float = 0.5) -> JobPlan[W]:
    """Rank `prepare`d offerings for one job. A gang of N nodes costs N times an
    offering's price and is stopped by the first of its N instances preempted (N times
    the rate); `nodes` says N."""
    if job.nodes > 1:
        offerings = offerings.assign(
            usd_per_hour=offerings["usd_per_hour"] * job.nodes,
            preemptions_per_hour=offerings["preemptions_per_hour"] * job.nodes)
    offerings = offerings.assign(nodes=job.nodes)
    sps, estimated = throughputs(job, offerings)
    source = job.table.sources(job.job.model, offerings["gpu_model"].fillna(""),
                               offerings["gpu_count"].fillna(0))
    ranked = ranking.rank(
        offerings.assign(throughput_estimated=estimated, throughput_source=source),
        job.job.steps, sps,
        job.job.constraints, objective, preemptions_per_hour=offerings["preemptions_per_hour"],
        checkpoint_hours=job.checkpoint_hours, restart_hours=job.restart_hours, weight=weight,
    )
    if job.order:
        ranked = in_order(ranked, job.order)
    return JobPlan(job, ranked, baseline(job, offerings), _no_choice_reason(job, ranked))


def in_order(ranked: pd.DataFrame, order: Sequence[Mapping[str, Sequence[str]]]) -> pd.DataFrame:
    """`ranked` with the choosable offerings of the first alternative (of a task's
    `ordered:` resources) that has one first, then the next alternative's, ...; within an
    alternative, as ranked. `order_rank` says which alternative each offering is of."""
    alternative = pd.Series(len(order), index=ranked.index)
    key = ranked["cloud"].astype(str) + "/" + ranked["instance_type"].astype(str)
    for i in reversed(range(len(order))):
        alt = order[i]
        match = pd.Series(True, index=ranked.index)
        for column, values in (("cloud", alt.get("clouds")), ("region", alt.get("regions")),
                               ("market", alt.get("markets"))):
            if values:
                match &= ranked[column].isin(list(values))
        if alt.get("instance_types"):
            match &= key.isin(list(alt["instance_types"]))
        alternative[match] = i
    choosable = ranked["excluded"] == ""
    ranked = ranked.assign(order_rank=alternative.where(choosable, len(order) + 1))
    return ranked.sort_values("order_rank", kind="stable").reset_index(drop=True)


def order_cost(plan: JobPlan) -> str:
    """What a task's `ordered:` preference costs against the cheapest choice ('' without
    one, or when the first choice is the cheapest)."""
    choices = plan.choices
    if not plan.job.order or choices.empty:
        return ""
    first, cheapest = choices.iloc[0], choices.loc[choices["expected_cost"].idxmin()]
    extra = float(first["expected_cost"] - cheapest["expected_cost"])
    if extra <= 0:
        return (f"ordered: alternative {int(first['order_rank']) + 1} ({first['offering']}) "
                "is also the cheapest choice")
    cost, more, least = usd_all(first["expected_cost"], extra, cheapest["expected_cost"])
    return (f"ordered: alternative {int(first['order_rank']) + 1} ({first['offering']}) "
            f"costs {cost}, {more} more than the cheapest choice ({cheapest['offering']}, "
            f"{least})")


def rank_key(job: Workload) -> Hashable:
    """What a job's ranking depends on: jobs with equal keys (a sweep's jobs, which differ
    in name and environment only) share one ranking."""
    j = job.job
    return (id(job.table), j.model, j.steps, j.constraints, job.checkpoint_hours,
            job.restart_hours, job.nodes)


Progress = Callable[[str, int, int], None]  # (stage, done, total)


def plan_jobs(jobs: Sequence[W], offerings: pd.DataFrame, objective: str = "cost",
              weight: float = 0.5, *, explain: Callable[[W], str] | None = None,
              progress: Progress | None = None) -> list[JobPlan[W]]:
    """`plan_job` for each job, ranking each group of identical jobs (`rank_key`) once.
    `explain(job)`: a better reason than the ranking's for a job none of whose offerings
    passes its filters ('' to keep the ranking's), such as `unmatched` over every price."""
    first: dict[Hashable, JobPlan[W]] = {}
    keys = [rank_key(j) for j in jobs]
    distinct = len(set(keys))
    out = []
    for job, key in zip(jobs, keys, strict=True):
        shared = first.get(key)
        if shared is None:
            shared = plan_job(job, offerings, objective, weight)
            if explain is not None and shared.reason and not _passes_filters(shared.ranked):
                shared = replace(shared, reason=explain(job) or shared.reason)
            first[key] = shared
            if progress is not None:
                progress("ranking", len(first), distinct)
        out.append(shared.for_job(job))
    return out


def _passes_filters(ranked: pd.DataFrame) -> bool:
    """Some offering passes the job's filters (it may still miss the deadline or budget)."""
    return bool(ranked["excluded"].isin(["", *ranking.UNFILTERED]).any())


def unmatched(job: Workload, market: pd.DataFrame, at: datetime) -> str:
    """Why no offering of `market` (every price as of `at`) matches the job's filters: the
    first filter that leaves nothing, with the values that do exist; '' if some match."""
    c = job.job.constraints
    when = f"{pd.Timestamp(at):%Y-%m-%dT%H:%MZ}"
    if market.empty:
        return (f"job {job.name}: no offering has a price as of {when} (neither a stored "
                "price nor a list price held by then)")
    left = market
    checks: Sequence[tuple[str, str, Sequence]] = (
        ("cloud", "cloud", c.clouds), ("region", "region", c.regions),
        ("market", "market", c.markets), ("gpu_model", "GPU model", c.gpu_models),
        ("gpu_count", "GPU count", c.gpu_counts),
        ("instance_type", "instance type", c.instance_types), ("zone", "zone", c.zones))
    for column, what, accepted in checks:
        if not accepted:
            continue
        kept = left[ranking.zone_allowed(left, accepted) if column == "zone"
                    else left[column].isin(list(accepted))]
        if kept.empty:
            found = sorted({str(v) for v in left[column]})
            shown = ", ".join(found[:12]) + (f", ... ({len(found)} in all)"
                                             if len(found) > 12 else "")
            scope = "" if left is market else " among the offerings its other filters allow"
            wanted = ", ".join(str(v) for v in accepted)
            return (f"job {job.name}: no offering priced as of {when} has {what} {wanted}"
                    f"{scope}; priced: {shown}{did_you_mean(str(accepted[0]), found)}")
        left = kept
    limit = c.max_price_per_hour
    if limit is not None and (left["usd_per_hour"] > limit).all():
        return (f"job {job.name}: no offering that its filters allow costs at most "
                f"{per_hour(limit)}/h as of {when}; the cheapest costs "
                f"{per_hour(left['usd_per_hour'].min())}/h")
    return ""


def _no_choice_reason(job: Workload, ranked: pd.DataFrame) -> str:
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
    budget, short, cost = usd_all(c.budget_usd, cheapest["expected_cost"] - (c.budget_usd or 0),
                                  cheapest["expected_cost"])
    which = ("offering that meets the deadline" if c.deadline_hours is not None
             else "offering it allows")  # a job without a deadline is not told of one
    return (f"job {name}: budget {budget} is {short} short: the cheapest {which}, "
            f"{cheapest['offering']}, costs {cost}")

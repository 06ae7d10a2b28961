"""From jobs (`Workload`s) and a price frame to ranked offerings and a collection plan.

The glue the CLI, the daemon and the backtest share: frames in, frames out, no I/O. The
price frame is `costsched.prices.prices_at` output (one row per offering).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Generic, TypeVar

from costsched import catalog, default_hosts
from costsched.amounts import (
    MAX_DECIMALS,
    decimals_kept,
    derived_per_hour,
    difference_as_written,
    given,
    stored_price,
    usd,
)
from costsched.cpu_work import CpuWork
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.list_prices import listed_on_demand, on_demand_reference
from costsched.model import DROPPED, Constraints
from costsched.optimize import rank as ranking
from costsched.optimize.decision import offering_rates
from costsched.optimize.hazard import Evidence
from costsched.optimize.job import Workload
from costsched.optimize.quotas import behind_quota
from costsched.optimize.unmatched import Missing, shapes
from costsched.optimize.unmatched_deadline import fastest_missed
from costsched.optimize.unmatched_estimates import estimate_said
from costsched.optimize.unmatched_order import (
    Alternative,
    PassedOver,
    Unlaunched,
    alternatives,
    in_alternative,
    passed_over,
)
from costsched.rest_cost import of_row

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
    """The job on on-demand 1xV100s (N nodes of them for a gang of N): what the ranking
    is compared with."""

    usd_per_hour: float
    steps_per_second: float
    hours: float
    cost: float
    basis: str
    estimated: bool = False  # its V100 speed is costsched's estimate, not a given figure


def baseline(job: Workload, offerings: pd.DataFrame) -> Baseline | None:
    """The cheapest on-demand 1xV100 price known: the frame's own on-demand reference of its
    1xV100 rows (`costsched.list_prices.on_demand_reference`, which `prices_at` puts beside
    every row), else the catalog's list price as of the frame's newest price; None if none."""
    v100 = offerings[(offerings["gpu_model"] == BASELINE_GPU) & (offerings["gpu_count"] == 1)
                     & ~default_hosts.other_hosts(offerings["instance_type"])]  # V100:1 alone
    prices = (v100["on_demand_usd_per_hour"] if "on_demand_usd_per_hour" in v100
              else on_demand_reference(v100)).dropna()
    basis = "on-demand 1xV100 in the price frame"
    if prices.empty:
        newest = offerings["effective_at"].max() if len(offerings) else None
        listed = listed_on_demand(None if pd.isna(newest) else newest)
        listed = listed[(listed["gpu_model"] == BASELINE_GPU) & (listed["gpu_count"] == 1)
                        & ~default_hosts.other_hosts(listed["instance_type"])]
        prices, basis = listed["usd_per_hour"], f"on-demand 1xV100, {catalog.CATALOG_SOURCE}"
    if prices.empty:
        return None
    price = float(prices.min())
    if not np.isfinite(job.table.lookup(job.job.model, [BASELINE_GPU], [1])[0][0]):
        return None  # a CPU job: a V100 machine is no yardstick for it
    speed = job.table.get(job.job.model, BASELINE_GPU, 1)
    # Its work and its start, as every offering's expected hours count them.
    hours = job.job.steps / speed.steps_per_second / 3600 + start_hours(job)
    if job.nodes > 1:  # the job's gang on V100s, at N times the price, as every offering
        price, basis = price * job.nodes, basis.replace("1xV100", f"{job.nodes} nodes x 1xV100")
    return Baseline(price, speed.steps_per_second, hours, hours * price, basis,
                    bool(speed.estimated))


@dataclass(frozen=True)
class JobPlan(Generic[W]):
    job: W
    # Every offering, choosable first (excluded == ''), those over quota (`quota` != '')
    # behind the choosable ones that fit.
    ranked: pd.DataFrame
    baseline: Baseline | None
    reason: str  # why nothing is choosable ('' if something is)
    # The shapes of a job's set (a task's accelerators) that no offering has, and why.
    notes: tuple[str, ...] = ()
    # A task's `ordered:` alternatives, each with why it has no choice
    # (`unmatched_order.alternatives`), and those preferred to the one the job goes to,
    # with why each is passed over (`unmatched_order.passed_over`).
    alternatives: tuple[Alternative, ...] = ()
    passed_over: tuple[PassedOver, ...] = ()

    @property
    def choices(self) -> pd.DataFrame:
        return self.ranked[self.ranked["excluded"] == ""]

    @property
    def best(self) -> pd.Series | None:
        choices = self.choices
        return None if choices.empty else choices.iloc[0]

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
    the rate); `nodes` says N. Offerings whose quota (`quotas.attach`'s columns, where the
    frame has them) does not hold N instances are ranked behind those it does, marked in
    `quota`."""
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
        checkpoint_hours=job.checkpoint_hours, restart_hours=job.restart_hours,
        start_hours=start_hours(job), weight=weight,
    )
    if job.order:
        ranked = in_order(ranked, job.order)
    # The account's quotas come before any preference: never one over quota while one fits.
    ranked = behind_quota(ranked, job.nodes)
    return JobPlan(job, ranked, baseline(job, offerings), _no_choice_reason(job, ranked))


def start_hours(job: Workload) -> float:
    """Hours from a job's launch to its first step (`Workload.start_hours`: boot and
    set-up, warm-up, a gang's rendezvous; the checkpoint's copy only for a job placed again
    from it), which its plan's expected hours and cost count once, at each offering's
    price, and so its deadline, as the deadline policies and the launch's check do. None
    for a job whose work is assumed: its figures are rates per hour of work, and a start,
    paid once whatever the work, is no part of a rate (its plan says it comes on top).
    0 for a job running already (`Workload.running`)."""
    return 0.0 if job.work_assumed or job.running else job.start_hours


def in_order(ranked: pd.DataFrame, order: Sequence[Mapping[str, Sequence[str]]]) -> pd.DataFrame:
    """`ranked` with the choosable offerings of the first alternative (of a task's
    `ordered:` resources) that has one first, then the next alternative's, ...; within an
    alternative, as ranked. `order_rank` says which alternative each offering is of."""
    alternative = pd.Series(len(order), index=ranked.index)
    for i in reversed(range(len(order))):
        alternative[in_alternative(ranked, order[i])] = i
    choosable = ranked["excluded"] == ""
    ranked = ranked.assign(order_rank=alternative.where(choosable, len(order) + 1))
    return ranked.sort_values("order_rank", kind="stable").reset_index(drop=True)


def superseded_offerings(plan: JobPlan) -> list[str]:
    """The offerings the job's filters allow that were left out for a superseded bundled
    price (`rank.SUPERSEDED`), each with its price and date: 'aws us-west-1 p5.48xlarge
    on-demand ($122.9000/h of 2025-05-01)'."""
    ranked = plan.ranked
    left_out = (ranked["excluded"] == ranking.SUPERSEDED).to_numpy(dtype=bool)
    if not left_out.any():
        return []
    gone = ranked.loc[left_out, ["offering", "usd_per_hour", "nodes", "effective_at"]]
    return [f"{r.offering} ({stored_price(r.usd_per_hour / r.nodes)}/h of "
            f"{r.effective_at:%Y-%m-%d})" for r in gone.itertuples()]


def order_cost(plan: JobPlan, mark: Callable[[pd.Series], str] | None = None) -> str:
    """What a task's `ordered:` preference costs against the cheapest choice ('' without
    one, or when the first choice is the cheapest). `mark(row)`: what follows a figure of
    that offering (a view's mark of an estimate; the difference takes either's)."""
    if not plan.job.order:
        return ""
    choices = plan.choices
    if choices.empty:
        return ""
    first, cheapest = choices.iloc[0], choices.loc[choices["expected_cost"].idxmin()]
    extra = float(first["expected_cost"] - cheapest["expected_cost"])
    if extra <= 0:
        return (f"ordered: alternative {int(first['order_rank']) + 1} ({first['offering']}) "
                "is also the cheapest choice")
    ours, theirs = (mark(first), mark(cheapest)) if mark is not None else ("", "")
    work = getattr(plan.job, "work", None)
    if work is not None and work.assumed:  # an hour of work's cost: a rate, as $/h is
        # The difference of the rates as written, so that the line visibly subtracts.
        shown = [round(float(v), MAX_DECIMALS) for v in (first["expected_cost"],
                                                         cheapest["expected_cost"])]
        cost, more, least = (derived_per_hour(v) for v in (shown[0], shown[0] - shown[1], shown[1]))
        cost = f"{cost}{ours} per {work.unit()}"
    else:
        # At a plan total's precision, the difference as the two read: it subtracts.
        a, b = float(first["expected_cost"]), float(cheapest["expected_cost"])
        places = decimals_kept([a, extra, b])
        cost, more, least = (usd(v, places) for v in
                             (a, difference_as_written(a, b, places), b))
        cost = f"{cost}{ours}"
    return (f"ordered: alternative {int(first['order_rank']) + 1} ({first['offering']}) "
            f"costs {cost}, {more}{ours or theirs} more than the cheapest choice "
            f"({cheapest['offering']}, {least}{theirs})")


def rank_key(job: Workload) -> Hashable:
    """What a job's ranking depends on: jobs with equal keys (a sweep's jobs, which differ
    in name and environment only) share one ranking."""
    j = job.job
    return (id(job.table), j.model, j.steps, j.constraints, job.checkpoint_hours,
            job.restart_hours, start_hours(job), job.nodes)


Progress = Callable[[str, int, int], None]  # (stage, done, total)


Explain = Callable[[Workload], Missing | None]


def plan_jobs(jobs: Sequence[W], offerings: pd.DataFrame, objective: str = "cost",
              weight: float = 0.5, *, explain: Explain | None = None,
              unlaunched: Unlaunched | None = None,
              progress: Progress | None = None) -> list[JobPlan[W]]:
    """`plan_job` for each job, ranking each group of identical jobs (`rank_key`) once.
    `explain(job)`: why none of a job's offerings passes its filters, from every price
    (`unmatched.unmatched`); it gives the reason of a job with no plan, and a note for each
    shape of a job's set that no offering has (`JobPlan.notes`). `unlaunched(row)`: why
    the launcher `launch` uses does not start an offering ('' when it does; None: any),
    by which a task's `ordered:` alternatives passed over are said (`explained`)."""
    first: dict[Hashable, JobPlan[W]] = {}
    keys = [rank_key(j) for j in jobs]
    distinct = len(set(keys))
    out = []
    for job, key in zip(jobs, keys, strict=True):
        shared = first.get(key)
        if shared is None:
            shared = assumption_said(plan_job(job, offerings, objective, weight))
            if explain is not None:
                shared = explained(shared, explain, offerings, unlaunched)
            first[key] = shared
            if progress is not None:
                progress("ranking", len(first), distinct)
        out.append(shared.for_job(job))
    return out


def assumption_said(plan: JobPlan[W]) -> JobPlan[W]:
    """A plan refused on figures of assumed work (a budget short, a deadline missed by the
    hour costsched counted for a task that gives no work) says that its figures are of that
    hour and which key gives the work: `plan` and `launch` say the same."""
    work = getattr(plan.job, "work", None)
    if not plan.reason or work is None or not work.assumed:
        return plan
    # What cannot be checked comes first, and why: the refusal's figures are of an hour
    # costsched counted, not of the job.
    c, name = plan.job.job.constraints, plan.job.name
    limits = [w for w, v in (("deadline", c.deadline_hours), ("budget", c.budget_usd))
              if v is not None]
    checked = f"its {' and '.join(limits)}" if limits else "its plan"
    rest = plan.reason
    for head, said in ((f"job {name}: ", ""), (f"job {name} ", "it ")):
        if rest.startswith(head):
            rest = said + rest.removeprefix(head)
            break
    return replace(plan, reason=(
        f"job {name}: its work is not given, so {checked} cannot be checked: {work.key()} "
        f"gives it; for {work.describe()}, {rest}"))


def dropped_notes(job: Workload) -> list[str]:
    """The notes of `job`'s file saying what of it was dropped as read (an accelerator of
    a set the catalog has no instance type with, an alternative none matches): a "no plan"
    names them, as a plan's notes do, so that what it was asked for adds up."""
    return [n for n in getattr(job, "notes", ()) if DROPPED in n]


def explained(plan: JobPlan[W], explain: Explain, offerings: pd.DataFrame,
              unlaunched: Unlaunched | None = None) -> JobPlan[W]:
    """`plan` with the reason `explain` gives when no offering passes the job's filters,
    a note for each shape of its set (`unmatched.shapes`) that none has, and each
    `ordered:` alternative preferred to the one its launch goes to (its first choice that
    the launcher starts: `unlaunched`), with why (`unmatched_order.passed_over`)."""
    reason = plan.reason
    if reason and not _passes_filters(plan.ranked):
        missing = explain(plan.job)
        reason = missing.line(plan.job.name) if missing is not None else reason
    if reason:  # what the task asked for that was dropped as read is part of why
        reason = "; ".join([reason, *dropped_notes(plan.job)])
    notes = []
    order = alternatives(plan.job, plan.ranked, offerings, explain) if not reason else ()
    over = passed_over(plan.ranked, order, unlaunched=unlaunched)
    passing = plan.ranked[plan.ranked["excluded"].isin(PASSING)]
    for shape, narrowed in shapes(plan.job, offerings):
        has = passing[_has_shape(passing, narrowed)]
        if has.empty:
            job = replace(plan.job, job=replace(plan.job.job, constraints=narrowed))
            missing = explain(job)
            # said once: an `ordered:` alternative passed over names it with its reason
            if missing is not None and not any(missing.what in o.line() for o in over):
                notes.append(missing.note(shape))
    return replace(plan, reason=reason, notes=tuple(notes), alternatives=order,
                   passed_over=over)


# `rank`'s reasons of offerings that pass the job's filters and have a speed.
PASSING = ("", "misses deadline", "over budget")


def _passes_filters(ranked: pd.DataFrame) -> bool:
    """Some offering passes the job's filters and has a speed (it may still miss the
    deadline or budget)."""
    return bool(ranked["excluded"].isin(PASSING).any())


def _has_shape(frame: pd.DataFrame, c: Constraints) -> pd.Series:
    ok = frame["gpu_model"].isin(list(c.gpu_models))
    if c.gpu_counts:
        ok &= frame["gpu_count"].isin(list(c.gpu_counts))
    return ok


def budget_short(job: Workload, ranked: pd.DataFrame) -> pd.Series | None:
    """The offering a job's budget is short of when nothing else keeps it from running:
    the cheapest of those only its budget or deadline left out (within the deadline where
    one is). A launch's budget check and the plan's reason price this one row."""
    runnable = ranked[ranked["excluded"].isin(["misses deadline", "over budget"])]
    if runnable.empty:
        return None
    c = job.job.constraints
    within = runnable if c.deadline_hours is None else runnable[
        runnable["expected_hours"] <= c.deadline_hours]  # (its start counted in them)
    pool = within if not within.empty else runnable
    return pool.loc[pool["expected_cost"].idxmin()]


def _no_choice_reason(job: Workload, ranked: pd.DataFrame) -> str:
    """Why no offering is a choice, with the key of the job's file that gets it one."""
    from costsched.optimize.no_plan_keys import change

    if (ranked["excluded"] == "").any():
        return ""
    name, c = job.name, job.job.constraints
    if ranked.empty:
        return f"job {name}: no offering has a price at this time"
    runnable = ranked[ranked["excluded"].isin(["misses deadline", "over budget"])]
    if runnable.empty:
        if isinstance(job.table, CpuWork):
            return f"job {name}: no CPU instance type that its filters allow has a price"
        speedless = ranked[ranked["excluded"] == "no throughput"]
        if not speedless.empty:  # GPUs outside costsched's table of GPU data sheets
            gpus = sorted({f"{g}:{int(n)}" for g, n in zip(
                speedless["gpu_model"], speedless["gpu_count"], strict=True)})
            from costsched.optimize.left_out_words import no_speed_words

            models = list(dict.fromkeys(str(g) for g in speedless["gpu_model"]))
            return (f"job {name}: no speed of {job.job.model} is known on "
                    f"{', '.join(gpus[:6])}, the GPUs its filters allow "
                    f"({no_speed_words(job, models)})")
        from costsched.optimize.left_out_words import counted_reasons

        shown = ", ".join(f"{n} {why}" for why, n in
                          counted_reasons(job, ranked["excluded"]).items())
        return f"job {name}: no offering matches its constraints ({shown})"
    if c.deadline_hours is not None and (runnable["excluded"] == "misses deadline").any():
        fastest = runnable.loc[runnable["expected_hours"].idxmin()]
        if fastest["expected_hours"] > c.deadline_hours:  # (its start counted in them)
            return fastest_missed(job, ranked, fastest,
                                  change(job, ["deadline"], "by").removeprefix("by "))
    cheapest = budget_short(job, ranked)
    assert cheapest is not None  # (runnable is not empty)
    return budget_short_said(job, cheapest)


def budget_short_said(job: Workload, row: pd.Series, raise_to: str = "") -> str:
    """'job NAME: budget $0.012 is $0.0721 short: the cheapest offering it allows, OFFERING,
    costs $0.0841 ($0.0003 for 0.0004 h of work + $0.0838 for 0.0833 h to start it, each at
    $1.0060/h; first start 0.08333 h: ... + 5 min warm-up ([migration] warmup_minutes));
    raise constraints.budget in job.yaml to 0.10': its cost itemised (`rest_cost`). The
    figures at the plan's table's precision (under a dime at four decimals: '$0.0125', not
    '$0.01'); `row`: the offering priced (`planner.budget_short`); `raise_to`: the budget
    that launches it, as `launch` reckons it ('' when not known here:
    `service.budget_short.with_budget_raised` gives it)."""
    from costsched.optimize.no_plan_keys import change

    c = job.job.constraints
    cost_usd = float(row["expected_cost"])
    start_usd = float(row.get("start_hours", 0.0) or 0.0) * float(row["usd_per_hour"])
    gap = (cost_usd - (c.budget_usd or 0), cost_usd)
    places = decimals_kept([*gap, c.budget_usd, *([start_usd] if start_usd > 0 else [])])
    short, cost = (usd(value, places) for value in gap)
    budget = given(c.budget_usd, places)  # as the user set it, at the line's precision
    which = ("offering that meets the deadline" if c.deadline_hours is not None
             else "offering it allows")  # a job without a deadline is not told of one
    mark, said = estimate_said(job, row)  # as the plan's table marks its figures
    # Its parts (work, preemptions, start: `rest_cost`) where the row is the decision
    # model's; after them, in the same brackets, what its mark means and where its start
    # hours come from (they rest on no estimated speed).
    rest = of_row(row)
    of_it = f"{usd(start_usd, places)} of it to start it; " if rest is None else ""
    start = (of_it + job.start_said() if start_usd > 0 else
             f"its {job.start_said()}" if job.start_left_out else "")
    words = "; ".join(filter(None, [said.strip().removeprefix("(").removesuffix(")"), start]))
    priced = (rest.said(places, mark, f"; {words}" if words else "") if rest is not None
              else f"{cost}{mark} ({words})" if words else f"{cost}{mark}")
    fix = change(job, ["budget"], "raise")
    return (f"job {job.name}: budget {budget} is {short}{mark} short: the cheapest {which}, "
            f"{row['offering']}, costs {priced}; {fix}"
            + (f" to {raise_to}" if raise_to else ""))

"""Planning: rank offerings per job, and place a collection of jobs at once."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from costsched import file_limits
from costsched.amounts import (
    MAX_DECIMALS,
    decimals,
    hours,
    hours_times,
    sum_as_written,
)
from costsched.config import effective
from costsched.jobspec import (
    JobSpec,
    ResolvedJob,
    parse_hours,
    refuse_passed_deadlines,
)
from costsched.lazy import pandas as pd
from costsched.model import InvalidInput, utc
from costsched.optimize import objectives
from costsched.optimize.availability import lifetimes, preemption_rates
from costsched.optimize.decision import MovePrice, Overheads, Place, price_move
from costsched.optimize.hazard import Evidence, simulated_words
from costsched.optimize.hazard import explain as explain_hazard
from costsched.optimize.job import Workload
from costsched.optimize.planner import JobPlan, Progress, plan_jobs, prepare
from costsched.optimize.rank import OBJECTIVES
from costsched.optimize.unmatched import unmatched, with_dropped
from costsched.passes import one_pass
from costsched.prices import prices_at, spot_markets
from costsched.service.booked import booked_for
from costsched.service.decide import decision_rates
from costsched.service.jobs.lost_work import assumed_line
from costsched.service.jobs.market import market_at
from costsched.service.jobs.tried_last import tried_last
from costsched.service.launch_place import LaunchPlacement, launch_placements
from costsched.service.plan_explain import (
    assumed_rate_line,
    booting_none_line,
    cost_line,
    gang_line,
    move_line,
    speed_line,
    start_line,
    work_line,
)
from costsched.service.plan_interval import Interval, interval_of
from costsched.service.quotas import QuotaFacts
from costsched.service.resolve import resolve
from costsched.service.stores import StoreLike, using
from costsched.service.throughputs import table_with_measured
from costsched.service.values import as_time, choices
from costsched.taskfile import Jobs
from costsched.taskfile import read_jobs as job_specs
from costsched.throughput import ThroughputTable

# Named in annotations only: a collection's placement loads when a plan has several jobs.
if TYPE_CHECKING:
    from costsched.optimize.booked import BookedPlans
    from costsched.optimize.collection import CollectionPlan
    from costsched.optimize.unmatched import Missing
    from costsched.policies import OfferingKey
    from costsched.price_ages import Stale
    from costsched.service.jobs.market import Market

ALL_OBJECTIVES = objectives.ALL
# One row per job in PlanResult.table: the job, then its best offering's columns.
BEST_COLUMNS = ["offering", "cloud", "region", "zone", "instance_type", "market", "gpu_model",
                "gpu_count", "usd_per_hour", "steps_per_second", "throughput_estimated",
                "preemptions_per_hour", "preemption_basis", "start_hours", "start_cost",
                "expected_hours", "expected_cost", "quota"]


@dataclass(frozen=True)
class PlanResult:
    at: datetime  # the prices' time
    objective: str
    jobs: list[JobPlan]  # per job: every offering ranked (`.ranked`), `.choices`, `.best`
    collection: CollectionPlan | None  # several jobs: their placement together
    evidence: Evidence | None = None  # what the preemption hazards were computed from
    # The clouds of the prices whose quotas are not known, said once ('' when all are).
    quota_note: str = ""
    # Per job, its plans with the booked capacity that fits it (`service.booked`); () when
    # the store offers none.
    booked: tuple[BookedPlans | None, ...] = ()
    # Per job, its checkpoint interval and where it comes from (`plan_interval`).
    intervals: tuple[Interval, ...] = ()
    # Per job, where `launch` places it when its deadline policy does, not the ranking's
    # order (`service.launch_place`); () when no launcher was given or no job is such.
    launch: tuple[LaunchPlacement | None, ...] = ()
    # The offerings `launch` on the plan's launcher tries after the others, with why (a
    # launch met no capacity there lately: `jobs.tried_last`); {} without a launcher.
    tried_last: Mapping[OfferingKey, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Every job has a plan (one job), or the collection has one (several)."""
        if self.collection is not None:
            return self.collection.feasible
        return not any(p.reason for p in self.jobs)

    @property
    def per_job_objective(self) -> str:
        return self.objective if self.objective in OBJECTIVES else "cost"

    def ranking(self, job: str | int = 0) -> pd.DataFrame:
        """A job's choosable offerings, best first, with `vs_on_demand_v100`: the expected
        cost against running on one on-demand V100."""
        plan = self.jobs[job] if isinstance(job, int) else self._named(job)
        base = plan.baseline
        choices_ = plan.choices
        vs = (choices_["expected_cost"] / base.cost if base
              else pd.Series(float("nan"), choices_.index))
        return choices_.assign(vs_on_demand_v100=vs)

    @property
    def table(self) -> pd.DataFrame:
        """One row per job: its best offering, expected hours and cost (its first start
        counted once: `start_hours`, `start_cost`), and the reason when it has none.
        `work_assumed`: the job's file gives no work, so its hours and cost are those of an
        hour of work (`JobPlan.job.work`), not a total."""
        rows = []
        best_of: dict[int, dict] = {}  # identical jobs share their ranking: read it once
        for i, p in enumerate(self.jobs):
            best = best_of.get(id(p.ranked))
            if best is None:
                ranked = self.ranking(i).head(1)
                best = best_of[id(p.ranked)] = {
                    c: None if ranked.empty else ranked[c].iloc[0]
                    for c in (*BEST_COLUMNS, "vs_on_demand_v100")}
            rows.append({"job": p.job.name, "model": p.job.job.model, "steps": p.job.job.steps,
                         "work_assumed": bool(p.job.work_assumed), **best, "reason": p.reason})
        return pd.DataFrame(rows)

    def launch_of(self, index: int) -> LaunchPlacement | None:
        """Where `launch` places job `index` when its deadline policy does (None when the
        launch takes the ranking's order, or the plan was made without a launcher)."""
        return self.launch[index] if index < len(self.launch) else None

    def interval(self, job: str | int = 0) -> Interval | None:
        """Job `job`'s checkpoint interval and whether its file sets it (None: not known,
        a plan made without its files)."""
        index = job if isinstance(job, int) else next(
            i for i, p in enumerate(self.jobs) if p is self._named(job))
        return self.intervals[index] if index < len(self.intervals) else None

    def explain(self, offering: str, job: str | int = 0, *, moved_from: str | None = None,
                overheads: Overheads | None = None) -> list[str]:
        """The arithmetic of an offering's hazard and expected cost for a job, and the
        price of moving the job there, itemised (`move_here`): `offering` is its label as
        the ranking shows it ('aws us-east-1a p3.2xlarge spot')."""
        plan = self.jobs[job] if isinstance(job, int) else self._named(job)
        row = _ranked_row(plan, offering)
        lines = [f"{offering}: preemption hazard"]
        lines += ["  " + line for line in explain_hazard(row.head(1), self.evidence)[0]]
        r = row.iloc[0]
        where = simulated_words(row.head(1), self.evidence)[0]  # local preemptions: not counted
        lines += ["  " + line for line in filter(None, [assumed_rate_line(r, where)])]
        lines += list(filter(None, [gang_line(r)]))
        source = str(r.get("throughput_source", ""))
        kind = ("estimated" if r.get("throughput_estimated") else "from the job's file"
                if source.startswith("job spec") else "measured or published")
        lines.append(speed_line(plan.job, r, kind))
        # The product at its price's precision, its hours with the digits that make it
        # (the same hours on both lines): the arithmetic reads as it is done.
        span, rate, cost = hours_times(r["expected_hours"], r["usd_per_hour"],
                                       r["expected_cost"], MAX_DECIMALS)
        full, rest = _segments(float(r["work_hours"]), plan.job.checkpoint_hours)
        figures = (r["work_hours"], plan.job.checkpoint_hours, plan.job.restart_hours,
                   r["start_hours"], rest)
        places = decimals(figures)  # one line, one precision
        work, tau, restart, start, left = (hours(v, places) for v in figures)
        # What the hours would be were the rate 0, the sum of its terms as written.
        alone = plan.job.work_assumed or bool(plan.job.start_left_out)  # no start counted
        still = hours(sum_as_written([r["work_hours"]] if alone else
                                     [r["work_hours"], r["start_hours"]], places), places)
        lines.append(work_line(plan.job, r, work))
        lines.append(
            f"expected hours = (n x expm1(rate x tau) + expm1(rate x rest)) x (1/rate + "
            f"restart) + start with work {work} h, tau {tau} h, n = floor(work / tau) = "
            f"{full:,.0f}, rest {left} h, restart {restart} h, rate "
            f"{r['preemptions_per_hour']:.4g}/h, " + (
                "start left out" if alone else f"start {start} h")
            + f": expected {span} h (" + ("the work alone" if alone else
                                          "the work and the start")
            + f", {still} h, if the rate were 0)")
        interval = self.interval(job)
        if interval is not None:
            lines.append(interval.said(tau))
        # where the launcher boots no instance, its start and restarts in one line
        lines += ([booting_none_line(plan.job)] if plan.job.start_left_out else
                  [plan.job.restart_said(restart), start_line(plan.job, start)])
        lines.append(cost_line(span, rate, cost, _price_age(row.head(1), self.at)))
        lines.extend(self._move_lines(plan, offering, moved_from, overheads, interval))
        if r["excluded"]:  # what the arithmetic is of: an offering the plan leaves out
            lines.append(f"left out of the plan: {r['excluded']}")
        return lines

    def move_here(self, offering: str, moved_from: str | None = None, job: str | int = 0,
                  overheads: Overheads | None = None) -> MovePrice | None:
        """The price of moving the job to `offering` from `moved_from` (default the plan's
        choice), itemised as `migrate` and the deciders price it
        (`optimize.decision.price_move`); None when the two are one offering."""
        plan = self.jobs[job] if isinstance(job, int) else self._named(job)
        return _move_of(plan, offering, moved_from, overheads)

    def _move_lines(self, plan: JobPlan, offering: str, moved_from: str | None,
                    overheads: Overheads | None, interval: Interval | None) -> list[str]:
        if moved_from is None and plan.choices.empty:
            return []
        source = moved_from or str(plan.choices["offering"].iloc[0])
        move = _move_of(plan, offering, source, overheads)
        if move is None:  # (the plan's own choice, unless the job was said to run there)
            here = "the job runs here" if moved_from else "it is the plan's choice"
            return [f"a move here: none, {here} ({source})"]
        size = plan.job.job.checkpoint_gb
        unsized = interval is not None and not interval.size_given and not size
        # Before it runs, what a move loses is the decision model's assumption, said so
        # as a running job's move says it (`lost_work.assumed_line`).
        return [move_line(source, move, size, interval.size_key() if unsized else ""),
                assumed_line(plan.job, plan.job.overheads(overheads),
                             "before it runs, the steps a move loses are not known")]

    def _named(self, name: str) -> JobPlan:
        for p in self.jobs:
            if p.job.name == name:
                return p
        raise InvalidInput(f"job {name!r}: expected one of "
                           f"{', '.join(p.job.name for p in self.jobs)}")


def _segments(work_hours: float, tau: float) -> tuple[float, float]:
    """(n, rest): the full checkpoint intervals in the work and the work after them, as
    `optimize.decision.expected_hours` counts them."""
    if not (tau > 0 and work_hours == work_hours):
        return 0.0, work_hours
    full = float(math.floor(work_hours / tau))  # as the model's np.floor(w / tau)
    return full, work_hours - full * tau


def _move_of(plan: JobPlan, offering: str, moved_from: str | None,
             overheads: Overheads | None) -> MovePrice | None:
    """`PlanResult.move_here` for one job's plan."""
    there = _ranked_row(plan, offering).iloc[0]
    source = (_ranked_row(plan, moved_from) if moved_from is not None
              else plan.choices.head(1)).iloc[0]
    if source["offering"] == there["offering"]:
        return None
    # The job's own restart over the configuration's (`ResolvedJob.overheads`), as the
    # deciders price it.
    return price_move(plan.job.overheads(overheads), _place(source), _place(there),
                      float(source["usd_per_hour"]), float(there["usd_per_hour"]),
                      plan.job.job.checkpoint_gb, plan.job.job.checkpoint_hours)


def _ranked_row(plan: JobPlan, offering: str) -> pd.DataFrame:
    ranked = plan.ranked
    row = ranked[ranked["offering"] == offering]
    if row.empty:
        raise InvalidInput(f"offering {offering!r}: not in {plan.job.name}'s ranking; "
                           f"expected a label like {ranked['offering'].iloc[0]!r}"
                           if len(ranked) else f"offering {offering!r}: no offerings")
    return row


def _place(row: pd.Series) -> Place:
    zone = row.get("zone")
    return Place(str(row["cloud"]), str(row["region"]), "" if pd.isna(zone) else str(zone))


def resolve_all(specs: Sequence[tuple[str, JobSpec]], table: ThroughputTable,
                at: datetime, launcher: str) -> list[ResolvedJob]:
    """`resolve` each spec as `launcher` runs it (`runs.resolve`: its start as `launch`
    counts it); a sweep's jobs, which differ in name, run and envs only, are resolved once
    and share the result (and so one throughput table and one ranking)."""
    done: dict[tuple[str, str], ResolvedJob] = {}
    out = []
    for source, spec in specs:
        key = (source, spec.model_dump_json(exclude={"name", "run", "envs"}))
        first = done.get(key)
        if first is None:
            out.append(done.setdefault(key, resolve(spec, table, at, source=source,
                                                    launcher=launcher)))
        else:
            out.append(first.sibling(spec, source))
    return out


def plan(
    store: StoreLike,
    jobs: Jobs,
    *,
    at: datetime | str | None = None,
    objective: str = "cost",
    deadline: float | str | datetime | None = None,
    budget: float | None = None,
    weight: float = 0.5,
    quota: int | None = None,
    availability: Sequence[str | Path] | None = None,
    table: ThroughputTable | None = None,
    progress: Progress | None = None,
    share_instances: bool = False,
    launcher: str | None = None,
) -> PlanResult:
    """Rank offerings by expected cost and time for each job, with the prices in `store`
    as of `at` (default now); for several jobs, also place them all at once. The job
    files are read before the store is opened.

    `objective`: cost | time | tradeoff (`weight` of cost against time) |
    throughput-per-dollar (collections; per-job rankings then rank by cost). `deadline`
    (hours, '36h', '2d' or a time) overrides every spec's. `budget`: one job's budget, or
    the collection's total. `quota`: at most this many instances of a type in a region.
    `availability`: probe logs to measure preemption rates from, added to the store's
    availability observations (else per-cloud defaults). `share_instances`: in a
    collection, jobs that can run on one GPU may share multi-GPU instances, one GPU each
    (an integer program; the plan lists the instances). `table`: the throughputs
    (default the bundled ones with the user's). `launcher` (a launcher's name; default the
    configured one, `launch.launcher`): the jobs' start as `launch` on it counts it (none
    where it boots no instance), and, given, where `launch` on it places each job its
    deadline policy places (`PlanResult.launch`).
    `progress(stage, done, total)` is called as the work advances.

    Jobs identical but for their name, run and envs (a sweep's) are ranked once. A job that
    no priced offering fits gets a reason naming the filter that matched nothing and the
    values that exist (`PlanResult.ok` is then False); the planner does not raise.
    """
    [objective] = choices("objective", [objective], ALL_OBJECTIVES)  # 'Time' plans by time
    if not 0 <= weight <= 1:
        raise InvalidInput(f"weight {weight}: expected a number in [0, 1]")
    if quota is not None and quota < 1:
        raise InvalidInput(f"quota {quota}: expected a whole number >= 1")
    when = as_time(at, "at")
    specs = job_specs(jobs, progress)
    if not specs:
        raise InvalidInput("jobs: expected at least one job spec")
    overrides: dict = {}
    if deadline is not None:
        try:
            overrides["deadline"] = parse_hours(deadline)
        except ValueError as exc:
            raise InvalidInput(f"deadline: {exc}") from None
        due = overrides["deadline"]
        if isinstance(due, datetime) and utc(due) <= when:  # said of what was typed
            raise InvalidInput(f"deadline {deadline}: {utc(due):%Y-%m-%dT%H:%MZ} is not after "
                               f"the planning time {when:%Y-%m-%dT%H:%MZ}")
    if "deadline" not in overrides:  # a deadline passed is refused before anything is read
        refuse_passed_deadlines(specs, when)
    several = len(specs) > 1
    if budget is not None and not several:
        if budget <= 0:
            raise InvalidInput(f"budget {budget}: expected a positive amount of USD")
        overrides["budget"] = budget
    # One pass: what launch's decision reads of the store at `when` (`launch_placements`:
    # the rates, spot observations, quotas, the stored prices) is the plan's, read once.
    with using(store) as opened, one_pass():  # once: its measured speeds, then its prices
        if table is None:  # the bundled figures, costsched's measurements, the user's
            table = table_with_measured(opened)
        resolved = resolve_all([(source, _override(spec, overrides))
                                for source, spec in specs], table, when,
                               launcher or effective().launch.launcher)
        _step(progress, "reading prices")
        filters = price_filters(resolved)
        cpu = any(r.cpu for r in resolved)  # CPU jobs: CPU instance types are offerings
        # Superseded bundled prices too: ranked, left out (`rank.SUPERSEDED`), and named.
        frame = prices_at(opened, when, include_cpu=cpu, superseded=True, **filters)
        market = frame if not filters else None
        stored = spot_markets(opened, when)  # whose bundled spot prices the store's replace

        def explain(job: Workload) -> Missing | None:
            nonlocal market
            if market is None:  # every price, to say what exists: only when needed
                market = prices_at(opened, when, include_cpu=cpu)
            return with_dropped(unmatched(job, market, when, spot_markets=stored,
                                          limits=getattr(job, "limits", {})),
                                getattr(job, "notes", ()))

        if isinstance(availability, (str, Path)):
            availability = [availability]
        for path in availability or ():
            file_limits.check(path, file_limits.IMPORT, effective().files.import_mb)
        # The preemptions costsched's own jobs met count as they do at launch: the rates
        # of launch's market of `when` (`Market.rates`), read once for the plan and for
        # launch's own decision (`launch_placements`); a plan prices what the launch will.
        rates = (decision_rates(opened, when, preemption_rates(lifetimes(availability)))
                 if availability else market_at(opened, when).rates)
        quotas = QuotaFacts.of(opened)
        offerings = quotas.attach(prepare(frame, rates))
        per_job = objective if objective in OBJECTIVES else "cost"
        plans = plan_jobs(resolved, offerings, per_job, weight, explain=explain,
                          unlaunched=_unlaunched(launcher, resolved), progress=progress)
        from costsched.service.budget_short import with_budget_raised, with_options_said

        # the budget a launch asks for; the options that override the files' keys, named
        raised = [with_budget_raised(p) for p in plans]
        plans = [with_options_said(p, overrides) for p in raised]
        # Said once, of the clouds the jobs may be placed on (a ranking shared is read once).
        rankings = {id(p.ranked): p for p in plans}.values()
        quota_note = quotas.unknown_note({c for p in rankings for c in p.choices["cloud"]})
        # (priced for the launcher that buys it: a job ranked again as it runs it)
        booked = booked_for(opened, plans, when, replan=lambda job: plan_jobs(
            [job], offerings, per_job, weight)[0])
        launch = ()
        if launcher is not None and all(p.best is not None for p in plans):
            if availability is None and per_job == "cost" and not filters:
                _share_rankings(market_at(opened, when), resolved, raised, cpu, offerings)
            launch = launch_placements(opened, resolved, when, launcher)
        last = {} if launcher is None else tried_last(market_at(opened, when), launcher)
    collection = None
    if several:
        from costsched.optimize.collection import POLICIES, plan_collection_shared
        from costsched.optimize.collection.build import plan_collection

        _step(progress, "placing the jobs together")
        collection_objective = objective if objective in POLICIES else "cost"
        place = plan_collection_shared if share_instances else plan_collection
        collection = place(resolved, offerings, collection_objective, quota, budget)
    intervals = tuple(interval_of(spec, r.checkpoint_hours, source)
                      for (source, spec), r in zip(specs, resolved, strict=True))
    return PlanResult(when, objective, plans, collection, rates, quota_note=quota_note,
                      booked=booked, intervals=intervals, launch=launch, tried_last=last)


def _unlaunched(launcher: str | None, jobs: Sequence[ResolvedJob]
                ) -> Callable[[pd.Series], str] | None:
    """Why the launcher named `launcher` does not start an offering (`unready.unlaunched`),
    for a plan of a task with `ordered:` alternatives (one passed over for it is said);
    None without such a task or launcher, or for one not made on this machine (its SDK or
    account not set up: `launcher_line` says so)."""
    if launcher is None or not any(j.order for j in jobs):
        return None
    from costsched.service.jobs.unready import unlaunched
    from launchers import make_launcher

    try:
        return unlaunched(make_launcher(launcher))  # as `launch` makes it
    except InvalidInput:
        return None


def _share_rankings(market: Market, resolved: Sequence[ResolvedJob],
                    plans: Sequence[JobPlan], cpu: bool, offerings: pd.DataFrame) -> None:
    """Give launch's decision (`launch_placements`: `jobs.decider.planned`) the plan's own
    ranking of each job where it asks the same question: the offerings of the same prices
    (no filter; the superseded ones, ranked here and left out, are left out of its
    decision too), rates and quotas, ranked by cost, and which of them its quotas do not
    hold (`offerings`: the plan's, quotas attached); a job whose frame differs (a GPU job
    beside a CPU job, ranked here with CPU types) is ranked again there."""
    current = offerings[~offerings["superseded"]]
    for job, plan in zip(resolved, plans, strict=True):
        if job.cpu == cpu:
            market.plan(job, lambda plan=plan: plan)
            market.share_over_quota(job, current)


def _price_age(row: pd.DataFrame, at: datetime) -> Stale | None:
    """How old the price of an explained offering is, where it is older than the
    configuration's `prices.stale_after`, else None."""
    from costsched.price_ages import stale_after_hours
    from costsched.service.staleness import stale

    return stale(row, at, stale_after_hours()) if "effective_at" in row else None


def _step(progress: Progress | None, stage: str) -> None:
    if progress is not None:
        progress(stage, 0, 1)


def _override(spec: JobSpec, overrides: dict) -> JobSpec:
    if not overrides:
        return spec
    constraints = spec.constraints.model_copy(update=overrides)
    return spec.model_copy(update={"constraints": constraints})


def price_filters(jobs: list[ResolvedJob]) -> dict[str, list[str]]:
    """The union of the jobs' filters ('any' wins), so one query serves them all."""
    out: dict[str, list[str]] = {}
    for name, attr in (("clouds", "clouds"), ("regions", "regions"), ("markets", "markets"),
                       ("gpu_models", "gpu_models")):
        values = [getattr(j.job.constraints, attr) for j in jobs]
        if all(values):
            out[name] = sorted({v for vs in values for v in vs})
    if "markets" in out:  # keep on-demand prices: the baseline needs them
        out["markets"] = sorted({*out["markets"], "on_demand"})
    if "gpu_models" in out:
        out["gpu_models"] = sorted({*out["gpu_models"], "V100"})
    return out

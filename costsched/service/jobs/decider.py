"""One decider for a running job: `decide(job, market, now) -> Decision`.

Whatever asks (a launch, a recovery, `start`, the watcher, `migrate`, `--to`, the daemon's
re-plan), a job is decided by the decider its stored policy names: the price-driven
decider (a `costsched.policies` policy, the decision model's expected cost) or the
deadline decider (a `costsched.policies.deadline` policy). Both answer in one shape, a
`Decision`: the offering to run on, the ranked offerings to fall back to
(`alternatives`), the expected cost of staying and of moving, the move's price itemised
(`move`) and the reason. `decider_for` is the one place that tells the two apart; a new
reason to decide is one more decider or step here, not a new path through the service (a
budget's cap: `BudgetDecider`, asked by `caps.enforce`). The deciding itself is
`costsched.decide`'s, the core the backtests replay; this module reads the market.

The market is built once per pass (`market_at`): prices, preemption rates, the offerings
that just met no capacity, and the planner's prepared offerings, read once for every job.
Every decider prices the rest of a job at the speed it runs at (`at_pace`: its measured
speed where one is trusted, else its plan's; `costsched.throughput_rest`); a job that
reported more steps than it declares has a rest that cannot be priced: it stays where it
is, never priced at $0 (`unpriced`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING

from costsched import own_budget, rest_cost
from costsched.amounts import apart, decimals, given, usd
from costsched.decide.price import cheapest_move, fitting
from costsched.jobspec import ResolvedJob
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.migration.launcher import Launcher
from costsched.migration.machine import offering_of
from costsched.model import BOOKED_MARKETS, InvalidInput
from costsched.optimize.decision import MovePrice, Overheads
from costsched.optimize.job import Workload
from costsched.optimize.planner import JobPlan, plan_jobs
from costsched.optimize.quotas import QuotaCost, quota_cost
from costsched.optimize.unmatched import Missing, unmatched, with_dropped
from costsched.optimize.unmatched_estimates import estimate_said
from costsched.policies import POLICIES, JobState, OfferingKey, make_policy, view_from_prices
from costsched.policies.base import JOB_SCOPE
from costsched.prices import spot_markets
from costsched.service.deadline_terms import DEFAULT_DEADLINE_POLICY
from costsched.service.decide import (
    Ask,
    Decision,
    OfferingName,
    decide_all,
    decide_to,
)
from costsched.service.jobs.budget_refusal import BudgetShort as BudgetShort
from costsched.service.jobs.candidates import candidates_of, launchable, runs_here
from costsched.service.jobs.carry import readable, stores_of
from costsched.service.jobs.checkpoint_seen import Reported, measured_checkpoint_gb
from costsched.service.jobs.deadline_said import as_asked, unavailable
from costsched.service.jobs.lost_work import LostWork, lost_works, move_sources, with_lost
from costsched.service.jobs.market import Market, market_at, measured_rates  # noqa: F401
from costsched.service.jobs.named_offering import picked
from costsched.service.jobs.reasons import (  # noqa: F401 (also theirs, from here)
    ASSUMED_MARK,
    asked_unpriced,
    deadline_dollars,
    itemised,
    label,
    move_reason,
    none_fits,
)
from costsched.service.jobs.reasons import parts as _parts
from costsched.service.jobs.rest_pace import estimated_pace
from costsched.service.jobs.runs import RunningJob, nodes_of
from costsched.service.speeds import paced, short_work
from costsched.store import PriceStore
from costsched.store.booked import Booking

if TYPE_CHECKING:
    from costsched.own_budget import OwnBudget

# --- the job, as a decider sees it ---------------------------------------------------------


@dataclass(frozen=True)
class JobNow:
    """A job to decide for now: its spec, creation, stored policy, home region, where it
    runs (`current`; None when it is to be placed: a launch, a recovery, a start), its
    steps left, the offerings it just lost, and the user's own pick (`offering`, at
    launch). `checkpoint_gb`: its newest checkpoint's size where one is measured;
    `reported`: its step and its newest checkpoint's as its instance reports them (what a
    move now loses: `lost_work`), None where it reports no checkpoint step."""

    resolved: ResolvedJob
    created_at: datetime
    policy: str
    home_region: str
    current: OfferingKey | None
    steps_left: float
    lost: frozenset[OfferingKey] = frozenset()
    offering: str | None = None
    checkpoint_gb: float | None = None
    first: bool = False  # a new job: a deadline it cannot meet is refused
    job_id: int | None = None  # its id in the job store (None: not stored yet)
    booked: tuple[Booking, ...] = ()  # its bookings (read by its id when not given)
    # Why the rest cannot be priced: it reported more steps than it declares ('': it can).
    short: str = ""
    # A stored job's own budget as it stands (or as `start --budget` gives it) and what it
    # spent: a placement prices its steps left against what is left (`place` reads it).
    budget: OwnBudget | None = None
    # Run by the local launcher: what its own simulated instances met counts for it.
    here: bool = False
    # Its work is given as hours on a reference GPU: a rest `short` says is not measured is
    # priced as all of its hours, its figures marked as assumed; never moved on them.
    assumed: bool = False
    reported: Reported | None = None

    @classmethod
    def of(cls, run: RunningJob, current: OfferingKey | None, steps_left: float | None,
           lost: Collection[OfferingKey] = (), reported: Reported | None = None) -> JobNow:
        """The job of `run`, kept to the clouds that can read its checkpoints (`carry`); its
        checkpoint's size is measured where a move would copy it. A job whose work is not
        given (`steps_left` None) is placed by its plan's assumed hour, as its plan ranked
        the offerings (by the cost of an hour of work); its rest is never priced (`short`):
        where it runs, it stays."""
        resolved = readable(run.resolved, stores_of(run), run.record.name,
                            current[0] if current else None)
        left = resolved.job.steps if steps_left is None else steps_left
        return cls(resolved, run.record.created_at, run.record.policy, run.home_region,
                   current, left, frozenset(lost),
                   checkpoint_gb=(measured_checkpoint_gb(run.checkpoint_uri)
                                  if current is not None else None), job_id=run.record.id,
                   short=short_work(run.record), here=runs_here(run.launcher),
                   assumed=run.record.steps_total is not None and not paced(run.record.spec),
                   reported=reported)

    def rest(self) -> ResolvedJob:
        """What a placement plans: a stored job's steps left (from the step it resumes at)
        against what is left of its own budget (`budget`), started again from its
        checkpoint unless `first` (`resumes`: its start is a restart); a new job as it is."""
        j = self.resolved.job
        if self.job_id is None:
            return self.resolved
        steps = self.steps_left if 0 < self.steps_left < j.steps else j.steps
        budget = j.constraints.budget_usd if self.budget is None else self.budget.left_usd
        return replace(self.resolved, resumes=not self.first, job=replace(
            j, steps=steps, constraints=replace(j.constraints, budget_usd=budget)))

    @property
    def size_gb(self) -> float:
        """The checkpoint a move copies: the newest one's size, else the spec's."""
        return (self.checkpoint_gb if self.checkpoint_gb is not None
                else self.resolved.job.checkpoint_gb)


# --- the deciders ---------------------------------------------------------------------------


class Decider(ABC):
    """Decides where a job runs now. `decide_all`: many jobs of one market at once."""

    name: str

    @abstractmethod
    def decide(self, job: JobNow, market: Market, now: datetime) -> Decision:
        """Where `job` runs now, with its fallbacks, costs, move price and reason."""

    def decide_all(self, jobs: Sequence[JobNow], market: Market,
                   now: datetime) -> list[Decision]:
        return [self.decide(job, market, now) for job in jobs]

    @property
    def daily(self) -> bool:
        """Whether its moves are held to one a day (a deadline policy re-decides every
        period with its own hysteresis; a move the user asks for is theirs to time)."""
        return False


@dataclass(frozen=True)
class PriceDecider(Decider):
    """The price-driven decider: a placement by the decision model's ranking of every
    offering the job allows; a move by `policy` (a `costsched.policies` name), carried out
    when it pays by more than `margin` (0 with `force`)."""

    policy: str = "dynamic-aware"
    margin: float = 0.05
    overheads: Overheads | None = None  # None: each job's own (`ResolvedJob.overheads`)
    force: bool = False

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.policy

    @property
    def daily(self) -> bool:
        return not self.force

    def decide(self, job: JobNow, market: Market, now: datetime) -> Decision:
        return self.decide_all([job], market, now)[0]

    def decide_all(self, jobs: Sequence[JobNow], market: Market,
                   now: datetime) -> list[Decision]:
        out: dict[int, Decision] = {}
        jobs = at_pace(jobs, market)
        moving = [(i, j) for i, j in enumerate(jobs) if j.current is not None
                  and (not j.short or j.assumed)]
        for i, job in enumerate(jobs):
            if job.current is None:
                out[i] = self._placed(job, market, now)
            elif job.short and not job.assumed:
                out[i] = unpriced(job, now, self.policy)
        if moving:
            margin = 0.0 if self.force else self.margin
            lost = lost_works(market.store, [(j.job_id, j.resolved, j.reported)
                                              for _, j in moving], now)
            asks = [Ask(replace(j.resolved.job, checkpoint_gb=j.size_gb), j.home_region,
                        j.current, j.steps_left, j.resolved.table, j.resolved.nodes,
                        blocked=market.over_quota(j.resolved),
                        overheads=j.resolved.overheads(self.overheads),
                        lost_work_hours=None if w is None else w.hours)
                    for (_, j), w in zip(moving, lost, strict=True)]
            found = decide_all(market.store, asks, policy=self.policy, at=now, margin=margin,
                               overheads=self.overheads, measured_rates=market.rates)
            for (i, j), d, w in zip(moving, found, lost, strict=True):
                out[i] = with_lost(replace(d, reason=move_reason(d, margin)) if not j.short
                                   else assumed_stay(d, margin, j.short), w, j.resolved,
                                   self.overheads, j.size_gb)
        return [out[i] for i in range(len(jobs))]

    def _placed(self, job: JobNow, market: Market, now: datetime) -> Decision:
        """A first placement (or a recovery): the planner's ranking by expected cost, the
        user's `offering` alone when they named one."""
        rest = job.rest()
        plan = planned(rest, market, now)
        if plan.choices.empty and job.budget is not None:
            _refuse_short(job, rest, plan, market.full_for(job.here))
        choices = picked(plan.choices, plan.ranked, job.offering)
        ranked = []
        for row in choices.itertuples():
            o = offering_of({"key": [row.cloud, row.region, row.zone, row.instance_type,
                                     row.market, row.os],
                             "gpu_model": row.gpu_model, "gpu_count": row.gpu_count})
            # One instance's price, as every offering is quoted and a placement keeps it
            # (a gang's ranking prices its N instances: `planner.plan_job`).
            each = float(row.usd_per_hour) / max(int(getattr(row, "nodes", 1) or 1), 1)
            ranked.append((o, each, float(getattr(row, "expected_cost", float("nan")))))
        if not ranked:
            raise InvalidInput(plan.reason or f"job {job.resolved.name}: no offering meets "
                               "its constraints now")
        first, price, cost = ranked[0]
        paid = quota_cost(choices)
        return Decision(now, self.policy, None, first.key, first, price, float("nan"), cost,
                        alternatives=tuple((o, p) for o, p, _ in ranked[1:]),
                        rest=rest_cost.of_row(choices.iloc[0]),
                        reason=f"placed on {label(first.key)}, the least expected cost"
                        + _quota_said(choices, paid),
                        quota_cost="" if paid is None else paid.line())


def _refuse_short(job: JobNow, rest: ResolvedJob, plan: JobPlan,
                  last: Collection[OfferingKey] = ()) -> None:
    """BudgetShort when only its own budget keeps the stored `job` from every offering,
    priced where its start would be placed: past those a launch tries last (`last`, where
    it met no capacity lately: `tried_last.launch_first`)."""
    from costsched.service.jobs.tried_last import launch_first

    assert job.budget is not None  # noqa: S101 - a stored job's placement
    cheapest = launch_first(rest, plan.ranked, last)
    if cheapest is None or cheapest["excluded"] != "over budget":
        return  # something else (a deadline, its filters) keeps it: its plan says what
    raise BudgetShort(rest.name, job.budget, rest.job.steps, str(cheapest["offering"]),
                      float(cheapest["expected_cost"]), float(cheapest["usd_per_hour"]),
                      estimate_said(rest, cheapest),
                      (str(cheapest["gpu_model"]), int(cheapest["gpu_count"])),
                      started=rest.start_hours > 0, rest=rest_cost.of_row(cheapest))


def _quota_said(choices: pd.DataFrame, paid: QuotaCost | None) -> str:
    """What the account's quotas did to a placement ranked `choices` (first the chosen):
    nothing fits (the cheapest is tried all the same), or what going where they hold
    costs in dollars (`paid`; '' when they cost nothing)."""
    over = str(choices["quota"].iloc[0]) if "quota" in choices else ""
    if over:
        return f"; no offering is within the account's quotas ({over})"
    return "" if paid is None else f" the account's quotas hold; {paid.line()}"


def planned(resolved: ResolvedJob, market: Market, now: datetime) -> JobPlan:
    """The job's plan as `costsched plan` makes it, with the same reason when it has none
    (`optimize.unmatched`, from every price of the pass); made once in `market` (a launch's
    budget check and its placement read the one plan: `Market.plan`)."""
    if now != market.when:  # (a market is of one instant: its plans are of it)
        return _planned(resolved, market, now)
    return market.plan(resolved, lambda: _planned(resolved, market, now))


def _planned(resolved: ResolvedJob, market: Market, now: datetime) -> JobPlan:
    offerings = market.offerings_for(resolved)

    def explain(job: Workload) -> Missing | None:
        return with_dropped(unmatched(job, offerings, now, now,
                                      spot_markets(market.store, now)),
                            getattr(job, "notes", ()))

    from costsched.service.budget_short import with_budget_raised

    # a budget refusal says the budget that launches it, as `plan` says it
    return with_budget_raised(plan_jobs([resolved], offerings, explain=explain)[0])


@dataclass(frozen=True)
class DeadlineDecider(Decider):
    """The deadline decider: a `costsched.policies.deadline` policy places the job each
    period (spot where it is, on-demand when the deadline needs it)."""

    policy: str = DEFAULT_DEADLINE_POLICY
    overheads: Overheads | None = None  # None: each job's own (`ResolvedJob.overheads`)

    @property
    def name(self) -> str:  # type: ignore[override]
        return self.policy

    def decide(self, job: JobNow, market: Market, now: datetime) -> Decision:
        from costsched.service.deadline_jobs import NoSpot, decide_deadline

        [job] = at_pace([job], market)
        if job.current is not None and job.short:
            return unpriced(job, now, self.policy)
        ranked = None  # a job placed again is ranked by its market alone, as before
        if job.first:  # a new job that cannot be planned: refused as `plan` says why
            plan = planned(job.resolved, market, now)
            if plan.reason:
                raise InvalidInput(plan.reason)
            ranked = plan.ranked  # its market's ranking: the same offerings, ranked once
        [lost] = (lost_works(market.store, [(job.job_id, job.resolved, job.reported)], now)
                  if job.current is not None else [None])
        try:
            d = decide_deadline(market.store, job.resolved, created_at=job.created_at, at=now,
                                steps_left=job.steps_left, current=job.current,
                                policy=self.policy,
                                overheads=job.resolved.overheads(self.overheads),
                                unavailable=unavailable(market.full_for(job.here),
                                                        market.over_quota(job.resolved)
                                                        - {job.current}, job.lost),
                                measured_rates=market.rates, late_ok=not job.first,
                                # (read only to rank it: not when its plan's is given)
                                offerings=(market.offerings_for(job.resolved)
                                           if ranked is None else None),
                                checkpoint_gb=job.size_gb,
                                booked=job.booked or (
                                    () if job.job_id is None else
                                    tuple(market.store.booked.of_job(job.job_id))),
                                local_too=job.here,
                                lost_work_hours=None if lost is None else lost.hours,
                                ranked=ranked)
        except NoSpot as exc:  # nothing to weigh: the planner's choice, as `plan` shows it
            d = PriceDecider(overheads=self.overheads).decide(job, market, now)
            return replace(d, reason=f"{self.policy} (deadline {_due(job)}): {exc}; "
                                     f"{d.reason}")
        if job.current is not None and not d.moves:
            d = as_asked(d, lambda key: _asked(key, job, market, now, lost, self.overheads))
        verb = "stay on" if not d.moves else "move to" if job.current else "placed on"
        booked = (f" (booked capacity, reservation {d.reservation}: paid already)"
                  if d.reservation else "; booked capacity left before its end"
                  if job.current is not None and job.current[4] in BOOKED_MARKETS
                  and d.moves else "")
        return with_lost(replace(d, reason=f"{self.policy} (deadline {_due(job)}): {verb} "
                                           f"{label(d.choice)}{booked}"
                                           + (deadline_dollars(d) if job.current is not None
                                              else (itemised(d) and ', the move' + itemised(d))
                                              + (d.why and f": {d.why}"))),
                         lost, job.resolved, self.overheads, job.size_gb)


def _asked(key: OfferingKey, job: JobNow, market: Market, now: datetime,
           lost: LostWork | None, overheads: Overheads | None
           ) -> tuple[float, MovePrice] | None:
    """What a move of `job` to `key` costs as `migrate --to` prices it (`AskedDecider`):
    the expected cost of its rest there and the move; None where it cannot be priced."""
    where = OfferingName(key[0], key[2] or key[1], key[3], key[4])
    try:
        asked = AskedDecider(where, overheads)._decided(job, market, now, lost)
    except InvalidInput:
        return None
    if asked.move is None or asked.choice_usd != asked.choice_usd:
        return None
    return float(asked.choice_usd), asked.move


@dataclass(frozen=True)
class AskedDecider(Decider):
    """The user's own choice (`migrate --to`): there, whatever it costs (its reason says
    how much)."""

    target: OfferingName
    overheads: Overheads | None = None  # None: each job's own (`ResolvedJob.overheads`)
    name: str = "asked"

    def decide(self, job: JobNow, market: Market, now: datetime) -> Decision:
        assert job.current is not None  # noqa: S101 - a move of a placed job
        [job] = at_pace([job], market)
        [lost] = lost_works(market.store, [(job.job_id, job.resolved, job.reported)], now)
        return with_lost(self._decided(job, market, now, lost), lost, job.resolved,
                         self.overheads, job.size_gb)

    def _decided(self, job: JobNow, market: Market, now: datetime,
                 lost: LostWork | None) -> Decision:
        assert job.current is not None  # noqa: S101 - a move of a placed job
        d = decide_to(market.store, replace(job.resolved.job, checkpoint_gb=job.size_gb),
                      self.target, current=job.current, steps_left=job.steps_left, at=now,
                      table=job.resolved.table,
                      overheads=job.resolved.overheads(self.overheads),
                      measured_rates=market.rates,
                      lost_work_hours=None if lost is None else lost.hours,
                      prices=market.prices)
        if job.short and job.assumed:  # its rest priced as all of its hours: so marked
            return replace(d, reason=f"{move_reason(d, 0.0, asked=True, mark=ASSUMED_MARK)}"
                                     f"; {ASSUMED_MARK} assumed: {job.short}")
        if job.short:  # the move's own price is known; the rest, here or there, is not
            d = replace(d, stay_usd=float("nan"), choice_usd=float("nan"))
            return replace(d, reason=asked_unpriced(d, job.short))
        estimated = "" if not d.moves or d.offering is None else estimated_pace(
            job.resolved.table, job.resolved.job.model, d.offering.gpu_model,
            d.offering.gpu_count)
        if estimated:  # the speed there is estimated, not measured: so marked, as `plan` does
            return replace(d, reason=f"{move_reason(d, 0.0, asked=True, there_mark=ASSUMED_MARK)}"
                                     f"; {ASSUMED_MARK} {estimated}")
        return replace(d, reason=move_reason(d, 0.0, asked=True))


# Whose scope a budget's move chooses in: every offering the job allows (`JOB_SCOPE`).
DEFAULT_PRICE_POLICY = "dynamic-aware"


@dataclass(frozen=True)
class BudgetDecider(Decider):
    """At a budget's cap, where the config says move rather than stop: of the offerings the
    job allows that are cheaper by the hour than where it runs, the one whose expected cost
    of its steps left, the move included, is least and fits in what is left of the budget
    (`left_usd`; `decide.price.fitting`). Its decision stays where the job is (no move)
    when none fits: the job is then stopped as at any cap."""

    left_usd: float
    overheads: Overheads | None = None  # None: each job's own (`ResolvedJob.overheads`)
    name: str = "budget"

    def decide(self, job: JobNow, market: Market, now: datetime) -> Decision:
        assert job.current is not None  # noqa: S101 - a move of a placed job
        [job] = at_pace([job], market)
        if job.short:  # nothing can be shown to finish it within what is left
            return unpriced(job, now, self.name)
        frame = market.cpu_frame if job.resolved.cpu else market.frame
        view = view_from_prices(frame, now, job.resolved.table, job.resolved.job.model,
                                market.rates)
        nodes = job.resolved.nodes
        if nodes > 1:  # a gang: N instances' price and hazard; its checkpoint moves once
            view = replace(view, prices=view.prices * nodes, derived={},
                           preemptions_per_hour=view.preemptions_per_hour * nodes)
        [lost] = lost_works(market.store, [(job.job_id, job.resolved, job.reported)], now)
        state = JobState(replace(job.resolved.job, checkpoint_gb=job.size_gb),
                         job.home_region, job.steps_left, job.current,
                         job.resolved.overheads(self.overheads),
                         None if lost is None else lost.hours)
        usable = make_policy(DEFAULT_PRICE_POLICY, scope=JOB_SCOPE).candidates(view, state)
        over = market.over_quota(job.resolved) - {job.current}
        if over:  # never a move to an offering the account's quota does not hold
            usable = usable & ~np.array([view.key(r) in over for r in range(len(usable))])
        found = fitting(view, state, usable, self.left_usd, now)
        if found is None:
            row = view.row(job.current)
            price = float("nan") if row is None else float(view.prices[row])
            here = (view.offering(job.current) if row is not None else
                    offering_of({"key": list(job.current), "gpu_model": "", "gpu_count": 0}))
            cheapest = cheapest_move(view, state, usable, now)
            why = none_fits(self.left_usd, cheapest, priced_here=row is not None)
            if row is not None and cheapest is not None and cheapest.move is not None:
                why += "; " + move_sources(cheapest.move, lost, job.resolved, self.overheads,
                                           job.size_gb)
            return Decision(now, self.name, job.current, job.current, here, price,
                            float("nan"), float("nan"), reason=why)
        places = decimals([found.choice_usd, self.left_usd, *_parts(found)])
        return with_lost(replace(found, reason=(
            f"move to {label(found.choice)}: "
            f"{usd(found.choice_usd, places)} expected to finish there including the move"
            f"{itemised(found, places)}, within the {given(self.left_usd, places)} left")),
            lost, job.resolved, self.overheads, job.size_gb)


def at_pace(jobs: Sequence[JobNow], market: Market) -> list[JobNow]:
    """Each job priced at the speed the rest of it runs at (`Market.rest_tables`)."""
    tables = market.rest_tables([(j.job_id, j.resolved) for j in jobs])
    return [j if t is j.resolved.table else replace(j, resolved=replace(j.resolved, table=t))
            for j, t in zip(jobs, tables, strict=True)]


def assumed_stay(d: Decision, margin: float, short: str) -> Decision:
    """The decision on a job whose rest is priced as all of its hours (`JobNow.assumed`):
    its figures said, marked as assumed, but where it runs it stays (no move is made on
    an assumed rest)."""
    if d.moves:
        d = replace(d, held="no move is made on an assumed rest")
    return replace(d, reason=f"{move_reason(d, margin, mark=ASSUMED_MARK)}; {ASSUMED_MARK} "
                             f"assumed: {short}")


def unpriced(job: JobNow, now: datetime, policy: str) -> Decision:
    """The decision on a placed job whose rest cannot be priced (`JobNow.short`): it
    stays where it is (no move can be shown to pay), its costs unknown (NaN), never $0."""
    assert job.current is not None  # noqa: S101 - a decision on a placed job
    here = offering_of({"key": list(job.current), "gpu_model": "", "gpu_count": 0})
    return Decision(now, policy, job.current, job.current, here, float("nan"),
                    float("nan"), float("nan"), reason=f"stay: {job.short}")


def decider_for(policy: str, *, cost_policy: str = "dynamic-aware", margin: float = 0.05,
                overheads: Overheads | None = None, force: bool = False,
                target: OfferingName | None = None) -> Decider:
    """The decider of a job whose stored policy is `policy`: the user's `target` when
    given, the deadline decider for a deadline policy, else the price-driven decider (by
    `cost_policy`, the configured one, when the stored policy is not a policy's name)."""
    if target is not None:
        return AskedDecider(target, overheads)
    if policy not in POLICIES and is_deadline(policy):
        return DeadlineDecider(policy, overheads)
    return PriceDecider(policy if policy in POLICIES else cost_policy, margin, overheads,
                        force)


def is_deadline(policy: str) -> bool:
    """True when `policy` (a job's stored policy) is a deadline policy (their machinery is
    loaded to tell, as for a job one of them places)."""
    from costsched.policies.deadline import DEADLINE_POLICIES

    return policy in DEADLINE_POLICIES


# --- budgets: checked before moves ---------------------------------------------------------


def budget_verdict(name: str, spent_usd: float, next_usd: float, cap_usd: float,
                   claims_usd: float = 0.0, span: str = "", places: int | None = None
                   ) -> str | None:
    """The budget check that comes before any move (`caps.enforce` asks it at every watch):
    why the job must stop now, or None. It stops when what was spent plus the next watch
    interval's charge (plus `claims_usd`: what the budget's earlier jobs need to finish)
    would pass the cap: no job passes its budget but by what a late check lets it spend.
    `span`: the interval charged and at what price, in words (`own_budget.ahead_said`).
    `places`: the precision of the line it stands in, where a hint is joined to it (chosen
    from both halves' amounts: `caps.line_places`); by default, its own."""
    if not own_budget.passes([spent_usd, next_usd, claims_usd], cap_usd):
        return None
    # One precision for the line, fine enough to show the sum passing the cap.
    if places is None:
        places = apart([spent_usd, next_usd, claims_usd], cap_usd)
    spent, next_, claimed = (usd(v, places) for v in (spent_usd, next_usd, claims_usd))
    cap = given(cap_usd, places)  # at the line's precision ('$0.0040' beside '$0.0035')
    claims = f" + {claimed} its earlier jobs need to finish" if claims_usd > 0 else ""
    charged = f" ({span})" if span else ""
    return (f"{spent} spent + {next_} for the next watch interval{charged}{claims} would "
            f"pass the budget of {cap}")


# --- what a placement tries ----------------------------------------------------------------


def place(store: PriceStore, job: JobNow, launcher: Launcher, when: datetime,
          exclude: Collection[OfferingKey] = ()) -> list[dict]:
    """The offerings a launch, a recovery or a start tries, best first: the job's
    decider's choice (the first with its expected cost, `expected_usd`, where it is
    known), then its fallbacks (`candidates_of`). A stored job is placed by its steps left
    against what is left of its own budget as it stands (`JobNow.budget`, read here when
    not given): BudgetShort when that is too little."""
    return placement(store, job, launcher, when, exclude)[1]


def placement(store: PriceStore, job: JobNow, launcher: Launcher, when: datetime,
              exclude: Collection[OfferingKey] = (), *, tried: bool = True
              ) -> tuple[Decision, list[dict]]:
    """`place`, with the decision it tries first (its reason said at launch). Not `tried`
    (the decision alone, as `plan` asks it): no offerings listed, but the same refusal
    when the launcher can start none of them."""
    market = market_at(store, when)
    job = replace(job, here=runs_here(launcher.name))
    if job.job_id is not None and job.budget is None:
        record = store.jobs.get(job.job_id)
        job = replace(job, budget=own_budget.of_job(store, record, when,
                                                    nodes_of(record.spec)))
    # its restarts priced as configured (the job's file's own boot and set-up over them)
    decision = decider_for(job.policy, overheads=job.resolved.configured).decide(
        job, market, when)
    if not tried:
        launchable(decision, launcher, market, job.resolved.name, exclude, job.resolved)
        return decision, []
    out = candidates_of(decision, launcher, market, job.resolved.name, exclude,
                        over_quota=market.over_quota(job.resolved), resolved=job.resolved)
    if decision.choice_usd == decision.choice_usd and out[0]["key"] == list(decision.choice):
        out[0]["expected_usd"] = float(decision.choice_usd)  # its rest, as planned
    return decision, out


def _due(job: JobNow) -> str:
    from costsched.service.deadline_terms import deadline_at

    due = deadline_at(job.resolved, job.created_at)
    return "none" if due is None else f"{due:%Y-%m-%d %H:%M} UTC"

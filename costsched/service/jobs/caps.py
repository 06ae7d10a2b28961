"""Budgets that stop spending: each job's own budget (`constraints.budget`, its whole life)
and the named budgets of the config (`budgets.named`: a team's or project's USD over a day,
a month or in total, that jobs join by `constraints.budget_name` or by their labels).

Spend is metered while jobs run, from the stored prices (`costsched.costs`), at every
watch (the daemon's watcher and `status` reconcile). A budget's running jobs are charged
ahead for one watch interval at their offering's stored price (`committed`), or for their
rest at their pace where that is shorter (`own_budget.ahead_seconds`: a job whose spend
plus its rest fits its cap runs to its end; its rest is charged again at each watch while
it runs, so it passes its cap by no more than a finishing job may): when what was
spent plus that charge would pass the cap, the decider's budget check says stop
(`decider.budget_verdict`), and the job is asked to checkpoint, then stopped (its
checkpoints are kept; `start` resumes it), or, where the config says so (`at_cap = "move"`),
moved to the offering that finishes it within what is left, when one does. So a job costs
no more than its budget while the checks keep their pace, and no more than its budget plus
its price over the time by which a check comes more than a watch interval after the one
before (a pass that outlasts its interval makes the next one late). Of a named budget's
jobs, the newest is stopped first: the jobs that were running within the budget keep
running. A job that has done all its declared steps is not stopped at a cap for a watch
interval after it reported its last step: it is left to end, or, reaching its end as its
stop is asked, closed as succeeded. One still running after that (it hangs after its
training) is charged and stopped at its cap like any other job, and closed as succeeded.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING

from costsched import own_budget
from costsched.amounts import CHARGED
from costsched.config import BudgetsConfig, NamedBudget
from costsched.costs import charge
from costsched.migration.launcher import Launcher
from costsched.model import InvalidInput
from costsched.optimize.decision import Overheads
from costsched.own_budget import raise_budget as raise_budget  # (`service.jobs`)
from costsched.rest_cost import RestCost
from costsched.service.jobs.budget_periods import period_end
from costsched.service.jobs.budget_periods import period_start as period_start  # (`caps.`)
from costsched.service.jobs.budget_state import BudgetState as BudgetState  # (`caps.BudgetState`)
from costsched.service.jobs.cap_move import move_ahead, move_at_cap
from costsched.service.jobs.runs import (
    JobEvent,
    RunningJob,
    _open_placement,
    _progress_of,
    _runs,
    nodes_of,
    trouble,
)
from costsched.service.jobs.stop_line import (
    charged_per_hour,
    restart_usd,
    span_words,
    stop_why,
)
from costsched.service.jobs.stop_line import enough as enough  # (`caps.enough`)
from costsched.service.jobs.thresholds import notices as _thresholds
from costsched.service.jobs.thresholds import spent_places as said_places
from costsched.service.jobs.watch_span import watch_span
from costsched.service.speeds import job_paces, rest_table, short_work
from costsched.store import PriceStore
from costsched.store.job_rows import JobRecord, PlacementRow

if TYPE_CHECKING:
    from costsched.jobspec import ResolvedJob
    from costsched.measured import Speed

CHECKPOINT_WAIT_SECONDS = 60.0  # how long a stop at the cap waits for the job's checkpoint
_POLL = 0.2


def _spec(stored: Mapping) -> dict:
    return (stored.get("spec") or {}) if isinstance(stored, Mapping) else {}


def joins(stored: Mapping, name: str, budget: NamedBudget) -> bool:
    """Whether the job whose stored spec is `stored` joins the named budget `name`."""
    spec = _spec(stored)
    if (spec.get("constraints") or {}).get("budget_name") == name:
        return True
    labels = (spec.get("task") or {}).get("labels") or {}
    return bool(budget.labels) and all(labels.get(k) == v for k, v in budget.labels.items())


def budget_states(store: PriceStore, config: BudgetsConfig, at: datetime,
                  interval_seconds: float, ends: Mapping[int, datetime] | None = None
                  ) -> list[BudgetState]:
    """Every budget now: each job's own (jobs with `constraints.budget`), then the named
    ones, from one read of the jobs and their placements; `ends`: by placement id, where a
    look that did not reconcile ended an open one (its instance seen gone: `statuses`)."""
    records = store.jobs.records()
    if not records:
        return []
    specs = {r.id: r.spec for r in records}
    created = {r.id: r.created_at for r in records}
    names = {r.id: r.name for r in records}
    own = own_budget.budgets(store, records, every=True)  # as `start --budget` left it
    named = {n: [j for j, s in specs.items() if joins(s, n, b)]
             for n, b in config.named.items()}
    wanted = sorted({*own, *(j for members in named.values() for j in members)})
    if not wanted:
        return []
    read = charging(store, records, wanted, every=True, ends=ends)
    out = []
    for job_id, usd in sorted(own.items()):
        out.append(budget_state(store, f"job {job_id} ({names[job_id]})", "job", usd,
                                "total", [job_id], at, interval_seconds, read))
    for name, members in named.items():
        members = sorted(members, key=lambda j: (created[j], j))
        b = config.named[name]
        out.append(budget_state(store, name, "named", float(b.usd), b.period, members, at,
                                interval_seconds, read))
    return out


@dataclass(frozen=True)
class Charging:
    """What charging some jobs (`budget_state`) reads once: their placements, states, the
    caps that keep them stopped, the running ones, checkpoint sizes, nodes and paces."""

    placed: Sequence[PlacementRow]
    states: Mapping[int, str]
    capped: Mapping[int, str]
    runs: Mapping[int, RunningJob]
    sizes: Mapping[int, float]
    nodes: Mapping[int, int]
    paces: Mapping[int, list[Speed]]
    # When each running job reported the step it is at, on the placement it runs on (its
    # open placement's last reading of that step; none before it reports one there).
    read_at: Mapping[int, datetime] = field(default_factory=dict)


def charging(store: PriceStore, records: Sequence[JobRecord], wanted: Sequence[int], *,
             every: bool, ends: Mapping[int, datetime] | None = None) -> Charging:
    """`Charging` of the jobs `wanted` of `records`; `every`: read every placement at
    once (most jobs are wanted) rather than theirs; `ends`: see `budget_states`."""
    chosen, ends = set(wanted), ends or {}
    specs = {r.id: r.spec for r in records}
    states = {r.id: r.state for r in records}
    placed = [p._replace(end_at=ends[p.id]) if p.end_at is None and p.id in ends else p
              for p in store.jobs.placement_rows(None if every else sorted(chosen))
              if p.job_id in chosen]
    capped = own_budget.capped_now(store, [r for r in records if r.id in chosen])
    runs = _runs(store, [j for j in wanted if states[j] == "running"])  # one read for all
    resolved = {j: found for j, run in runs.items() if (found := _resolved(run)) is not None}
    paces = job_paces(store, [r.record for r in runs.values()],
                      {j: (r.job.model, r.table) for j, r in resolved.items()})
    return Charging(placed, states, capped, runs,
                     {j: own_budget.checkpoint_gb(specs[j]) for j in wanted},
                     {j: nodes_of(specs[j]) for j in wanted},  # every node of a gang
                     paces, _read_at(store, runs, placed))


def _read_at(store: PriceStore, runs: Mapping[int, RunningJob],
             placed: Sequence[PlacementRow]) -> dict[int, datetime]:
    """When each of the running jobs `runs` reported the step its record is at, where its
    open placement (of `placed`) last read that step (one read of their readings)."""
    open_ = {p.id for p in placed if p.end_at is None and p.job_id in runs}
    if not open_:
        return {}
    out = {}
    for pid, job_id, _, _, last, last_ts in store.jobs.reading_rows(sorted(runs)):
        done = float(runs[job_id].record.steps_done or 0.0)
        if pid in open_ and last_ts is not None and last is not None and float(last) == done:
            out[int(job_id)] = datetime.fromtimestamp(int(last_ts), timezone.utc)
    return out


def budget_state(store: PriceStore, name: str, kind: str, usd: float, period: str,
                 members: Sequence[int], at: datetime, interval_seconds: float,
                 read: Charging) -> BudgetState:
    """The budget `name` of the jobs `members` at `at` (`read`: `charging` of them)."""
    member = set(members)
    mine = [p for p in read.placed if p.job_id in member]
    spent = own_budget.spent(store, mine, period_start(period, at), at, read.sizes, read.nodes)
    running = tuple(j for j in members if read.states[j] == "running")
    live = set(running)
    ahead = _next_charge(store, [p for p in mine if p.job_id in live], at, interval_seconds,
                         read.nodes)
    per_hour = {j: ahead.get(j, 0.0) * 3600 / interval_seconds for j in running}
    to_end = {j: _to_end(read.runs[j], mine, per_hour[j], read.paces.get(j, []))
              for j in running}
    # Its rest now: from its last step reading, less the time since (`rest_now`), as its
    # spend is billed to now.
    rests = {j: own_budget.rest_now(own_budget.rest_seconds(to_end[j], per_hour[j]),
                                    _since(read.read_at.get(j), at), interval_seconds)
             for j in running}
    # (its work at its pace: the hours of its rest at its price, itemised where its lines
    # state it: `rest_cost`)
    work = {j: RestCost(per_hour[j], rests[j] / 3600) for j in running
            if math.isfinite(rests[j]) and rests[j] > 0}
    to_end = {j: work[j].usd if j in work else to_end[j] for j in running}
    # One rule for the charge ahead: at most the job's rest at its pace (`ahead_seconds`).
    seconds = {j: own_budget.ahead_seconds(interval_seconds, rests[j]) for j in running}
    ahead = {j: usd * seconds.get(j, interval_seconds) / interval_seconds
             for j, usd in ahead.items()}
    # The forecast runs to the end of the period: a running job is charged to its own end
    # or to the period's, whichever comes first.
    end = period_end(period, at)
    hours = None if end is None else (end - at).total_seconds() / 3600
    ahead_of_end = (to_end if hours is None else
                    {j: min(usd_to_end, per_hour[j] * hours) for j, usd_to_end in to_end.items()})
    return BudgetState(name, kind, usd, period, sum(spent.values()), sum(ahead.values()),
                       sum(spent.values()) + sum(ahead_of_end.values()), tuple(members), running,
                       # Those its cap keeps stopped now (not those started again since).
                       tuple(j for j in members
                             if read.capped.get(j) == ("" if kind == "job" else name)),
                       next_usd=ahead, spent_by_job=spent, to_end_usd=to_end,
                       ahead_seconds=seconds, to_end=work)


def _since(read_at: datetime | None, at: datetime) -> float:
    """The seconds from a step reading (`read_at`; None: none on its placement) to `at`."""
    return 0.0 if read_at is None else (at - read_at).total_seconds()


def _next_charge(store: PriceStore, placed: Sequence[PlacementRow], at: datetime,
                 interval_seconds: float, nodes: Mapping[int, int]) -> dict[int, float]:
    """What each running job's open placements charge over the next watch interval (each
    of its `nodes`), at their offerings' stored prices."""
    until = at + timedelta(seconds=interval_seconds)
    ahead = [p._replace(start_at=at, end_at=until) for p in placed if p.end_at is None]
    charged: dict[int, list[float]] = {}
    for p, (_, usd, _) in zip(ahead, charge(store, ahead, now=at, nodes=nodes),
                              strict=True):
        charged.setdefault(p.job_id, []).append(usd)
    return {int(k): float(own_budget.total(v)) for k, v in charged.items()}


def _to_end(run: RunningJob, placed: Sequence[PlacementRow], usd_per_hour: float,
            paces: Sequence[Speed]) -> float:
    """A running job's cost to its end at its open placement's price: its steps left at
    the speed the rest of it runs at on that placement's GPU (its measured speed where one
    is trusted, else its plan's: `service.speeds.rest_table`, the table the decider prices
    it with); 0 with no speed known for it there; NaN when the rest cannot be priced (it
    reported more steps than it declares: `short_work`)."""
    if short_work(run.record):
        return float("nan")
    left, _ = _progress_of(run, run.record.steps_done)
    now = [p for p in placed if p.job_id == run.record.id and p.end_at is None]
    if left is None or left <= 0 or usd_per_hour <= 0 or not now:
        return 0.0
    row, resolved = now[-1], _resolved(run)
    if resolved is None:  # its stored spec does not resolve: no speed known, no forecast
        return 0.0
    table = rest_table(resolved.table, resolved.job.model, run.record.spec, paces)
    try:
        per_hour = 3600 * table.get(resolved.job.model, row.gpu_model,
                                    int(row.gpu_count)).steps_per_second
    except Exception:  # noqa: BLE001 - no speed known for it there: no forecast
        return 0.0
    return usd_per_hour * left / per_hour if per_hour > 0 else float("inf")


def _resolved(run: RunningJob) -> ResolvedJob | None:
    """The job's resolved spec; None when its stored spec does not resolve now."""
    try:
        return run.resolved
    except InvalidInput:
        return None


# --- at every watch ------------------------------------------------------------------------


def enforce(store: PriceStore, launcher: Launcher, config: BudgetsConfig, at: datetime,
            interval_seconds: float, overheads: Overheads | None = None) -> list[JobEvent]:
    """The budget check of a watch, before moves: a notification at each threshold a
    budget's spend passes, a warning share a watch interval ahead (once per budget and
    threshold: `thresholds.notices`), and a stop (checkpoint first) of
    each running job of this launcher that its budget's cap says to stop, or, where the
    config (`at_cap`, or the job's `constraints.at_cap`) says move, a move to the offering
    the budget's decider finds to finish it within what is left (`BudgetDecider`; priced
    with `overheads`, by default each job's own restart model, as `migrate` prices the
    same move), a stop when none does. The next interval is charged for
    `interval_seconds`, or for as long as the watching daemon's last two passes were apart
    when that was longer (`watch_span`: a slow pass makes the next one as late; an idle
    daemon's passes count, so a job launched after a quiet spell is charged its interval):
    the cap holds however long a pass takes. Spend is billed by the whole second: what was
    spent is charged to `at`, as a stop now ends its placements and bills them (a stop's
    figures are its bill), the interval ahead in whole seconds (rounded up)."""
    configured = interval_seconds
    interval_seconds = watch_span(store, configured, at)
    states = budget_states(store, config, at, interval_seconds)
    if not states:
        return []
    runs = _runs(store, sorted({j for s in states for j in s.running}))
    mine = {j for j, run in runs.items() if run.launcher == launcher.name}
    # A job that reported all its declared steps is finishing: left to end by itself,
    # neither stopped nor charged ahead at a cap, for a watch interval (`halt.finishing`).
    from costsched.service.jobs.halt import finishing

    ending = finishing(store, runs, at, configured)
    events: list[JobEvent] = []
    for state in states:
        # The newest running job goes first: a job that joined a budget earlier keeps a
        # claim on its cost to the end, and the hard cap (spent plus the next interval)
        # stops the oldest only when it alone would pass it.
        ahead = {j: usd for j, usd in state.next_usd.items() if j not in ending}
        running = [j for j in state.running if j not in ending]
        stops: list[tuple[int, float, float, str, float]] = []
        while running:
            job_id = running.pop()
            claims = _claims(state, running)
            charged = sum(ahead.values())
            span = span_words(state, ahead, interval_seconds, math.ceil(configured))
            restart = restart_usd(runs.get(job_id),
                                  charged_per_hour(state, job_id, interval_seconds))
            if stop_why(state, job_id, charged, claims, span, restart) is None:
                break
            stops.append((job_id, claims, charged, span, restart))
            ahead.pop(job_id, None)
        # Its threshold notices come first: a warning ahead of the spend, where this
        # check stops none of its jobs (a stop says what happens instead).
        events += _thresholds(store, state, config.thresholds, at, stopping=bool(stops))
        capped = {job_id for job_id, *_ in stops}
        for job_id, claims, charged, span, restart in stops:
            if job_id in mine and store.jobs.get(job_id).state == "running":
                run = runs[job_id]
                left = state.usd - state.spent_usd - claims
                # Its spend at no fewer decimals than its threshold notices read it at,
                # nor than charged figures, at which `status`'s cost column reads it.
                why = stop_why(state, job_id, charged, claims, span, restart,
                               least=max(said_places(store, job_id, state), CHARGED.usd))
                assert why is not None  # noqa: S101 - decided above, on the same figures
                try:
                    said = own_budget.called(None if state.kind == "job" else state.name)
                    moved = (move_at_cap(store, launcher, run, said, why, left, at,
                                         overheads)
                             if at_cap(run, config) == "move" else "")
                    events += [e for e in [moved if isinstance(moved, JobEvent) else
                                           _stop_at_cap(store, launcher, run, said, why, at,
                                                        moved)] if e is not None]
                except Exception as exc:  # noqa: BLE001 - this job's: the others go on
                    events.append(trouble(job_id, exc))  # its stop is made again next pass
        events += move_ahead(store, launcher, state, [
            runs[j] for j in state.running if j in mine and j not in ending | capped
            and at_cap(runs[j], config) == "move"], at, overheads)
    return events


def _claims(state: BudgetState, job_ids: Sequence[int]) -> float:
    """What the budget's jobs `job_ids` need to finish; a job whose rest cannot be priced
    (NaN) claims nothing it cannot show."""
    return sum(usd for j in job_ids if (usd := state.to_end_usd.get(j, 0.0)) == usd)


def named_fix(name: str, period: str) -> str:
    """What gives the jobs of named budget `name` more: its key, and its next period."""
    wait = {"day": ", or wait for the next UTC day",
            "month": ", or wait for the next month (UTC)"}.get(period, "")
    return (f"raise budgets.named.{name}.usd in the configuration (its file: `costsched "
            f"config show`){wait}")


def at_cap(run: RunningJob, config: BudgetsConfig) -> str:
    """What a cap does to the job: its own `constraints.at_cap`, else the config's."""
    return at_cap_of(run.record.spec, config)


def at_cap_of(stored: Mapping, config: BudgetsConfig) -> str:
    """What a cap does to the job whose stored spec is `stored` (`at_cap`)."""
    said = (_spec(stored).get("constraints") or {}).get("at_cap")
    return said if said in ("stop", "move") else config.at_cap


def _stop_at_cap(store: PriceStore, launcher: Launcher, run: RunningJob, called: str,
                 why: str, at: datetime, unmoved: str = "") -> JobEvent | None:
    """Ask the job to checkpoint and exit, wait for it (a while), then stop it at the budget
    `called` ('its own budget', 'budget NAME': `own_budget.stopped_at` reads it back): its
    checkpoints are kept, `start` resumes it once the budget allows. One that its instance
    says has done all its steps by then has succeeded (`halt.finish_job`; None: it had
    ended meanwhile): its exit reads stopped, as asked, but it reached its end. One that
    was training past its declared steps before the stop (`halt.trains_past`) had not
    ended there: it is stopped, and `start` takes it on from its checkpoint.
    `unmoved`: why a job its cap was to move was not (`move_at_cap`), said in its stop."""
    from costsched.service.jobs.halt import (  # `report`: not
        done_all,
        finish_job,
        stop_job,
        trains_past,
    )

    job_id = run.record.id
    placed = _open_placement(store, job_id)
    if placed is not None:
        instance = str(placed["instance"])
        try:
            launcher.request_stop(instance)
            deadline = time.monotonic() + CHECKPOINT_WAIT_SECONDS
            while ((last := launcher.status(instance)).state in ("running", "pending")
                   and time.monotonic() < deadline):
                time.sleep(_POLL)
            step = last.step
        except Exception:  # noqa: BLE001 - the stop below ends it whatever happened
            step = None
        if done_all(store.jobs.get(job_id), step) and not trains_past(run.record):
            return (JobEvent(job_id, "finished", "succeeded")
                    if finish_job(store, launcher, job_id, instance, at) else None)
    detail = f"stopped at {called}: {why}" + (f"{own_budget.NOT_MOVED}{unmoved}"
                                                if unmoved else "")
    store.jobs.note(job_id, "budget", detail, at=at)
    stop_job(store, launcher, job_id, at, detail=detail)
    return JobEvent(job_id, "budget", detail, level="warning", notify="budget")

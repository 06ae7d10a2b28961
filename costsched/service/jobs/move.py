"""Moving running jobs: `migrate` asks the policy where each job should be now and starts
the moves that pay."""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from costsched import clouds, launch_secrets, own_budget
from costsched.amounts import decimals_kept, given, usd
from costsched.lazy import pandas as pd
from costsched.migration.launcher import Launcher
from costsched.migration.machine import utcnow
from costsched.model import InvalidInput
from costsched.optimize.decision import Overheads
from costsched.passes import one_pass, pass_now
from costsched.policies import OfferingKey
from costsched.service.decide import (
    Decision,
    OfferingName,
    parse_offering,
)
from costsched.service.jobs.busy import DOING, acted_on
from costsched.service.jobs.carry import stores_of
from costsched.service.jobs.checkpoint_seen import reported_steps
from costsched.service.jobs.decider import (
    DeadlineDecider,
    Decider,
    JobNow,
    decider_for,
    market_at,
)
from costsched.service.jobs.move_budgets import charged_there, past_named
from costsched.service.jobs.runs import (
    MIN_MIGRATION_INTERVAL,
    STEP_LEASE_SECONDS,
    RunningJob,
    _label,
    _newest_open,
    _newest_open_rows,
    _placed_offering,
    _runs,
    job_ids,
)
from costsched.service.jobs.state_said import state_said
from costsched.service.jobs.steps import (
    _migration_candidates,
    _run_moves,
    secret_names,
    steps_left_seen,
)
from costsched.service.values import as_time
from costsched.store import PriceStore
from costsched.store.decisions import StoredDecision
from costsched.store.jobs import JobRecord, StaleState
from costsched.store.moves import MoveRecord, NewMove

MIGRATE_COMMAND = "costsched migrate"  # who decides when `migrate` is not told
NOT_MOVED = "; not moved: "  # after a decision's reason: why its move was not started
MOVE_GROUP = 5000  # moves started together (their leases taken, created, stepped at once)


@dataclass(frozen=True)
class MigrationAdvice:
    job_id: int
    name: str
    decision: Decision
    stay_usd: float  # expected cost of the steps left where the job is
    move_usd: float  # expected cost of the steps left on the choice, the move included
    started: MoveRecord | None  # the migration started (None: a dry run or no move)
    reason: str  # why it moves or stays, in words and dollars
    nodes: int = 1  # its instances at once (a gang's num_nodes)
    # The clouds left out for it, each with why (their instances cannot read its checkpoints)
    left_out: tuple[str, ...] = ()
    # Why a move decided on was not started ('' when it was, or none was decided):
    # "secret" (this process lacks a value), "limit" (max_migrations, once a day),
    # "budget" (a --to move past the job's own budget: a dry run's; a move refuses) or
    # "busy" (another costsched acts on the job, or moved it meanwhile).
    held_back: str = ""

    @property
    def not_moved(self) -> str:
        """Why a move decided on was not started, as its reason ends ('' when it was, or
        none was decided)."""
        lead = f"{self.decision.reason}{NOT_MOVED}"
        return self.reason[len(lead):] if self.reason.startswith(lead) else ""


def migrate(store: PriceStore, launcher: Launcher, job: int | str | None = None, *,
            dry_run: bool = False, at: datetime | str | None = None, margin: float = 0.05,
            policy: str = "dynamic-aware", force: bool = False,
            overheads: Overheads | None = None,
            to: str | None = None,
            stop: Callable[[], bool] | None = None,
            decided_by: str = MIGRATE_COMMAND,
            secrets: Mapping[str, str | None] | None = None) -> list[MigrationAdvice]:
    """Ask the policy where each running job (or `job`) should be now, among every offering
    the job's constraints allow, and, unless `dry_run`, start the migrations that pay: the
    expected cost of the rest of the job there, the move included, is below staying by
    more than `margin` x the expected cost of the next day where it is. Within the job's
    max_migrations, and at most once a day per job unless `force`. `force`: now, whatever
    the daily limit and the margin, but still only a move that pays (and within
    max_migrations). `to`: move `job` to this offering ('aws us-west-2 p3.2xlarge spot',
    as the tables print it), the user's choice, even a dearer one (its reason says by how
    much). Each job is asked the decider its stored policy names (`policy`: the
    price-driven policy of a job whose stored policy names none); a deadline policy's
    moves are not held to once a day. `overheads`: the restart and move assumptions
    (default: each job's own, `ResolvedJob.overheads`: the configuration's with its file's
    boot and set-up, as a budget's move at its cap prices them). `stop`: asked before each
    move starts; once it says True, no further move starts (the rest are advice only).
    `decided_by`: who decides ("the supervisor", ...): unless `dry_run` or `to`, each job's
    decision is kept as its latest (`store.decisions`), which `status` shows. `secrets`:
    values for the jobs' secrets (`--secret`), held for the instances their moves start.

    Every job is decided first, from one market, without a lease; a move starts under the
    job's lease, after its decision is made again there from what the store says then (so
    two costsched deciding at once start one move)."""
    when = as_time(at)
    target = None
    if to is not None:
        target = parse_offering(to)
        if job is None:
            raise InvalidInput(f"offering {to!r}: name the job to move there")
    with one_pass():
        # Every job is decided at one instant; a move started is stamped by the clock
        # unless the caller fixed the time.
        ask = _Asking(when if at is not None else pass_now(), target, margin, policy, force,
                      overheads)
        stamp = when if at is not None else None
        ids = job_ids(store, job, states=("running",))
        placed = _placed(store, launcher, ids)
        if job is not None and not placed:  # named, and not running here: why
            _refuse_unplaced(store, store.jobs.get(ids[0]))
        _hold_given(placed, secrets or {})
        decided = _decide(store, placed, ask, launcher)
        moved: dict[int, tuple[Decision, MoveRecord | None, str, str]] = {}
        if target is not None:  # the user's move, held to the job's own budget and named ones
            for i, ((run, _), choice) in enumerate(zip(placed, decided, strict=True)):
                why = (_past_budget(store, run, choice, ask.when)
                       or past_named(store, run, choice, ask.when))
                if not why:
                    continue
                if not dry_run:
                    raise InvalidInput(f"job {run.record.id} ({run.record.name}): not moved "
                                       f"to {_label(choice.choice)}: {why}")
                moved[i] = (choice, None, f"{choice.reason}{NOT_MOVED}{why}", "budget")
        if not dry_run:
            for group in _groups(placed, decided, ask, stop, skip=moved):
                moved.update(zip(group, _move_if_still(
                    store, launcher, [(*placed[i], decided[i]) for i in group], ask, stamp),
                    strict=True))
        out = []
        for i, ((run, _), choice) in enumerate(zip(placed, decided, strict=True)):
            choice, started, reason, held = moved.get(i, (choice, None, choice.reason, ""))
            out.append(MigrationAdvice(run.record.id, run.record.name, choice,
                                       choice.stay_usd, choice.choice_usd, started, reason,
                                       run.nodes, _left_out(run, placed[i][1], launcher),
                                       held))
        if not dry_run and target is None:  # the policy's own decisions, not advice
            _keep(store, out, placed, ask.when, decided_by)
        return out


def _refuse_unplaced(store: PriceStore, record: JobRecord) -> None:
    """Why the job named is not moved: it has ended (InvalidInput), or another costsched
    acts on it (TryAgain, exit 75: a recovery, a start; a running job whose placement
    ended is one a recovery is taking up), never "no running job"."""
    then = "only a running job is moved; ask again once it runs"
    if record.final:
        raise InvalidInput(f"job {record.id} ({record.name}) {state_said(record)}"
                           ": only a running job is moved")
    if record.state != "running":
        raise acted_on(record, then)
    if store.jobs.newest_open_placement(record.id) is None:
        raise acted_on(record, then, doing=DOING["recovering"])
    # Placed, by another launcher than `launcher`: none of its jobs to ask about.


def landed(store: PriceStore, advice: Sequence[MigrationAdvice]) -> list[MigrationAdvice]:
    """`advice` with its moves as they stand now (after `settle`): a move that ended
    elsewhere than its choice, or failed, was not made. Its reason then says why and where
    the job runs (a `--to` move's one fallback is where it ran, so a target without
    capacity starts it there again, from its checkpoint), held back as "capacity"."""
    ids = [a.started.id for a in advice if a.started is not None]
    now = store.moves.by_ids(ids) if ids else {}
    out = []
    for a in advice:
        move = None if a.started is None else now.get(a.started.id)
        if move is None or not move.ended or (move.state == "done" and move.tried == 0):
            out.append(a if move is None else replace(a, started=move))
            continue
        why = _cannot_launch(store, move) or f"its move {move.state}: {move.detail}"
        where = move.candidate if move.state == "done" else None
        runs = ("" if where is None else
                f"; it runs on {_label(where['key'])} again"
                if list(where["key"]) == list(a.decision.current or ())
                else f"; it runs on {_label(where['key'])}")
        out.append(replace(a, started=None, held_back="capacity",
                           reason=f"{a.decision.reason}{NOT_MOVED}{why}{runs}"))
    return out


def _cannot_launch(store: PriceStore, move: MoveRecord) -> str:
    """Why the move's choice could not be launched, as the job's log says ('' when it
    does not)."""
    lead = f"move {move.id} ({move.kind}): cannot launch: "
    said = [r.detail for r in store.jobs.event_rows([move.job_id])
            if r.detail.startswith(lead)]
    return f"cannot launch {said[0][len(lead):]}" if said else ""


def _keep(store: PriceStore, advice: Sequence[MigrationAdvice],
          placed: Sequence[tuple[RunningJob, pd.Series]], at: datetime, by: str) -> None:
    """Keep each job's decision as its latest, on the placement it was decided on."""
    store.decisions.record([StoredDecision(
        a.job_id, int(placement["id"]), at, by, a.decision.moves,
        _label(a.decision.choice) if a.decision.moves else "", a.stay_usd, a.move_usd,
        None if a.started is None else a.started.id, a.reason)
        for a, (_, placement) in zip(advice, placed, strict=True)])


def _left_out(run: RunningJob, placement: pd.Series, launcher: Launcher) -> tuple[str, ...]:
    """The clouds the job's deciders leave out, each with why (`carry.readable`): of those
    it allows and `launcher` starts, but the one it runs on."""
    allowed, here = run.resolved.job.constraints.clouds, _placed_offering(placement)
    wanted = [c for c in clouds.NAMES if (not allowed or c in allowed) and c != here.cloud
              and launcher.can_launch(replace(here, cloud=c))]
    return tuple(stores_of(run).unreadable(wanted).values())


def _groups(placed: Sequence[tuple[RunningJob, pd.Series]], decided: Sequence[Decision],
            ask: _Asking, stop: Callable[[], bool] | None,
            skip: Collection[int] = ()) -> Iterator[list[int]]:
    """The jobs whose moves start together, in job order: up to MOVE_GROUP price-driven
    jobs at once; a deadline job alone (its decider reads the capacity the moves before it
    met). `stop` is asked before each move joins a group; once it says True, no further
    group forms."""
    group: list[int] = []
    for i, ((run, _), choice) in enumerate(zip(placed, decided, strict=True)):
        if not choice.moves or i in skip:
            continue
        if stop is not None and stop():
            break
        if isinstance(_decider(run, ask), DeadlineDecider):
            if group:
                yield group
            yield [i]
            group = []
            continue
        group.append(i)
        if len(group) >= MOVE_GROUP:
            yield group
            group = []
    if group:
        yield group


@dataclass(frozen=True)
class _Asking:
    """What `migrate` asks about every job: at `when`, by `policy` (or the job's deadline
    policy), or to `target`."""

    when: datetime
    target: OfferingName | None
    margin: float
    policy: str
    force: bool
    overheads: Overheads | None


def _placed(store: PriceStore, launcher: Launcher, job_ids: Sequence[int]
            ) -> list[tuple[RunningJob, pd.Series]]:
    """The jobs of `job_ids` that `migrate` asks about, with their open placement: this
    launcher's, placed now. The placements are read once for all of them."""
    if not job_ids:
        return []
    open_by_job = _newest_open(store.jobs.placements_of(job_ids, open_only=True))
    runs = _runs(store, [j for j in job_ids if int(j) in open_by_job])
    out = []
    for job_id in job_ids:
        placement = open_by_job.get(int(job_id))
        if placement is None:
            continue
        run = runs[int(job_id)]
        if run.launcher == launcher.name:
            out.append((run, placement))
    return out


def _decide(store: PriceStore, placed: Sequence[tuple[RunningJob, pd.Series]],
            ask: _Asking, launcher: Launcher) -> list[Decision]:
    """Each job's decision, in order, from one market: by the decider its stored policy
    names (or the user's target, `ask.target`), the jobs of one decider at once. Their
    instances are read at once for what a move now loses (`reported_steps`)."""
    market = market_at(store, ask.when)
    reported = reported_steps(launcher, [str(p["instance"]) for _, p in placed])
    jobs, by_decider = [], {}
    for i, (run, placement) in enumerate(placed):
        current: OfferingKey = tuple(placement[k] for k in (  # type: ignore[assignment]
            "cloud", "region", "zone", "instance_type", "market", "os"))
        seen = reported.get(str(placement["instance"]))
        jobs.append(JobNow.of(run, current, steps_left_seen(store, run, seen, ask.when),
                              reported=seen))
        by_decider.setdefault(_decider(run, ask), []).append(i)
    decisions: dict[int, Decision] = {}
    for decider, rows in by_decider.items():
        found = decider.decide_all([jobs[i] for i in rows], market, ask.when)
        decisions.update(zip(rows, found, strict=True))
    return [decisions[i] for i in range(len(placed))]


def _decider(run: RunningJob, ask: _Asking) -> Decider:
    return decider_for(run.record.policy, cost_policy=ask.policy, margin=ask.margin,
                       overheads=ask.overheads, force=ask.force, target=ask.target)


def _move_if_still(store: PriceStore, launcher: Launcher,
                   jobs: Sequence[tuple[RunningJob, pd.Series, Decision]], ask: _Asking,
                   stamp: datetime | None
                   ) -> list[tuple[Decision, MoveRecord | None, str, str]]:
    """Under each job's lease (taken for all at once): decide for it again from what the
    store says now (another costsched may have moved it, or be moving it), and start the
    move if it still pays and its limits allow; the moves started are created in one
    transaction, then stepped together. For each job, in order: (the decision, the move
    started or None, the reason, why a move decided on was held back: `held_back`)."""
    names = [f"steps:{run.record.id}" for run, _, _ in jobs]
    out: list[tuple[Decision, MoveRecord | None, str, str] | None] = [None] * len(jobs)
    with store.leases.holding_many(names, STEP_LEASE_SECONDS) as (holder, taken):
        mine = [k for k, name in enumerate(names) if name in taken]
        for k in sorted(set(range(len(jobs))) - set(mine)):
            choice = jobs[k][2]
            out[k] = (choice, None, f"{choice.reason}{NOT_MOVED}another costsched is "
                                    "acting on the job (a move of it may be under way)", "busy")
        ids = [jobs[k][0].record.id for k in mine]
        moves_now = store.moves.of_jobs(ids)
        records = {r.id: r for r in store.jobs.records(ids)}
        opened = _newest_open_rows(store.jobs.placements_of(ids, open_only=True))
        newest = dict(zip(opened["job_id"].astype(int), opened["id"].astype(int), strict=True))
        ready, again = [], []
        for k in mine:
            run, placement, choice = jobs[k]
            job_id, reason = run.record.id, choice.reason
            if any(not m.ended for m in moves_now[job_id]):
                out[k] = (choice, None, f"{reason}{NOT_MOVED}a move of it is under way",
                          "busy")
                continue
            record = records[job_id]
            if record.state != "running" or newest.get(job_id) != int(placement["id"]):
                out[k] = (choice, None, f"{reason}{NOT_MOVED}it is no longer placed on "
                                        f"{placement['instance']}", "busy")
                continue
            decided, run = run.record, replace(run, record=record)  # its spec does not change
            ready.append((k, run, placement))
            if not _decided_alike(decided, record, _decider(run, ask)):
                again.append(len(ready) - 1)
        choices = {k: jobs[k][2] for k, _, _ in ready}
        if again:  # decided again, from the store as it is now
            found = _decide(store, [ready[r][1:] for r in again], ask, launcher)
            choices.update((ready[r][0], c) for r, c in zip(again, found, strict=True))
        starting, failure = [], None
        for k, run, placement in ready:
            choice = choices[k]
            if not choice.moves:
                out[k] = (choice, None, choice.reason, "")
                continue
            blocked = _migration_limit(run, moves_now[run.record.id], ask.when,
                                       daily=_decider(run, ask).daily)
            held = "limit" if blocked else "secret"
            blocked = blocked or _secret_lacking(run)
            if blocked:
                out[k] = (choice, None, f"{choice.reason}{NOT_MOVED}{blocked}", held)
                continue
            try:
                cands = _migration_candidates(launcher, choice, placement,
                                              fallbacks=ask.target is None)
            except InvalidInput as exc:  # the moves before it start; then it is said
                failure = exc
                break
            starting.append((k, run, NewMove(run.record.id, "migration", cands,
                                             str(placement["instance"]),
                                             f"to {_label(choice.choice)}")))
        made = store.moves.create_many([new for _, _, new in starting],
                                       at=stamp or utcnow()) if starting else []
        runs = []
        for (k, run, _), move in zip(starting, made, strict=True):
            if isinstance(move, MoveRecord):
                runs.append((k, run, move))
            else:  # the job ended, or moved, since it was read under its lease
                out[k] = (choices[k], None, f"{choices[k].reason}{NOT_MOVED}{move}",
                          "busy")
        after = _run_moves(store, launcher, [(run, move) for _, run, move in runs], holder,
                           stamp)
        for (k, _, move), left in zip(runs, after, strict=True):
            if isinstance(left, StaleState):  # in the job's words, not the store's
                left = acted_on(store.jobs.get(move.job_id), "its move was left to it")
            if isinstance(left, Exception):
                failure = failure or left
            out[k] = (choices[k], left if isinstance(left, MoveRecord) else move,
                      choices[k].reason, "")
    if failure is not None:
        raise failure
    return out  # type: ignore[return-value]


def _past_budget(store: PriceStore, run: RunningJob, choice: Decision, at: datetime) -> str:
    """Why the job's own budget forbids the move the user asked for (`migrate --to`), and
    what gives it enough ('' when it has none, or the move fits): by the one rule of a
    launch's and a start's check, which the watch's cap keeps (`own_budget.enough_usd`),
    what it spent, its rest there expected to cost (the move included) and the watch's
    charge ahead there for its next interval (`charged_there`) must fit in it."""
    if not choice.moves:
        return ""
    own = own_budget.of_job(store, run.record, at, run.nodes)
    if own is None:
        return ""
    from costsched.config import effective
    from costsched.service.jobs.watch_span import watch_span

    configured = effective().daemon.watch_seconds
    seconds = watch_span(store, configured, at)  # as the watch will charge it
    per_hour = choice.usd_per_hour * run.nodes  # (all its nodes)
    ahead, span = charged_there(choice, per_hour, seconds, configured)
    if own.spent_usd + choice.choice_usd + ahead <= own.usd:
        return ""
    amount, places = own_budget.enough_usd(own.spent_usd, choice.choice_usd, 0.0, ahead)
    shown = decimals_kept([own.spent_usd, choice.choice_usd, ahead])  # a small one kept
    spent, there, charged = (usd(v, shown) for v in (own.spent_usd, choice.choice_usd, ahead))
    name = run.record.name
    return (f"{spent} spent + {there} expected there, the move included, + {charged} for "
            f"the next watch interval ({span}) "
            f"would pass its budget of {given(own.usd, shown)}; to move it there, give it enough: "
            f"`costsched stop {name}`, `costsched start {name} --budget "
            f"{amount:.{places}f}`, then ask again")


def _decided_alike(decided: JobRecord, now: JobRecord, decider: Decider) -> bool:
    """Whether deciding for the job again would answer as its decision did: the job is as
    it was decided from (its record but the time of its last write; its placement and its
    moves were checked by the caller), and its decider reads nothing but the job and the
    pass's market (a deadline decider also reads the offerings that just met no capacity,
    which a move of the pass may have changed)."""
    return not isinstance(decider, DeadlineDecider) and \
        replace(now, updated_at=decided.updated_at) == decided


def _hold_given(placed: Sequence[tuple[RunningJob, pd.Series]],
                given: Mapping[str, str | None]) -> None:
    """Hold the values given for the jobs' secrets (`--secret`) for the instances their
    moves start; InvalidInput for one that none of them names, or given with no value."""
    if not given:
        return
    runs = [run for run, _ in placed]
    names = list(dict.fromkeys(n for run in runs for n in secret_names(run)))
    where = f"job {runs[0].record.name}" if len(runs) == 1 else "the running jobs"
    launch_secrets.check_given(where, names, given)
    for run in runs:
        mine = {n: v for n, v in given.items() if v and n in secret_names(run)}
        launch_secrets.refuse_short(f"job {run.record.name}", mine)
        launch_secrets.keep(run.record.id, {**launch_secrets.held_for(run.record.id), **mine})


def _secret_lacking(run: RunningJob) -> str:
    """Why this process cannot start the job's instance elsewhere: a secret of it that it
    has no value for ('' when it holds them all), and how to give it."""
    lacking = launch_secrets.missing(run.record.id, secret_names(run))
    if not lacking:
        return ""
    names = launch_secrets.listed(lacking)
    if launch_secrets.carrying():  # a daemon: its environment, or the launch's handoff
        return (f"this process has no value for secret {', '.join(lacking)} (the process "
                "that moves it needs the job's secrets in its environment)")
    return (f"this shell has no value for secret{'s' if len(lacking) > 1 else ''} "
            f"{names}; set {names} in your environment, or give each with --secret "
            "NAME=VALUE, and ask again")


def _migration_limit(run: RunningJob, moves: list[MoveRecord], at: datetime,
                     daily: bool) -> str:
    """Why the job's limits forbid another migration now ('' when they allow it), from its
    moves as read under its lease."""
    migrations = [m for m in moves if m.kind == "migration" and m.state != "cancelled"]
    limit = run.resolved.job.constraints.max_migrations
    if limit is not None and len(migrations) >= limit:
        return f"the job's max_migrations ({limit}) is reached"
    if daily and migrations and at - migrations[-1].created_at < MIN_MIGRATION_INTERVAL:
        return "it moved less than a day ago"
    return ""

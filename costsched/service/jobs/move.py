"""Moving running jobs: `migrate` asks the policy where each job should be now and starts
the moves that pay."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime

import pandas as pd

from costsched.migration.launcher import Launcher
from costsched.model import InvalidInput
from costsched.optimize.decision import Overheads
from costsched.passes import one_pass, pass_now
from costsched.policies import OfferingKey
from costsched.service.decide import (
    Decision,
    OfferingName,
    parse_offering,
)
from costsched.service.jobs.decider import (
    DeadlineDecider,
    Decider,
    JobNow,
    decider_for,
    market_at,
)
from costsched.service.jobs.runs import (
    MIN_MIGRATION_INTERVAL,
    STEP_LEASE_SECONDS,
    RunningJob,
    _newest_open,
    _runs,
    _steps_left_of,
    job_ids,
)
from costsched.service.jobs.steps import _start_migration
from costsched.service.values import as_time
from costsched.store import PriceStore
from costsched.store.jobs import JobRecord
from costsched.store.moves import MoveRecord


@dataclass(frozen=True)
class MigrationAdvice:
    job_id: int
    name: str
    decision: Decision
    stay_usd: float  # expected cost of the steps left where the job is
    move_usd: float  # expected cost of the steps left on the choice, the move included
    started: MoveRecord | None  # the migration started (None: a dry run or no move)
    reason: str  # why it moves or stays, in words and dollars


def migrate(store: PriceStore, launcher: Launcher, job: int | str | None = None, *,
            dry_run: bool = False, at: datetime | str | None = None, margin: float = 0.05,
            policy: str = "dynamic-aware", force: bool = False,
            overheads: Overheads | None = None,
            to: str | None = None,
            stop: Callable[[], bool] | None = None) -> list[MigrationAdvice]:
    """Ask the policy where each running job (or `job`) should be now, among every offering
    the job's constraints allow, and, unless `dry_run`, start the migrations that pay: the
    expected cost of the rest of the job there, the move included, is below staying by
    more than `margin` x the expected cost of the next day where it is. Within the job's
    max_migrations, and at most once a day per job unless `force`. `force`: now, whatever
    the daily limit and the margin, but still only a move that pays (and within
    max_migrations). `to`: move `job` to this offering ('aws us-west-2b p3.2xlarge spot',
    as the tables print it), the user's choice, even a dearer one (its reason says by how
    much). Each job is asked the decider its stored policy names (`policy`: the
    price-driven policy of a job whose stored policy names none); a deadline policy's
    moves are not held to once a day. `overheads`: the
    restart and move assumptions (default `Overheads()`). `stop`: asked before each move
    starts; once it says True, no further move starts (the rest are advice only).

    Every job is decided first, from one market, without a lease; a move starts under the
    job's lease, after its decision is made again there from what the store says then (so
    two costsched deciding at once start one move)."""
    overheads = overheads or Overheads()
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
        placed = _placed(store, launcher, job_ids(store, job, states=("running",)))
        out = []
        for (run, placement), choice in zip(placed, _decide(store, placed, ask), strict=True):
            started, reason = None, choice.reason
            if choice.moves and not dry_run and not (stop is not None and stop()):
                choice, started, reason = _move_if_still(store, launcher, run, placement,
                                                         choice, ask, stamp)
            out.append(MigrationAdvice(run.record.id, run.record.name, choice,
                                       choice.stay_usd, choice.choice_usd, started, reason))
        return out


@dataclass(frozen=True)
class _Asking:
    """What `migrate` asks about every job: at `when`, by `policy` (or the job's deadline
    policy), or to `target`."""

    when: datetime
    target: OfferingName | None
    margin: float
    policy: str
    force: bool
    overheads: Overheads


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
            ask: _Asking) -> list[Decision]:
    """Each job's decision, in order, from one market: by the decider its stored policy
    names (or the user's target, `ask.target`), the jobs of one decider at once."""
    market = market_at(store, ask.when)
    jobs, by_decider = [], {}
    for i, (run, placement) in enumerate(placed):
        current: OfferingKey = tuple(placement[k] for k in (  # type: ignore[assignment]
            "cloud", "region", "zone", "instance_type", "market", "os"))
        jobs.append(JobNow.of(run, current, _steps_left_of(store, run, ask.when)))
        by_decider.setdefault(_decider(run, ask), []).append(i)
    decisions: dict[int, Decision] = {}
    for decider, rows in by_decider.items():
        found = decider.decide_all([jobs[i] for i in rows], market, ask.when)
        decisions.update(zip(rows, found, strict=True))
    return [decisions[i] for i in range(len(placed))]


def _decider(run: RunningJob, ask: _Asking) -> Decider:
    return decider_for(run.record.policy, cost_policy=ask.policy, margin=ask.margin,
                       overheads=ask.overheads, force=ask.force, target=ask.target)


def _move_if_still(store: PriceStore, launcher: Launcher, run: RunningJob,
                   placement: pd.Series, choice: Decision, ask: _Asking,
                   stamp: datetime | None) -> tuple[Decision, MoveRecord | None, str]:
    """Under the job's lease: decide for it again from what the store says now (another
    costsched may have moved it, or be moving it), and start the move if it still pays
    and its limits allow. (The decision, the move started or None, the reason.)"""
    job_id = run.record.id
    reason = choice.reason
    with store.leases.holding(f"steps:{job_id}", STEP_LEASE_SECONDS) as mine:
        if not mine:
            return choice, None, (f"{reason}; not moved: another costsched is acting on the "
                                  "job (a move of it may be under way)")
        moves = store.moves.of_job(job_id)
        if any(not m.ended for m in moves):
            return choice, None, f"{reason}; not moved: a move of it is under way"
        record = store.jobs.get(job_id)
        if record.state != "running" or \
                store.jobs.newest_open_placement(job_id) != int(placement["id"]):
            return choice, None, (f"{reason}; not moved: it is no longer placed on "
                                  f"{placement['instance']}")
        decided, run = run.record, replace(run, record=record)  # its spec does not change
        if not _decided_alike(decided, record, _decider(run, ask)):
            [choice] = _decide(store, [(run, placement)], ask)
            reason = choice.reason
        if not choice.moves:
            return choice, None, reason
        blocked = _migration_limit(run, moves, ask.when, daily=_decider(run, ask).daily)
        if blocked:
            return choice, None, f"{reason}; not moved: {blocked}"
        return choice, _start_migration(store, launcher, run, choice, placement, stamp,
                                        fallbacks=ask.target is None), reason


def _decided_alike(decided: JobRecord, now: JobRecord, decider: Decider) -> bool:
    """Whether deciding for the job again would answer as its decision did: the job is as
    it was decided from (its record but the time of its last write; its placement and its
    moves were checked by the caller), and its decider reads nothing but the job and the
    pass's market (a deadline decider also reads the offerings that just met no capacity,
    which a move of the pass may have changed)."""
    return not isinstance(decider, DeadlineDecider) and \
        replace(now, updated_at=decided.updated_at) == decided


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

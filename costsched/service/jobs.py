"""Running jobs: launch, reconcile (recoveries, finished jobs, unfinished moves), migrate,
stop, status and logs, over the job store and a launcher.

Each job's launches, migrations and recoveries go through the persisted state machine
(`costsched.migration.machine`); these functions choose the offerings (the decision model's
ranking, the policy's decision) and let the machine carry them out. A launcher is passed in
(`launchers.make_launcher`), so the core never imports a backend.
"""

from __future__ import annotations

import fnmatch
import json
import math
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path

import pandas as pd
import platformdirs

from costsched import clouds, launch_secrets
from costsched.costs import JobCost, job_costs
from costsched.jobspec import JobSpec, ResolvedJob, parse, resolve
from costsched.migration.launcher import Instance, Launcher
from costsched.migration.machine import JobLaunch, Mover, candidate, offering_of, utcnow
from costsched.model import InvalidInput, Offering
from costsched.optimize import checkpoint_interval
from costsched.optimize.decision import Overheads
from costsched.optimize.hazard import Evidence
from costsched.optimize.planner import plan_job, prepare
from costsched.passes import memo, one_pass, pass_now
from costsched.policies import OfferingKey
from costsched.policies.deadline import DEADLINE_POLICIES
from costsched.prices import prices_at
from costsched.report.amounts import usd
from costsched.service.deadline_jobs import (
    DEFAULT_DEADLINE_POLICY,
    DeadlineDecision,
    deadline_at,
    decide_deadline,
    uses_deadline_policy,
)
from costsched.service.decide import (
    Ask,
    Decision,
    OfferingName,
    decide_all,
    decide_to,
    decision_rates,
    parse_offering,
)
from costsched.service.plan import Jobs, job_specs
from costsched.service.throughputs import learn, table_with_measured
from costsched.service.values import as_time
from costsched.store import PriceStore
from costsched.store.jobs import JobRecord, StaleState
from costsched.store.moves import MoveRecord
from costsched.throughput import ThroughputTable

CANDIDATES = 5  # offerings a launch or recovery may try, best first
CAPACITY_COOLDOWN = timedelta(minutes=30)  # an offering without capacity is tried last
MIN_MIGRATION_INTERVAL = timedelta(hours=24)  # at most one planned move a day per job
# Whoever steps a job's moves or recovers it holds "steps:<job id>" meanwhile, so that two
# costsched processes (or daemon threads) never both launch or bill the same step.
STEP_LEASE_SECONDS = 300  # longer than one step (a cloud's launch call included)


@dataclass(frozen=True)
class RunningJob:
    record: JobRecord
    resolved: ResolvedJob
    launcher: str
    checkpoint_uri: str
    home_region: str
    moves: list[MoveRecord]  # as read with the record, oldest first


def launch(store: PriceStore, jobs: Jobs, *, launcher: Launcher, at: datetime | str | None = None,
           offering: str | None = None, wait_seconds: float = 0.0,
           table: ThroughputTable | None = None,
           checkpoint_root: str | None = None,
           deadline_policy: str = DEFAULT_DEADLINE_POLICY,
           envs: Mapping[str, str] | None = None,
           secrets: Mapping[str, str] | None = None) -> list[JobRecord]:
    """Start each job of `jobs` (spec files or JobSpecs) on the best offering the launcher
    can start (or `offering`, 'cloud:zone-or-region:instance_type:market'), trying the next
    ones of the ranking on a capacity error. A job with a deadline that may use on-demand
    capacity is placed by `deadline_policy` (spot in a zone that has it, or on-demand), now
    and whenever it is re-planned or recovered. `wait_seconds`: how long to wait for the
    instances to run. `envs` and `secrets`: values given at launch for a SkyPilot task's
    envs and secrets (the secrets are never stored: costsched.launch_secrets). Returns
    the stored jobs."""
    when = as_time(at)
    table = table if table is not None else table_with_measured(store)
    launched = []
    # One pass: the prices, rates and spells every job is placed from are read once (the
    # launches write none of them), so launching N jobs grows as N, not N squared.
    with one_pass():
        for source, spec in job_specs(jobs, envs=envs):
            busy = [r for r in store.jobs.find(spec.name) if not r.final]
            if busy:
                raise InvalidInput(f"job name {spec.name!r}: job {busy[0].id} of that name is "
                                   f"{busy[0].state}; stop it first or choose another name")
            leaked = sorted(set(spec.envs) & clouds.credential_envs())
            if leaked:
                raise InvalidInput(f"{source}: job {spec.name!r}: field envs.{leaked[0]}: "
                                   "credentials are neither stored nor sent to instances; "
                                   "instances use their own role")
            if spec.task.launch_envs:
                name = spec.task.launch_envs[0]
                raise InvalidInput(f"{source}: field envs.{name} is not given: give it at "
                                   "launch with --env (NAME=VALUE, or NAME alone to take its "
                                   "value from your environment)")
            given = launch_secrets.check(spec.task.secrets, secrets or {}, source)
            resolved = resolve(spec, table, when, source=source)
            by_deadline = offering is None and uses_deadline_policy(resolved)
            policy = deadline_policy if by_deadline else "dynamic-aware"
            candidates = _launch_candidates(store, resolved, when, launcher, offering,
                                            policy if by_deadline else "")
            code = _pack_code(spec, source)  # refused here when too large: nothing stored
            # What a costsched resuming this launch (after a crash) needs to carry it on.
            stored = {"spec": spec.model_dump(mode="json"), "source": source,
                      "launcher": launcher.name, "code": code, "offering": offering,
                      "checkpoint_root": checkpoint_root}
            record_id = store.jobs.create(spec.name, stored, resolved.job.steps, at=when,
                                          policy=policy)  # refused if the name is live
            launch_secrets.keep(record_id, given)
            with store.leases.holding(f"steps:{record_id}", STEP_LEASE_SECONDS) as mine:
                if mine:  # else a reconciler resumed it already (it carries it on)
                    _start_launch(store, launcher, store.jobs.get(record_id), when, candidates)
            launched.append(record_id)
    if wait_seconds > 0:
        settle(store, launcher, wait_seconds)
    return [store.jobs.get(i) for i in launched]


def reconcile(store: PriceStore, launcher: Launcher, *,
              at: datetime | str | None = None) -> list[str]:
    """One pass over this launcher's jobs: carry on every unfinished move (and launches a
    costsched stopped before their first move), recover jobs whose instance was preempted,
    and close jobs that finished or failed. Returns what happened, a line each. Run it
    every few minutes (`costsched status` and the daemon's watcher do). Another costsched
    reconciling at the same time is harmless: every step is taken under the job's lease."""
    when = as_time(at) if at is not None else None
    done: list[str] = _resume_launches(store, launcher, when)
    done += advance_moves(store, launcher, at=when)
    busy = {m.job_id for m in store.moves.unfinished()}
    runs = [run for job_id, run in _runs(store, states=["running"]).items()
            if job_id not in busy and run.launcher == launcher.name]
    done += _check_instances(store, launcher, runs, when)
    learn(store, when)  # the steps/s each placement reached, for the next plans
    return done


def advance_moves(store: PriceStore, launcher: Launcher, *,
                  at: datetime | str | None = None) -> list[str]:
    """Step every unfinished move of this launcher's jobs as far as it goes now (each under
    its job's lease; one another costsched is stepping is left to it). What changed, a
    line each."""
    when = as_time(at) if at is not None else None
    done = []
    unfinished = store.moves.unfinished()
    owners = _runs(store, {m.job_id for m in unfinished})
    for move in unfinished:
        if owners[move.job_id].launcher != launcher.name:
            continue
        try:
            after = _run_move(store, launcher, move, when)
        except StaleState:
            continue  # the other costsched got there first
        if after.state != move.state:
            done.append(f"job {move.job_id}: {move.kind} {move.state} -> {after.state}")
    return done


def _check_instances(store: PriceStore, launcher: Launcher, runs: list[RunningJob],
                     at: datetime | None) -> list[str]:
    """Ask the launcher about every running job's instance at once, store the steps they
    report and their checkpoints' news, and act on the jobs whose instance is gone
    (finished, failed, preempted): a line for each thing that happened, in job order."""
    ids = [run.record.id for run in runs]
    placed = _open_instances(store, ids)
    instances = _statuses(launcher, list(placed.values()))
    said = store.jobs.last_details(ids, "checkpoint") if ids else {}
    steps: dict[int, float] = {}
    news: dict[int, str] = {}  # job id: what its checkpoints' publishing is now
    gone = []
    for run in runs:
        job_id = run.record.id
        if job_id in placed:
            instance = instances[placed[job_id]]
            step = _step_news(run.record, instance.step)
            if step is not None:
                steps[job_id] = step
            if instance.state in ("running", "pending"):
                now = (f"not published: {instance.checkpoint_error}"
                       if instance.checkpoint_error else "published")
                if now != said.get(job_id, "published"):
                    news[job_id] = now
                continue
        gone.append(run)  # gone, or no open placement at all (an interrupted recovery)
    when = at or as_time(None)
    store.jobs.record_steps(steps, at=when)
    lines = {}
    for job_id, now in news.items():
        store.jobs.note(job_id, "checkpoint", now, at=when)
        lines[job_id] = f"job {job_id}: checkpoints {now}"
    for run in gone:
        lines[run.record.id] = _act_on_gone(store, launcher, run, at)
    return [lines[i] for i in ids if lines.get(i)]


def _statuses(launcher: Launcher, instance_ids: list[str]) -> dict[str, Instance]:
    """The launcher's word on each instance, in one call; an instance it does not know is
    asked about alone, so that its error says which."""
    found = launcher.statuses(instance_ids) if instance_ids else {}
    for instance_id in instance_ids:
        if instance_id not in found:
            found[instance_id] = launcher.status(instance_id)
    return found


def _open_instances(store: PriceStore, job_ids: Sequence[int]) -> dict[int, str]:
    """The instance of each job's open placement (the newest, when a move has two open),
    from one read."""
    if not job_ids:
        return {}
    newest = _newest_open_rows(store.jobs.placements_of(job_ids, open_only=True))
    return dict(zip(newest["job_id"].astype(int), newest["instance"].astype(str),
                    strict=True))


def _newest_open_rows(placements: pd.DataFrame) -> pd.DataFrame:
    """The newest open placement of each job (a move has two open for a while)."""
    return placements[placements["end_at"].isna()].drop_duplicates("job_id", keep="last")


def _newest_open(placements: pd.DataFrame) -> dict[int, pd.Series]:
    """Each job's open placement (the newest, when a move has two open)."""
    newest = _newest_open_rows(placements)
    columns = newest.columns  # one Index shared by every row's Series
    job = columns.get_loc("job_id")
    return {int(values[job]): pd.Series(values, index=columns, dtype=object, name=index,
                                        copy=False)
            for index, *values in newest.itertuples(name=None)}


def settle(store: PriceStore, launcher: Launcher, seconds: float, poll: float = 0.2) -> None:
    """Reconcile until no move is under way for this launcher's jobs, or `seconds` pass."""
    deadline = time.monotonic() + seconds
    while True:
        reconcile(store, launcher)
        unfinished = store.moves.unfinished()
        owners = _runs(store, {m.job_id for m in unfinished})
        pending = [m for m in unfinished if owners[m.job_id].launcher == launcher.name]
        if not pending or time.monotonic() >= deadline:
            return
        time.sleep(poll)


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
            deadline_jobs_only: bool = False, to: str | None = None,
            stop: Callable[[], bool] | None = None) -> list[MigrationAdvice]:
    """Ask the policy where each running job (or `job`) should be now, among every offering
    the job's constraints allow, and, unless `dry_run`, start the migrations that pay: the
    expected cost of the rest of the job there, the move included, is below staying by
    more than `margin` x the expected cost of the next day where it is. Within the job's
    max_migrations, and at most once a day per job unless `force`. `force`: now, whatever
    the daily limit and the margin, but still only a move that pays (and within
    max_migrations). `to`: move `job` to this offering ('aws us-west-2b p3.2xlarge spot',
    as the tables print it), the user's choice, even a dearer one (its reason says by how
    much). Jobs placed by a deadline policy are asked that policy, and not held to once a
    day (`deadline_jobs_only`: only those, for the daemon's hourly pass). `overheads`: the
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
        placed = _placed(store, launcher, job_ids(store, job, states=("running",)),
                         deadline_jobs_only)
        out = []
        for (run, placement), choice in zip(placed, _decide(store, placed, ask), strict=True):
            started, reason = None, _reason(run, choice, ask)
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


def _placed(store: PriceStore, launcher: Launcher, job_ids: Sequence[int],
            deadline_jobs_only: bool) -> list[tuple[RunningJob, pd.Series]]:
    """The jobs of `job_ids` that `migrate` asks about, with their open placement: this
    launcher's, placed now (and placed by a deadline policy, with `deadline_jobs_only`).
    The placements are read once for all of them."""
    if not job_ids:
        return []
    placements = store.jobs.placements(job_ids[0] if len(job_ids) == 1 else None)
    placements = placements[placements["end_at"].isna() & placements["job_id"].isin(job_ids)]
    open_by_job = {int(j): rows.iloc[-1] for j, rows in placements.groupby("job_id")}
    runs = _runs(store, [j for j in job_ids if int(j) in open_by_job])
    out = []
    for job_id in job_ids:
        placement = open_by_job.get(int(job_id))
        if placement is None:
            continue
        run = runs[int(job_id)]
        if run.launcher == launcher.name and (_deadline_policy(run) or not deadline_jobs_only):
            out.append((run, placement))
    return out


def _decide(store: PriceStore, placed: Sequence[tuple[RunningJob, pd.Series]],
            ask: _Asking) -> list[Decision]:
    """Each job's decision, in order: the cost policy's for all of them at once, a
    deadline policy's or the user's target (`ask.target`) per job."""
    decisions: dict[int, Decision] = {}
    by_cost: list[tuple[int, Ask]] = []
    for i, (run, placement) in enumerate(placed):
        current: OfferingKey = tuple(placement[k] for k in (  # type: ignore[assignment]
            "cloud", "region", "zone", "instance_type", "market", "os"))
        left = _steps_left_of(store, run, ask.when)
        by_deadline = _deadline_policy(run) if ask.target is None else ""
        if ask.target is not None:
            decisions[i] = decide_to(store, run.resolved.job, ask.target, current=current,
                                     steps_left=left, at=ask.when, table=run.resolved.table,
                                     overheads=ask.overheads,
                                     measured_rates=_rates(store, ask.when))
        elif by_deadline:
            decisions[i] = decide_deadline(store, run.resolved,
                                           created_at=run.record.created_at, at=ask.when,
                                           steps_left=left, current=current,
                                           policy=by_deadline, overheads=ask.overheads,
                                           unavailable=_recently_full(store, ask.when),
                                           measured_rates=_rates(store, ask.when))
        else:  # with the spec's own throughputs
            by_cost.append((i, Ask(run.resolved.job, run.home_region, current, left,
                                   run.resolved.table)))
    if by_cost:
        found = decide_all(store, [a for _, a in by_cost], policy=ask.policy, at=ask.when,
                           margin=0.0 if ask.force else ask.margin, overheads=ask.overheads,
                           measured_rates=_rates(store, ask.when))
        decisions.update((i, d) for (i, _), d in zip(by_cost, found, strict=True))
    return [decisions[i] for i in range(len(placed))]


def _reason(run: RunningJob, choice: Decision, ask: _Asking) -> str:
    """Why the job moves or stays (`_move_reason`), or what its deadline policy says."""
    by_deadline = _deadline_policy(run) if ask.target is None else ""
    if by_deadline:
        return f"{by_deadline} (deadline {_deadline_label(run)}): " + (
            f"stay on {_label(choice.choice)}" if not choice.moves else
            f"move to {_label(choice.choice)}")
    return _move_reason(choice, ask.margin if not ask.force else 0.0,
                        asked=ask.target is not None)


def _move_if_still(store: PriceStore, launcher: Launcher, run: RunningJob,
                   placement: pd.Series, choice: Decision, ask: _Asking,
                   stamp: datetime | None) -> tuple[Decision, MoveRecord | None, str]:
    """Under the job's lease: decide for it again from what the store says now (another
    costsched may have moved it, or be moving it), and start the move if it still pays
    and its limits allow. (The decision, the move started or None, the reason.)"""
    job_id = run.record.id
    reason = _reason(run, choice, ask)
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
        run = replace(run, record=record)  # its spec does not change, nor its placement
        [choice] = _decide(store, [(run, placement)], ask)
        reason = _reason(run, choice, ask)
        if not choice.moves:
            return choice, None, reason
        # A deadline policy re-decides every period and has its own hysteresis; the
        # once-a-day limit would make it miss deadlines. A move the user asked for
        # (`to`) is theirs to time.
        daily = not (ask.force or _deadline_policy(run) or ask.target is not None)
        blocked = _migration_limit(run, moves, ask.when, daily=daily)
        if blocked:
            return choice, None, f"{reason}; not moved: {blocked}"
        return choice, _start_migration(store, launcher, run, choice, placement, stamp,
                                        fallbacks=ask.target is None), reason


def _move_reason(choice: Decision, margin: float, asked: bool) -> str:
    """Why the job moves or stays, in dollars (never NaN: an unknown amount is '-')."""
    stay, there = usd(choice.stay_usd), usd(choice.choice_usd)
    where = _label(choice.choice)
    if asked:
        if not choice.moves:
            return f"stay: it runs on {where} already"
        diff = choice.choice_usd - choice.stay_usd
        verdict = (f"${diff:,.2f} dearer" if diff >= 0.01 else
                   f"{usd(diff)} dearer" if diff > 0 else f"saves {usd(-diff)}")
        return (f"move to {where} as asked: {stay} expected here, {there} there including "
                f"the move ({verdict})")
    if choice.moves:
        return (f"move: {stay} expected here, {there} on {where} including the move "
                f"(saves {usd(choice.stay_usd - choice.choice_usd)})")
    if choice.held:
        return f"stay: {stay} expected here; not moved to {where}: {choice.held}"
    return (f"stay: {stay} expected here; no move saves more than {margin:.0%} of the "
            "next day's cost here")


@dataclass(frozen=True)
class Failure:
    """Why a job failed: its exit code and last lines of output, or the phase it failed
    in before its command ran (e.g. "setup"), and the launcher's word on it."""

    exit_code: int | None
    phase: str
    detail: str
    log_tail: list[str]


@dataclass(frozen=True)
class JobStatus:
    record: JobRecord
    placement: pd.Series | None  # the open placement (offering, since, price, instance)
    instance_state: str  # the launcher's word on it ('' when the job has no instance)
    steps_left: float  # reported by the job, else estimated from the hours run on each GPU
    cost: JobCost  # so far, from the stored prices, summed over every placement
    moves: list[MoveRecord]
    next: str  # what the policy would do now, and why in dollars ('' when not running)
    reported: bool = False  # steps_left is the job's own report, not an estimate
    failure: Failure | None = None  # why it failed (failed jobs)
    checkpoint_error: str = ""  # why its checkpoints fail to publish now ('' when fine)

    @property
    def progress(self) -> float:
        total = self.record.steps_total
        if self.record.state == "succeeded":
            return 1.0
        return min(max((total - self.steps_left) / total, 0.0), 1.0)


FAILURE_LOG_LINES = 10


ADVICE_UP_TO = 20  # jobs shown: above, the policy's advice is `migrate --dry-run`'s


def status(store: PriceStore, launcher: Launcher | None, job: int | str | None = None, *,
           at: datetime | str | None = None, reconcile_first: bool = True,
           states: Sequence[str] = (), name: str | None = None, limit: int | None = None,
           advice: bool | None = None) -> list[JobStatus]:
    """Each job (or `job`; or those in `states`, whose name matches the pattern `name`,
    the newest `limit`): state, placement, progress (reported or estimated), cost so far,
    its moves and, for a failed job, why. With a launcher, its jobs are reconciled first
    (recoveries start, finished jobs close, interrupted launches resume) unless not
    `reconcile_first`. `advice`: what the policy would do now for each running job
    (default: when at most ADVICE_UP_TO jobs are shown). One pass: the prices, rates and
    placements are read once for every job shown."""
    when = as_time(at)
    with one_pass():
        if launcher is not None and reconcile_first:
            reconcile(store, launcher)
        ids = _shown(store, job, states, name, limit)
        advise = len(ids) <= ADVICE_UP_TO if advice is None else advice
        runs = _runs(store, ids)
        placed = store.jobs.placements_of(ids)
        rows_of = placed.groupby("job_id").indices if len(placed) else {}
        open_by_job = _newest_open(placed)
        ours = {job_id for job_id in ids if launcher is not None
                and runs[job_id].launcher == launcher.name and job_id in open_by_job}
        instances = _statuses(launcher, [str(open_by_job[j]["instance"]) for j in ids
                                         if j in ours]) if ours else {}
        asked = {j: instances[str(open_by_job[j]["instance"])] for j in ids if j in ours}
        steps = {j: step for j, i in asked.items()
                 if (step := _step_news(runs[j].record, i.step)) is not None}
        store.jobs.record_steps(steps, at=when)
        failed = [j for j in ids if runs[j].record.state == "failed"]
        ended = store.jobs.events_of(failed, kinds=["state"])
        ended_of = ended.groupby("job_id").indices if len(ended) else {}
        costs = job_costs(store, ids, now=when, checkpoint_gb={
            job_id: run.resolved.job.checkpoint_gb for job_id, run in runs.items()})
        shown = []
        for job_id in ids:
            run = runs[job_id]
            done = steps.get(job_id, run.record.steps_done)
            # Its placements, where they are needed: an estimate of its steps, a failure.
            mine = (placed.iloc[rows_of.get(job_id, [])]
                    if done <= 0 or run.record.state == "failed" else None)
            left, reported = _progress_of(run, done, mine, when)
            failure = None
            if run.record.state == "failed":
                events = ended.iloc[ended_of.get(job_id, [])]
                failure = _failure_of(launcher if run.launcher == getattr(
                    launcher, "name", None) else None, events, mine)
            shown.append(_status_of(store, launcher, run, open_by_job.get(job_id),
                                    asked.get(job_id), left, reported, costs[job_id],
                                    failure, when, advise))
        return shown


def _shown(store: PriceStore, job: int | str | None, states: Sequence[str],
           name: str | None, limit: int | None) -> list[int]:
    """The ids `status` shows, oldest first."""
    if job is not None:
        return job_ids(store, job, states=())
    frame = store.jobs.list(states=list(states))
    if name is not None and not frame.empty:
        frame = frame[[fnmatch.fnmatchcase(n, name) for n in frame["name"]]]
    ids = [] if frame.empty else [int(i) for i in frame["id"]]
    return ids[-limit:] if limit else ids


def _status_of(store: PriceStore, launcher: Launcher | None, run: RunningJob,
               placement: pd.Series | None, instance: Instance | None, left: float,
               reported: bool, cost: JobCost, failure: Failure | None, when: datetime,
               advise: bool) -> JobStatus:
    advice = ""
    if advise and instance is not None and instance.state == "running" and left > 0:
        found = migrate(store, launcher, run.record.id, dry_run=True, at=when)
        # A decision whose dollars are not numbers says nothing a user can act on.
        if found and math.isfinite(found[0].stay_usd) and math.isfinite(found[0].move_usd):
            advice = found[0].reason
    return JobStatus(run.record, placement, "" if instance is None else instance.state,
                     left, cost, run.moves, advice, reported, failure,
                     "" if instance is None else instance.checkpoint_error)


def _failure_of(launcher: Launcher | None, events: pd.DataFrame,
                placements: pd.DataFrame) -> Failure:
    """Why the job failed: its last instance's exit code, phase and output, where the
    launcher still has them; else what its log recorded (`events`: its state changes)."""
    ended = events[events["to_state"] == "failed"]
    detail = str(ended["detail"].iloc[-1]) if not ended.empty else ""
    if launcher is None or placements.empty:
        return Failure(None, "", detail, [])
    last = str(placements["instance"].iloc[-1])
    try:
        instance = launcher.status(last)
        lines = launcher.logs(last, tail=FAILURE_LOG_LINES).splitlines()
    except InvalidInput:  # the launcher no longer knows it
        return Failure(None, "", detail, [])
    return Failure(instance.exit_code, instance.phase, detail or instance.detail, lines)


@dataclass(frozen=True)
class BudgetAlarm:
    job_id: int
    name: str
    level: str  # "near" (80% or more of the budget spent) or "over"
    spent_usd: float
    budget_usd: float


BUDGET_NEAR = 0.8


def budget_alarms(store: PriceStore, *, at: datetime | str | None = None) -> list[BudgetAlarm]:
    """Jobs that have spent 80% of their budget, or all of it, since they were last alarmed
    at that level: each alarm is raised once per job and level (and logged in its events)."""
    when = as_time(at)
    alarms = []
    frame = store.jobs.list()
    # Only the jobs with a budget are resolved and charged (the stored spec names it).
    budgeted = [] if frame.empty else [
        int(job_id) for job_id, stored in zip(frame["id"], frame["spec"], strict=True)
        if ((stored.get("spec") or {}).get("constraints") or {}).get("budget") is not None]
    runs = _runs(store, budgeted)
    costs = job_costs(store, budgeted, now=when, checkpoint_gb={
        job_id: run.resolved.job.checkpoint_gb for job_id, run in runs.items()})
    for job_id, run in runs.items():
        budget = run.resolved.job.constraints.budget_usd
        if budget is None:
            continue
        spent = costs[job_id].total_usd
        level = "over" if spent > budget else "near" if spent >= BUDGET_NEAR * budget else ""
        if not level:
            continue
        raised = store.jobs.events(job_id)
        if ((raised["kind"] == "budget") & raised["detail"].str.startswith(level)).any():
            continue
        store.jobs.note(job_id, "budget", f"{level}: ${spent:,.2f} of ${budget:,.2f}",
                        at=when)
        alarms.append(BudgetAlarm(job_id, run.record.name, level, spent, budget))
    return alarms


def stop(store: PriceStore, launcher: Launcher, job: int | str, *,
         at: datetime | str | None = None) -> JobRecord:
    """End a job: its instance is terminated (its published checkpoints are kept). The stop
    is recorded before anything is terminated, so a store that cannot be written leaves the
    job running as it was (never an instance gone that the next pass would recover), and a
    stop interrupted after that is finished by stopping the job again."""
    when = as_time(at)
    job_id = job_ids(store, job, states=())[0]
    record = store.jobs.get(job_id)
    unfinished = [m for m in store.moves.of_job(job_id) if not m.ended]
    live = [i for i in launcher.instances(job_id) if i.live]
    open_placement = _open_placement(store, job_id) is not None
    if record.final and not (record.state == "cancelled" and
                             (unfinished or live or open_placement)):
        raise InvalidInput(f"job {job_id} ({record.name}) is {record.state} already")
    if not record.final:
        record = store.jobs.transition(job_id, "cancelled", at=when, expect=record.state,
                                       detail="stopped by the user")
    for move in unfinished:
        store.moves.advance(move, "cancelled", at=when, detail="the job was stopped")
    for instance in live:
        launcher.terminate(instance.id)
    while open_placement and store.jobs.end_placement(job_id, when) is not None:
        pass  # a job stopped mid-migration has two
    return record


def start(store: PriceStore, launcher: Launcher, job: int | str, *,
          at: datetime | str | None = None) -> JobRecord:
    """Start a stopped job again: from its newest verified checkpoint, with the code and
    spec it was launched with, on the best offering now (or its deadline policy's)."""
    when = as_time(at)
    job_id = job_ids(store, job, states=())[0]
    record = store.jobs.get(job_id)
    if record.state != "cancelled":
        raise InvalidInput(f"job {job_id} ({record.name}) is {record.state}: only a stopped "
                           "job can be started again")
    busy = [r for r in store.jobs.find(record.name) if not r.final]
    if busy:
        raise InvalidInput(f"job name {record.name!r}: job {busy[0].id} of that name is "
                           f"{busy[0].state}; stop it first")
    run = _running(store, job_id)
    if run.launcher != launcher.name:
        raise InvalidInput(f"job {job_id} ({record.name}) runs with the {run.launcher} "
                           f"launcher, not {launcher.name}")
    by_deadline = _deadline_policy(run)
    if by_deadline:
        decision = decide_deadline(store, run.resolved, created_at=record.created_at, at=when,
                                   steps_left=steps_left(store, run, when), current=None,
                                   policy=by_deadline, unavailable=_recently_full(store, when),
                                   measured_rates=_rates(store, when))
        cands = _deadline_candidates(run.resolved, decision, launcher)
    else:
        cands = _candidates(store, run.resolved, when, launcher, None)
    store.jobs.transition(job_id, "pending", at=when, expect="cancelled",
                          detail="started again by the user")
    move = store.moves.create(job_id, "recovery", cands, at=when,
                              detail="started again from its newest verified checkpoint")
    _run_move(store, launcher, move, at)
    return store.jobs.get(job_id)


def follow(store: PriceStore, launcher: Launcher, job: int | str, *, poll: float = 1.0,
           tail: int = 1000) -> Iterator[str]:
    """The job's output as it comes, from its current instance on, then each instance a
    recovery or move starts, until the job has ended. Its jobs are reconciled meanwhile, as
    `status` does, so that the job's end is seen."""
    job_id = job_ids(store, job, states=())[0]
    followed, seen = None, []  # the index of the instance followed, its last lines shown
    while True:
        reconcile(store, launcher)
        final = store.jobs.get(job_id).final  # before the last reads: nothing is missed
        order = list(dict.fromkeys(store.jobs.placements(job_id)["instance"].astype(str)))
        if followed is None and order:
            followed = len(order) - 1
            yield f"--- instance {order[followed]}\n"
        while followed is not None:
            lines = launcher.logs(order[followed], tail=tail).splitlines(keepends=True)
            fresh = _new_lines(seen, lines)
            if fresh:
                yield "".join(fresh)
            seen = lines
            if followed + 1 >= len(order):
                break
            followed, seen = followed + 1, []  # a newer instance: read the old one to its end
            yield f"--- instance {order[followed]}\n"
        if final:
            return
        time.sleep(poll)


def _new_lines(seen: list[str], lines: list[str]) -> list[str]:
    """The lines of `lines` after those already seen (the window may have scrolled)."""
    for dropped in range(len(seen) + 1):
        kept = len(seen) - dropped
        if lines[:kept] == seen[dropped:]:
            return lines[kept:]
    return lines


def logs(store: PriceStore, launcher: Launcher, job: int | str, tail: int = 200) -> str:
    """The job's output on its current (or last) instance."""
    job_id = job_ids(store, job, states=())[0]
    placements = store.jobs.placements(job_id)
    if placements.empty:
        return ""
    return launcher.logs(str(placements["instance"].iloc[-1]), tail=tail)


def steps_left(store: PriceStore, run: RunningJob, at: datetime) -> float:
    """The steps the job has left: its total less the step it reported (its progress
    file), or, when it reports none, less the steps its placements made, estimated from
    the hours each ran and the throughput of its GPUs (restarts lose a little more)."""
    return progress(store, run, at)[0]


def progress(store: PriceStore, run: RunningJob, at: datetime) -> tuple[float, bool]:
    """(steps left, whether they come from the job's own report rather than an estimate)."""
    reported = store.jobs.get(run.record.id).steps_done
    placements = store.jobs.placements(run.record.id) if reported <= 0 else None
    return _progress_of(run, reported, placements, at)


def _steps_left_of(store: PriceStore, run: RunningJob, at: datetime) -> float:
    """`steps_left` of a job whose record was just read: its reported step is on the
    record, so the store is read only for a job that reports none (its placements)."""
    reported = run.record.steps_done
    placements = store.jobs.placements(run.record.id) if reported <= 0 else None
    return _progress_of(run, reported, placements, at)[0]


def _progress_of(run: RunningJob, reported: float, placements: pd.DataFrame | None,
                 at: datetime) -> tuple[float, bool]:
    """`progress` from the step the job reported and its placements (read by the caller)."""
    if reported > 0:
        return max(run.record.steps_total - reported, 0.0), True
    done = 0.0
    for p in placements.itertuples():  # type: ignore[union-attr]
        end = at if pd.isna(p.end_at) else p.end_at
        hours = max((pd.Timestamp(end) - pd.Timestamp(p.start_at)).total_seconds(), 0) / 3600
        sps = run.resolved.table.get(run.resolved.job.model, p.gpu_model, int(p.gpu_count))
        done += hours * 3600 * sps.steps_per_second
    return max(run.resolved.job.steps - done, 0.0), False


# --- internals ---------------------------------------------------------------------------


def _candidates(store: PriceStore, resolved: ResolvedJob, at: datetime, launcher: Launcher,
                offering: str | None, exclude: Sequence[OfferingKey] = ()) -> list[dict]:
    """The best offerings for the job now that the launcher can start, best first."""
    frame = prices_at(store, at, include_cpu=resolved.cpu)
    if frame.empty:
        raise InvalidInput(f"at {at:%Y-%m-%d %H:%M} UTC: no prices known; import or collect "
                           "prices first")
    offerings = memo(("prepared", store.url, at, resolved.cpu),
                     lambda: prepare(frame, _rates(store, at)),
                     shared=True)  # read only: every job of a pass ranks the same offerings
    plan = plan_job(resolved, offerings)
    choices = plan.choices
    if offering is not None:
        choices = plan.ranked[plan.ranked["offering"].map(_spelled(offering))]
        if choices.empty:
            raise InvalidInput(f"offering {offering!r}: not a priced offering now; expected "
                               "cloud:zone-or-region:instance_type:market as `costsched "
                               "prices show` lists them")
    full = _recently_full(store, at)
    ready, later = [], []
    for row in choices.itertuples():
        o = offering_of({"key": [row.cloud, row.region, row.zone, row.instance_type,
                                 row.market, row.os],
                         "gpu_model": row.gpu_model, "gpu_count": row.gpu_count})
        if o.key in exclude or not launcher.can_launch(o):
            continue
        # An offering that just had no capacity is tried after the others.
        (later if o.key in full else ready).append(candidate(o, row.usd_per_hour))
    out = [*ready, *later][:CANDIDATES]
    if not out:
        raise InvalidInput(plan.reason or f"job {resolved.name}: no offering that "
                           f"{launcher.name} can launch meets its constraints now")
    return out


def measured_rates(store: PriceStore, at: datetime) -> pd.DataFrame | None:
    """Preemptions per spot hour that costsched's own jobs met, per (cloud, region, zone,
    instance type, GPU model and count): the decision model pools them (`hazard`)."""
    seen = store.availability.since()
    placements = store.jobs.placements()
    if placements.empty:
        return None
    spot = placements[placements["market"] == "spot"]
    if spot.empty:
        return None
    end = spot["end_at"].fillna(pd.Timestamp(at))
    hours = (end - spot["start_at"]).dt.total_seconds().clip(lower=0) / 3600
    keys = ["cloud", "region", "zone", "instance_type", "gpu_model", "gpu_count"]
    frame = spot.assign(hours=hours).groupby(keys, as_index=False)["hours"].sum()
    preempted = seen[seen["event"] == "preempted"].groupby(keys).size().rename("preemptions")
    frame = frame.join(preempted, on=keys).fillna({"preemptions": 0})
    return frame[frame["hours"] > 0]


def _rates(store: PriceStore, at: datetime) -> Evidence:
    """Preemption rates for a ranking: costsched's own jobs' and the store's observations
    (once per pass: a pass's moves start no spot hours before `at`, nor preemptions)."""
    return memo(("rates", store.url, at),
                lambda: decision_rates(store, at, measured_rates(store, at)), shared=True)


def _recently_full(store: PriceStore, at: datetime) -> set[OfferingKey]:
    full = store.availability.since(at - CAPACITY_COOLDOWN, event="capacity")
    return {(r.cloud, r.region, r.zone, r.instance_type, r.market, "linux")
            for r in full.itertuples()}


def _placed_offering(placement: pd.Series) -> Offering:
    return offering_of({"key": [placement[k] for k in (
        "cloud", "region", "zone", "instance_type", "market", "os")],
        "gpu_model": placement["gpu_model"], "gpu_count": int(placement["gpu_count"])})


def _spelled(text: str) -> Callable[[str], bool]:
    """Matches an offering label ('aws us-east-1f p3.2xlarge spot') against the user's
    'aws:us-east-1f:p3.2xlarge:spot' (or the label itself)."""
    wanted = text.strip().replace(":", " ").replace("on_demand", "on-demand").split()
    return lambda label: label.split() == wanted


def _start_migration(store: PriceStore, launcher: Launcher, run: RunningJob,
                     choice: Decision, placement: pd.Series, at: datetime | None,
                     fallbacks: bool = True) -> MoveRecord:
    """Start moving the job to `choice` (the caller holds the job's lease, and decided
    under it); when it has no capacity there, try the next best offerings (not with
    `fallbacks` False: a move the user asked for goes there or nowhere), then stay where it
    is. `at`: the time its steps are stamped with (None: the clock's)."""
    current = _placed_offering(placement)
    first = candidate(choice.offering, choice.usd_per_hour)
    if not launcher.can_launch(choice.offering):
        raise InvalidInput(f"offering {_label(choice.choice)}: the {launcher.name} launcher "
                           "cannot start it")
    try:
        rest = [] if not fallbacks else (
            _deadline_candidates(run.resolved, choice, launcher)[1:]
            if isinstance(choice, DeadlineDecision) else
            [candidate(o, price) for o, price in choice.alternatives
             if launcher.can_launch(o)])
        rest = [c for c in rest if tuple(c["key"]) != current.key]
    except InvalidInput:
        rest = []
    # Last: the source's own offering, so a move that cannot land keeps the job running.
    cands = [first, *rest[:CANDIDATES - 2], candidate(current, float(placement["usd_per_hour"]))]
    move = store.moves.create(run.record.id, "migration", cands, at=at or utcnow(),
                              source_instance=str(placement["instance"]),
                              detail=f"to {_label(choice.choice)}")
    return _mover(store, launcher, run, at).run(move)  # made under the lease: as it is


def _run_move(store: PriceStore, launcher: Launcher, move: MoveRecord,
              at: datetime | None = None) -> MoveRecord:
    """Step `move` as far as it goes now; left as it is when another costsched is stepping
    this job's moves (it carries on)."""
    with store.leases.holding(f"steps:{move.job_id}", STEP_LEASE_SECONDS) as mine:
        if not mine:
            return move
        return _step_move(store, launcher, move, at)


def _step_move(store: PriceStore, launcher: Launcher, move: MoveRecord,
               at: datetime | None = None) -> MoveRecord:
    """`_run_move` for a caller that holds the job's lease already."""
    move = store.moves.get(move.id)  # as the last holder left it
    if move.ended:
        return move
    return _mover(store, launcher, _running(store, move.job_id), at).run(move)


def _launch_candidates(store: PriceStore, resolved: ResolvedJob, when: datetime,
                       launcher: Launcher, offering: str | None,
                       deadline_policy: str) -> list[dict]:
    """The offerings a launch tries, best first: the deadline policy's (when it places
    the job) or the decision model's ranking (or `offering`)."""
    if deadline_policy:
        decision = decide_deadline(store, resolved, created_at=when, at=when,
                                   steps_left=resolved.job.steps, current=None,
                                   policy=deadline_policy,
                                   unavailable=_recently_full(store, when),
                                   measured_rates=_rates(store, when), late_ok=False)
        return _deadline_candidates(resolved, decision, launcher)
    return _candidates(store, resolved, when, launcher, offering)


def _start_launch(store: PriceStore, launcher: Launcher, record: JobRecord, when: datetime,
                  candidates: list[dict] | None = None) -> None:
    """Carry a pending job without a move to its launch move and step it (under the job's
    lease, held by the caller): check its checkpoint store, then launch. A job that
    cannot start (its checkpoint store, no offering) fails, saying why."""
    stored = record.spec
    spec = parse(stored["spec"], stored.get("source", "<stored spec>"))
    uri = _checkpoint_uri(spec, record.id, stored.get("checkpoint_root"))
    try:
        _check_checkpoints(uri)
        _store_code(stored.get("code"), uri)
        if candidates is None:
            run = _running(store, record.id)
            candidates = _launch_candidates(store, run.resolved, when, launcher,
                                            stored.get("offering"), _deadline_policy(run))
    except InvalidInput as exc:
        store.jobs.transition(record.id, "failed", at=when, expect="pending",
                              detail=str(exc))
        raise
    store.jobs.record_progress(record.id, 0.0, at=when, checkpoint_location=uri)
    move = store.moves.create(record.id, "launch", candidates, at=when,
                              detail=f"{len(candidates)} candidate offering(s)")
    _step_move(store, launcher, move)


def _resume_launches(store: PriceStore, launcher: Launcher, at: datetime | None) -> list[str]:
    """Launches a costsched stopped between storing the job and starting its launch move:
    each is carried on by whoever takes the job's lease (free at once when its holder died
    on this host, else when the lease expires)."""
    done = []
    pending = store.jobs.records(states=["pending"])
    moved = store.moves.of_jobs([r.id for r in pending])
    for job_id in [r.id for r in pending
                   if r.spec.get("launcher") == launcher.name and not moved[r.id]]:
        with store.leases.holding(f"steps:{job_id}", STEP_LEASE_SECONDS) as mine:
            record = store.jobs.get(job_id)  # as things are now, under the lease
            if not mine or record.state != "pending" or store.moves.of_job(job_id):
                continue
            try:
                _start_launch(store, launcher, record, at or as_time(None))
                done.append(f"job {job_id}: interrupted launch resumed")
            except InvalidInput as exc:
                done.append(f"job {job_id}: failed: {exc}")
    return done


def _act_on_gone(store: PriceStore, launcher: Launcher, run: RunningJob,
                 at: datetime | None) -> str:
    """Close or recover a job whose instance is gone (or that has no open placement),
    under the job's lease."""
    with store.leases.holding(f"steps:{run.record.id}", STEP_LEASE_SECONDS) as mine:
        # Under the lease, as things are now: another costsched may have acted already.
        if not mine or store.jobs.get(run.record.id).state != "running" or any(
                m.job_id == run.record.id for m in store.moves.unfinished()):
            return ""
        try:
            return _end_or_recover(store, launcher, run, at)
        except StaleState:  # a move of the job was started meanwhile: it carries on
            return ""


def _end_or_recover(store: PriceStore, launcher: Launcher, run: RunningJob,
                    at: datetime | None) -> str:
    """Close a job whose instance finished, or recover one whose instance is gone."""
    placement = _open_placement(store, run.record.id)
    when = at or as_time(None)
    job_id = run.record.id
    if placement is None:
        return _recover(store, launcher, run, at, None, "no instance",
                        "its placement had ended (an interrupted recovery)")
    instance = launcher.status(str(placement["instance"]))
    _record_step(store, run.record, instance.step, when)
    if instance.state in ("running", "pending"):
        return ""
    if instance.state in ("succeeded", "failed"):
        launcher.terminate(instance.id)
        store.jobs.end_placement(job_id, when)
        detail = (f"finished on {instance.id}" if instance.state == "succeeded" else
                  f"exit code {instance.exit_code}: {instance.detail}")
        store.jobs.transition(job_id, instance.state, at=when, expect="running", detail=detail)
        return f"job {job_id}: {instance.state}" + (
            f" (exit code {instance.exit_code})" if instance.state == "failed" else "")
    # Preempted, or stopped or terminated behind costsched's back: recover it.
    if instance.state == "preempted":
        store.availability.record(_placed_offering(placement), "preempted", at=when,
                                  detail=f"instance {instance.id}")
    launcher.terminate(instance.id)
    store.jobs.end_placement(job_id, when)
    return _recover(store, launcher, run, at, placement, instance.id,
                    f"instance {instance.id} {instance.state}")


def _recover(store: PriceStore, launcher: Launcher, run: RunningJob, at: datetime | None,
             placement: pd.Series | None, source: str, why: str) -> str:
    """Start and step a recovery of a job whose instance is gone (its placement closed);
    `at`: the time of the pass (None: the clock, as the steps go)."""
    job_id = run.record.id
    when = at or as_time(None)
    by_deadline = _deadline_policy(run)
    if by_deadline:
        lost = set() if placement is None else {_placed_offering(placement).key}
        decision = decide_deadline(
            store, run.resolved, created_at=run.record.created_at, at=when,
            steps_left=steps_left(store, run, when), current=None, policy=by_deadline,
            unavailable={*_recently_full(store, when), *lost},
            measured_rates=_rates(store, when))
        cands = _deadline_candidates(run.resolved, decision, launcher)
    else:
        cands = _candidates(store, run.resolved, when, launcher, None)
    move = store.moves.create(job_id, "recovery", cands, at=when,
                              source_instance="" if placement is None else source,
                              detail=why)
    after = _mover(store, launcher, run, at).run(move)  # under the steps lease already
    return f"job {job_id}: {why}; recovery {after.state}"


def _record_step(store: PriceStore, record: JobRecord, step: int | None,
                 at: datetime | None) -> None:
    """Store the step the job reported, when it is news."""
    news = _step_news(record, step)
    if news is not None:
        store.jobs.record_step(record.id, news, at=at or as_time(None))


def _step_news(record: JobRecord, step: int | None) -> float | None:
    """The step to store from the job's report (None: no report, or nothing new)."""
    if step is None or step <= 0:
        return None
    step = min(float(step), record.steps_total)  # a job that runs past its spec is done
    return step if step != record.steps_done else None


def _deadline_policy(run: RunningJob) -> str:
    """The deadline policy that places this job ('' when the cost policy does)."""
    return run.record.policy if run.record.policy in DEADLINE_POLICIES else ""


def _deadline_label(run: RunningJob) -> str:
    due = deadline_at(run.resolved, run.record.created_at)
    return "none" if due is None else f"{due:%Y-%m-%d %H:%M} UTC"


def _deadline_candidates(resolved: ResolvedJob, decision: DeadlineDecision,
                         launcher: Launcher) -> list[dict]:
    """The deadline policy's choice first, then its fallbacks (capacity), those the
    launcher can start."""
    out = [candidate(decision.offering, decision.usd_per_hour)]
    out += [candidate(offering_of({"key": list(key), "gpu_model": facts["gpu_model"],
                                   "gpu_count": facts["gpu_count"]}), facts["usd_per_hour"])
            for key, facts in decision.fallbacks]
    out = [c for c in out if launcher.can_launch(offering_of(c))][:CANDIDATES]
    if not out:
        raise InvalidInput(f"job {resolved.name}: no offering that {launcher.name} can "
                           "launch meets its constraints now")
    return out


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


def _mover(store: PriceStore, launcher: Launcher, run: RunningJob,
           at: datetime | None = None) -> Mover:
    """What steps the job's moves: its launch, from its stored spec (which never changes)."""
    spec = run.resolved
    code = run.record.spec.get("code") or {}
    task = run.record.spec["spec"].get("task") or {}
    secrets = launch_secrets.values(run.record.id, task.get("secrets", []), run.record.name)
    job = JobLaunch(run.record.id, run.record.name, spec.job.run, run.checkpoint_uri,
                    {**spec.envs, **checkpoint_interval.launch_env(
                        spec.checkpoint_hours * 60, spec.checkpoint_auto), **secrets},
                    code_uri=_code_uri(run.checkpoint_uri, code),
                    code_sha256=code.get("sha256", ""), code_size=int(code.get("size", 0)),
                    setup=run.record.spec["spec"].get("setup", ""), task=task,
                    secret_names=tuple(secrets))
    return Mover(store, launcher, job, _newest_checkpoint,
                 (lambda: at) if at is not None else utcnow)


def _newest_checkpoint(uri: str) -> int | None:
    from launchers.checkpoints import open_store

    newest = open_store(uri).newest_verified()
    return None if newest is None else newest.version


def _pack_code(spec: JobSpec, source: str) -> dict | None:
    """The job's workdir packed once at launch (None without one): every instance of the
    job, recoveries and moves included, runs this code."""
    from launchers.codepack import pack_workdir

    return pack_workdir(spec.workdir, f"{source}: job {spec.name!r}")


def _store_code(code: dict | None, checkpoint_uri: str) -> None:
    if code is not None:
        from launchers.codepack import store_code

        store_code(code, checkpoint_uri)


def _code_uri(checkpoint_uri: str, code: dict) -> str:
    if not code:
        return ""
    from launchers.codepack import archive_uri

    return archive_uri(checkpoint_uri, code["sha256"])


def _check_checkpoints(uri: str) -> None:
    """Fail now, in one line, when the job's checkpoint store cannot be used."""
    from launchers.checkpoints import open_store

    open_store(uri).check()


def _checkpoint_uri(spec: JobSpec, job_id: int, root: str | None) -> str:
    base = spec.checkpoint.location or root or str(
        Path(platformdirs.user_data_dir("costsched")) / "checkpoints")
    if ":" not in base and not Path(base).expanduser().is_absolute():
        base = str(Path(base).expanduser().resolve())  # the same from any directory later
    return f"{base.rstrip('/')}/job-{job_id}"


def _running(store: PriceStore, job_id: int) -> RunningJob:
    return _run_of(store, store.jobs.get(job_id), store.moves.of_job(job_id))


def _runs(store: PriceStore, job_ids: Iterable[int] | None = None, *,
          states: Sequence[str] = ()) -> dict[int, RunningJob]:
    """`_running` of many jobs (every job in `states` when `job_ids` is None), from one
    read of their records and one of their moves; by id, oldest first."""
    records = store.jobs.records(job_ids, states=states)
    moves = store.moves.of_jobs([r.id for r in records])
    with one_pass():  # (or the caller's): each distinct spec is resolved once
        return {r.id: _run_of(store, r, moves[r.id]) for r in records}


def _run_of(store: PriceStore, record: JobRecord, moves: list[MoveRecord]) -> RunningJob:
    stored = record.spec
    resolved = _resolved(store, record)
    regions = resolved.job.constraints.regions
    home = regions[0] if regions else (
        moves[0].candidates[0]["key"][1] if moves and moves[0].candidates else "")
    return RunningJob(record, resolved, stored.get("launcher", ""),
                      record.checkpoint_location, home, moves)


def _resolved(store: PriceStore, record: JobRecord) -> ResolvedJob:
    """The job's stored spec resolved as at its creation; inside a pass, once per distinct
    stored spec. A job that names its model differs from another only by its name when
    their specs do, so they share one resolution (and one throughput table)."""
    stored = record.spec
    source = stored.get("source", "<stored spec>")
    spec = stored["spec"]
    named = {k: v for k, v in spec.items() if k != "name"} if spec.get("model") else spec
    key = ("resolved", store.url, json.dumps(named, sort_keys=True, default=str), source,
           record.created_at)

    def compute() -> ResolvedJob:
        table = memo(("throughputs", store.url), lambda: table_with_measured(store),
                     shared=True)
        return resolve(parse(spec, source), table, record.created_at, source=source)

    resolved = memo(key, compute, shared=True)
    if resolved.job.name == spec.get("name"):
        return resolved
    return replace(resolved, job=replace(resolved.job, name=spec["name"]))


def _open_placement(store: PriceStore, job_id: int) -> pd.Series | None:
    placements = store.jobs.placements(job_id)
    open_ = placements[placements["end_at"].isna()]
    return None if open_.empty else open_.iloc[-1]


def job_ids(store: PriceStore, job: int | str | None, states: Sequence[str]) -> list[int]:
    """The id of `job` (an id, or a name: its unfinished job, else its newest), or every
    job in `states` when `job` is None."""
    if job is None:
        frame = store.jobs.list(states=list(states))
        return [] if frame.empty else [int(i) for i in frame["id"]]
    if isinstance(job, int) or str(job).isdigit():
        return [store.jobs.get(int(job)).id]
    found = store.jobs.find(str(job))
    if not found:
        raise InvalidInput(f"job {job!r}: no job of that name in the store")
    live = [r for r in found if not r.final]
    return [(live or found)[-1].id]


def _label(key: OfferingKey) -> str:
    cloud, region, zone, instance_type, market, _ = key
    return f"{cloud} {zone or region} {instance_type} {market.replace('_', '-')}"


__all__ = ["BudgetAlarm", "Failure", "JobStatus", "MigrationAdvice", "RunningJob",
           "budget_alarms", "follow", "job_ids", "launch", "logs", "migrate", "reconcile",
           "settle", "start", "status", "steps_left", "stop"]

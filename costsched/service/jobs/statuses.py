"""What a job is doing: its status, progress, cost so far, why it failed, and its output."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from functools import cached_property
from typing import TYPE_CHECKING

from costsched import gang_stalls, launch_secrets
from costsched.amounts import CHARGED, Scale
from costsched.costs import JobCost, job_costs
from costsched.job_names import name_matches
from costsched.lazy import pandas as pd
from costsched.measured import ShownSpeed
from costsched.migration.launcher import Instance, Launcher
from costsched.model import NODE_RECOVERY, RECOVERY_NOTE, InvalidInput, failed_node, recoveries
from costsched.passes import one_pass
from costsched.report.settled import booked_upfront
from costsched.service.glance import few_names
from costsched.service.job_filters import JobFilter, budget_names
from costsched.service.jobs.agents import with_heartbeat
from costsched.service.jobs.moved import MOVE_NOTE
from costsched.service.jobs.restarts import RESTART_NOTE, is_restart
from costsched.service.jobs.restarts import allowed as restarts_allowed
from costsched.service.jobs.runs import (
    RunningJob,
    _progress_of,
    _runs,
    all_steps_left,
    done_step,
    job_ids,
    nodes_of,
    trouble,
    unknown_instance_fix,
)
from costsched.service.jobs.steps import (
    SECRET_NOTE,
    STOOD_AT_NOTE,
    _step_news,
    reported_at,
    resume_step,
    secret_names,
    stood_at_of,
)
from costsched.service.jobs.watch import _statuses, ended, gone, lost_at, reconcile
from costsched.service.jobs.went_nowhere import start_went_nowhere
from costsched.service.no_step import no_step_line
from costsched.service.setup_phase import in_setup
from costsched.service.speeds import with_speeds
from costsched.service.values import as_time
from costsched.shown_state import shown_state
from costsched.store import PriceStore
from costsched.store.booked import Booking
from costsched.store.job_rows import EventRow, PlacementRow
from costsched.store.jobs import JobRecord
from costsched.store.moves import MoveRecord
from costsched.vocabulary import AS_INSTANCE_ENDED, did_you_mean, stored_states
from costsched.work import (
    Work,
    assumed_work,
    done_not_known,
    ended_short,
    not_reported_words,
    own_total,
    past_total,
    past_words,
    short_words,
)

if TYPE_CHECKING:  # read from the store when a job is live (`store.decisions`)
    from costsched.store.decisions import StoredDecision


@dataclass(frozen=True)
class Failure:
    """Why a job failed: its exit code and last lines of output, or the phase it failed
    in before its command ran (e.g. "setup"), and the launcher's word on it."""

    exit_code: int | None
    phase: str
    detail: str
    log_tail: list[str]
    # The step `start` resumes it from (`steps.resume_step`): 0 with no checkpoint; None
    # when not known.
    resumes_at: float | None = None
    resumes_inferred: bool = False  # that step read off the time its checkpoint was saved
    # A gang's node other than rank 0 whose failure ended it (its rank; `log_tail` is its
    # output); None: rank 0's, or a job of one node.
    node: int | None = None


@dataclass(frozen=True)
class JobStatus:
    record: JobRecord
    open_placement: dict | None  # the open placement's fields (offering, since, price, instance)
    instance_state: str  # the launcher's word on it ('' when the job has no instance)
    # Its total less the step it reported (all of them before one); None when its work is
    # not given (its total is not known).
    steps_left: float | None
    cost: JobCost  # so far, from the stored prices, summed over every placement
    moves: list[MoveRecord]
    # Why its latest decision (`decision`) moves or keeps it, in dollars ('' when none
    # stands for where it runs now: not running, or not decided there yet).
    next: str
    reported: bool = False  # a step of the job's own stands behind steps_left
    failure: Failure | None = None  # why it failed (failed jobs)
    checkpoint_error: str = ""  # why its checkpoints fail to publish now ('' when fine)
    bookings: tuple[Booking, ...] = ()  # capacity bought for it (capacity blocks)
    instance_detail: str = ""  # the launcher's detail (a flex-start VM waiting...)
    # The step it stands at (`runs.done_step`: a stopped job's, where `start` resumes, its
    # newest checkpoint's); 0 before one. `reported_step`: the last step it reported.
    step: float = 0.0
    # The decider's latest decision on it where it runs now (the pass that decides keeps
    # it: the daemon's re-plan, `costsched migrate`); None before one.
    decision: StoredDecision | None = None
    waits: str = ""  # why a daemon cannot carry its move on (a secret), and the fix
    # Its gang's nodes lost and replaced in place (the job's NODE_RECOVERY events), oldest
    # first: recoveries without a move.
    node_recoveries: tuple[EventRow, ...] = ()
    # Its gang's nodes lost or being replaced now, as its instance says (() when whole).
    nodes_out: tuple[int, ...] = ()
    # When its instance began the job's setup, while that setup runs (its command not begun),
    # as the instance reports it; None for a job past setup, or where the launcher does not
    # say. Setup reports no step, so it never counts as slow training.
    setup_since: datetime | None = None
    # Its instance has not ended its setup (`setup_phase.in_setup`: begun, or not begun yet
    # while it boots): its progress reads 'in setup', never 'no step yet'.
    in_setup: bool = False
    # How long its command has run past its setup without reporting a step, as its
    # instance says once that is a minute (`launchers.unseen`); None otherwise.
    no_step_after: float | None = None
    # A running job that has reported no step: its total in its own steps, its rest priced
    # as all of them (`runs.all_steps_left`); None otherwise.
    all_left: float | None = None
    # The steps its recoveries lost, as its log keeps them (its RECOVERY_NOTE events).
    recovered: tuple[EventRow, ...] = ()
    # Its restarts after its own errors, a line each (its RESTART_NOTE events).
    restarted: tuple[EventRow, ...] = ()
    # The step each of its migrations resumed it from (its MOVE_NOTE events: `moved`).
    moved: tuple[EventRow, ...] = ()
    # Its gangs ended because a lost node could not be replaced where it ran, a line each
    # (`gang_stalls.not_replaced`): said on the recovery that followed.
    gangs_ended: tuple[EventRow, ...] = ()
    # Of `node_recoveries`, the ids of those its job was stopped before its gang resumed
    # (`gang_stalls.stopped_first`): not recoveries.
    stopped_first: frozenset[int] = frozenset()
    # Its instance was looked at by a pass that looked after it (`status` reconciled).
    looked_after: bool = False

    @property
    def recoveries(self) -> int:
        """Its recoveries after a preemption: recovery moves that happened (`happened`)
        and nodes replaced in place."""
        return recoveries((m.kind for m in self.moves if happened(m) and not is_restart(m)),
                          len(self.node_recoveries) - len(self.stopped_first))

    @property
    def booked_usd(self) -> float:
        """What its capacity blocks cost upfront (bought, not failed)."""
        return booked_upfront(self.bookings)
    # Its placements' step readings (`JobStore.reading_rows`; `readings_frame`), and its
    # measured speed off them (`service.speeds.shown_speeds`; None without one).
    readings: tuple[tuple, ...] = field(default=(), repr=False)
    speed: ShownSpeed | None = None
    # Why it was stopped, as its log says ('stopped by the user', 'stopped at budget
    # NAME: ...'): stopped jobs; '' for the others.
    stopped_why: str = ""
    reported_step: float = 0.0
    stood_at: float | None = None  # its run before's end, at its last start (`stood_at_of`)
    # What kept this look from looking after it (its instance unread, a step that
    # raised), in one line with the fix when one is known; '' when nothing did.
    trouble: str = ""
    # The precision of charged figures (`amounts.CHARGED`): every job's costs and hours
    # are written at it. None: not set (the view sets it).
    scale: Scale | None = None

    @property
    def resumes(self) -> str:
        """A stopped job whose newest checkpoint is not at the last step it reported: the
        step `start` resumes from and that one, in words ('' otherwise)."""
        step, last = self.step, self.reported_step
        if self.record.state != "stopped" or not last or step == last:
            return ""
        if step > last:
            return (f"resumes at step {step:,.0f}, its newest checkpoint's (it ran on after "
                    f"the last step read, {last:,.0f}, until it was stopped)")
        return (f"resumes at step {step:,.0f}, its newest checkpoint's: it last reported "
                f"step {last:,.0f}, so the {last - step:,.0f} steps between are done again")

    @cached_property
    def placement(self) -> pd.Series | None:
        """The open placement as a Series (`open_placement`); None when none is open."""
        return None if self.open_placement is None else pd.Series(
            list(self.open_placement.values()), index=list(self.open_placement),
            dtype=object)

    @cached_property
    def assumed_work(self) -> Work | None:
        """The job's work when its file gives none (an hour assumed), else None."""
        return assumed_work(self.record.spec)

    @property
    def due(self) -> datetime | None:
        """The job's deadline as a time (a deadline in hours counts from its creation, as
        its plan and its policy count it), or None."""
        spec = self.record.spec.get("spec") or {}
        value = (spec.get("constraints") or {}).get("deadline")
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return self.record.created_at + timedelta(hours=float(value))
        return datetime.fromisoformat(value.replace("Z", "+00:00")) \
            if isinstance(value, str) else None

    @property
    def nodes(self) -> int:
        """The job's nodes: its instances at once (1 but for a multi-node job)."""
        return nodes_of(self.record.spec)

    @property
    def own_total(self) -> float | None:
        """Its total in its own steps, those it reports (`work.own_total`); None where its
        work is not given or is given as hours on a reference GPU (no share is shown)."""
        return own_total(self.record.spec, self.record.steps_total)

    @property
    def pace(self) -> float | None:
        """Its measured speed, as every view shows it; None without (`speed.words`)."""
        return None if self.speed is None else self.speed.steps_per_second

    @property
    def progress_source(self) -> str | None:
        """"reported": the job's own step or verified checkpoint, or the step it resumed
        from (`resumed`), or it succeeded; None:
        no step reported yet (setup, or a job that writes none: no share of the hours it
        ran stands in for a step), or its work is assumed or given as hours on a
        reference GPU (a share of those hours says nothing of its own steps)."""
        if self.record.state == "succeeded":
            return None if self.steps_not_reported else "reported"
        if self.assumed_work is not None:
            return None
        return "reported" if self.reported or self.resumed else None

    @property
    def resumed(self) -> bool:
        """Whether it stands at the step an instance resumed from (a recovery's, a
        start's: its newest checkpoint's, 0 with none), a step as known as one it reported,
        in work given in its own steps (`own_total`); not at 0 with no step reported ever
        (its checkpoint's step not known, or none): never a '0%' it does not know."""
        return self.own_total is not None and bool(self.reported_any or self.step) and any(
            m.kind in ("recovery", "start") and m.state != "cancelled" for m in self.moves)

    @property
    def reported_any(self) -> bool:
        """Whether it reported a step, step 0 included (a step reading is stored)."""
        return bool(self.readings) or self.reported_step > 0

    @property
    def no_step(self) -> str:
        """A running job whose command has run a minute past its setup and reported no
        step: the file to write it to and, where its rest is priced as all of its own
        steps, that its forecast and moves assume none done (`no_step.no_step_line`); ''
        otherwise."""
        if self.no_step_after is None or self.record.state != "running" or \
                self.reported_any or self.in_setup:
            return ""
        return no_step_line(self.no_step_after, self.all_left)

    @property
    def steps_not_reached(self) -> str:
        """A job that exited 0 at a step short of its total in its own steps
        (`work.ended_short`): that step and its total, in words; '' otherwise."""
        total, done = self.own_total, self.step
        if not ended_short(self.record.state == "succeeded", done, total,
                           self.reported_any) or total is None:
            return ""
        return short_words(done, total)

    @property
    def steps_past(self) -> str:
        """A job that reported more steps than its total in its own steps
        (`work.past_total`): those steps, its total and the key that declares it, in words;
        '' otherwise. Its step is shown as reported; its progress is at most 100%."""
        total, done = self.own_total, self.reported_step
        if total is None or not past_total(done, total):
            return ""
        return past_words(done, total, self.record.spec)

    @property
    def steps_not_reported(self) -> str:
        """A job that exited 0 having reported no step, 0 included, its total in its own
        steps (`work.done_not_known`): that its share done is not known, in words; ''
        otherwise. Its progress is then not known, never 100%."""
        total = self.own_total
        if total is None or not done_not_known(self.record.state == "succeeded", self.step,
                                               total, self.reported_any):
            return ""
        return not_reported_words(total)

    @property
    def shown_reported_step(self) -> float | None:
        """The last step it reported, as every view shows it: None where it reported none
        (never a step 0 it did not report)."""
        return self.reported_step if self.reported_any else None

    @property
    def start_went_nowhere(self) -> bool:
        """Whether it `ended short` again under a start, at no step past the one its run
        before it reached, or reporting no step at all (its placement holds no reading: a
        pass's reading or the step it ended at): its command stops there by itself
        (another start bills one more run that ends there too)."""
        return bool(self.steps_not_reached) and start_went_nowhere(
            self.cost.charged, self.readings, self.step, self.stood_at)

    @property
    def shown_state(self) -> str:
        """Its state as every view shows it (`vocabulary.job_state`); a failed instance
        with restarts on errors left reads 'recovering', as the next pass restarts it."""
        instance = "preempted" if self.instance_state == "failed" and len(
            self.restarted) < restarts_allowed(self.record.spec) else self.instance_state
        return shown_state(self.record, instance, step=self.step, reported=self.reported_any)

    @property
    def progress(self) -> float | None:
        """The share of its steps done (`progress_source` says how it is known); None
        when it is not known. A job that succeeded has done all of its steps, where its
        total is in its own steps (`own_total`); one whose work is not given, or given as
        hours on a reference GPU, reads its step, never a share, done or not."""
        total = self.own_total
        if self.record.state == "succeeded" and not self.steps_not_reached:
            return None if total is None or self.steps_not_reported else 1.0
        if self.progress_source is None or total is None or self.steps_left is None:
            return None
        return min(max((total - self.steps_left) / total, 0.0), 1.0)


FAILURE_LOG_LINES = 10


def happened(move: MoveRecord) -> bool:
    """Whether a move is under way or made: not one that only waits to start (a recovery
    waiting for a secret's value stays "planned"), nor one cancelled (a stop), so that a
    recovery is counted once it happens, not while it waits."""
    return move.state not in ("planned", "cancelled")


def status(store: PriceStore, launcher: Launcher | None, job: int | str | None = None, *,
           at: datetime | str | None = None, reconcile_first: bool = True,
           states: Sequence[str] = (), name: str | None = None, limit: int | None = None,
           only: JobFilter | None = None) -> list[JobStatus]:
    """Each job (or `job`; or those in `states`, whose name matches the pattern `name`,
    the newest `limit`): state, placement, progress (the step it reported), cost so far,
    its moves, the decider's latest decision on a running job where it runs now (as the
    pass that decides kept it: never decided again here) and, for a failed job, why. With
    a launcher, its jobs are reconciled first (recoveries start, finished jobs close,
    interrupted launches resume) unless not `reconcile_first`. One pass: the prices, rates
    and placements are read once for every job shown. `only`: those of a label or budget."""
    when = as_time(at)
    with one_pass():
        # What kept the pass from looking after a job (the others were): said under it.
        troubles = {e.job_id: str(e).split(": ", 1)[1] for e in (
            reconcile(store, launcher) if launcher is not None and reconcile_first else ())
            if e.kind == "error"}
        records = _shown(store, job, states, name, limit, only)
        ids = [r.id for r in records]
        runs = _runs(store, records=records)
        # Every job's placements: read without a list of ids when every job is shown.
        every = job is None and not states and name is None and not limit and (
            only is None or only.empty)
        placed = store.jobs.placement_rows(None if every else ids)
        booked = store.booked.of_jobs(None if every else ids)
        open_rows = OpenPlacements(placed)
        ours = {job_id for job_id in ids if launcher is not None
                and runs[job_id].launcher == launcher.name and job_id in open_rows.instance}
        unread: dict[str, Exception] = {}
        instances = _statuses(launcher, [open_rows.instance[j] for j in ids
                                         if j in ours], unread) if ours else {}
        for j in [j for j in ids if j in ours and open_rows.instance[j] in unread]:
            ours.discard(j)  # shown without its instance's word, and why
            why = unread[open_rows.instance[j]]
            fix = unknown_instance_fix(j) if isinstance(why, InvalidInput) else ""
            troubles.setdefault(j, trouble(j, why, fix).split(": ", 1)[1])
        asked = {j: with_heartbeat(launcher, runs[j].checkpoint_uri,
                                   instances[open_rows.instance[j]])
                 for j in ids if j in ours}
        steps = {j: step for j, i in asked.items()
                 if (step := _step_news(runs[j].record, i.step, i.live)) is not None}
        setups = {j: asked[j].setup_seconds for j in steps}  # where its instance says
        store.jobs.record_steps({j: s for j, s in steps.items() if asked[j].live}, at=when,
                                reported=reported_at({j: asked[j].step_at for j in steps},
                                                     when), setups=setups)
        store.jobs.record_steps({j: s for j, s in steps.items() if not asked[j].live},
                                at=when, extend=False, setups=setups)  # found gone
        read_of = _by_job(gang_stalls.trained_readings(store, None if every else ids))
        failed = [j for j in ids if runs[j].record.state == "failed"]
        ended = [j for j in ids if runs[j].record.state in ("failed", "stopped")]
        ended_of = _by_job(store.jobs.event_rows(ended, kinds=["state"]) if ended else [])
        noted = store.jobs.event_rows(None if every else ids,
                                      [NODE_RECOVERY, RECOVERY_NOTE, RESTART_NOTE,
                                       STOOD_AT_NOTE, MOVE_NOTE, gang_stalls.GANG_EVENT])
        replaced_of = _by_job(e for e in noted if e.kind == NODE_RECOVERY)
        recovered_of = _by_job(e for e in noted if e.kind == RECOVERY_NOTE)
        restarted_of = _by_job(e for e in noted if e.kind == RESTART_NOTE)
        moved_of = _by_job(e for e in noted if e.kind == MOVE_NOTE)
        repairs_of = _by_job(e for e in noted if e.kind == gang_stalls.GANG_EVENT)
        ended_gangs_of = {j: [e for e in said if gang_stalls.not_replaced(str(e.detail))]
                          for j, said in repairs_of.items()}
        # A gang's repair its job was stopped in, before the gang resumed: no recovery.
        stopped = gang_stalls.stopped_first_of(
            [e for e in noted if e.kind in gang_stalls.KINDS],
            store.jobs.event_rows(list(replaced_of), kinds=["state"]) if replaced_of else [])
        stopped_first = {j: frozenset(e.id for e in said if e.id in stopped)
                         for j, said in replaced_of.items()}
        stood_of = stood_at_of(noted)
        failing = set(failed)
        placed_of = _by_job(p for p in placed if p.job_id in failing)
        live = [j for j in ids if runs[j].record.state == "running" and j in open_rows.of]
        decided = store.decisions.latest(live) if live else {}
        costs = job_costs(store, ids, now=when, checkpoint_gb={
            job_id: run.checkpoint_gb for job_id, run in runs.items()},
            nodes={job_id: run.nodes for job_id, run in runs.items()},
            placements=_lost_ends(placed, asked, when))
        waits = _waits(store, runs, ids)
        shown = []
        for job_id in ids:
            run = runs[job_id]
            done = steps.get(job_id, run.record.steps_done)
            left, reported = _progress_of(run, done, bool(read_of.get(job_id)))
            resume = resumes_at(run.record, asked.get(job_id))
            if resume is not None:  # its progress is where its recovery resumes it
                left, reported = _progress_of(run, resume, True)
            failure = None
            if run.record.state == "failed":
                failure = _failure_of(launcher if run.launcher == getattr(
                    launcher, "name", None) else None, ended_of.get(job_id, []),
                    placed_of.get(job_id, []), run.checkpoint_uri)
            placement = open_rows.of.get(job_id)
            found = _status_of(run, placement, asked.get(job_id), left, reported,
                               costs[job_id], failure, booked.get(job_id, ()),
                               _standing(decided.get(job_id), placement))
            shown.append(replace(found, readings=tuple(read_of.get(job_id, ())),
                                 step=done_step(run, done) if resume is None else resume,
                                 reported_step=done,
                                 stopped_why=_stopped_why(run.record,
                                                          ended_of.get(job_id, [])),
                                 waits=waits.get(job_id) or "",
                                 stood_at=stood_of.get(job_id),
                                 trouble=troubles.get(job_id, ""), scale=CHARGED,
                                 node_recoveries=tuple(replaced_of.get(job_id, ())),
                                 recovered=tuple(recovered_of.get(job_id, ())),
                                 restarted=tuple(restarted_of.get(job_id, ())),
                                 moved=tuple(moved_of.get(job_id, ())),
                                 gangs_ended=tuple(ended_gangs_of.get(job_id, ())),
                                 stopped_first=stopped_first.get(job_id, frozenset()),
                                 looked_after=job_id in ours and launcher is not None
                                 and reconcile_first,
                                 all_left=all_steps_left(run, done,
                                                         bool(read_of.get(job_id)))))
        shown = with_speeds(shown)  # one figure each, as the report's
        if states and job is None:  # the newest `limit` of those shown in them
            shown = [s for s in shown if s.shown_state in states]
            return shown[-limit:] if limit else shown
        return shown


def _waits(store: PriceStore, runs: dict[int, RunningJob], ids: list[int]) -> dict[int, str]:
    """What each job waits for, for want of a secret: what a daemon said, else, for a job
    being recovered while no daemon watches, what this process's environment lacks (said,
    never stored)."""
    named = [j for j in ids if not runs[j].record.final and secret_names(runs[j])]
    said = dict(store.jobs.last_details(named, SECRET_NOTE))
    if not named or store.daemons.running(datetime.now(timezone.utc)):
        return said  # a daemon watching says what it lacks itself
    for job_id in named:
        lacking = launch_secrets.missing(job_id, secret_names(runs[job_id]))
        if not said.get(job_id) and lacking and runs[job_id].record.state == "recovering":
            said[job_id] = launch_secrets.waits_line("recovery", lacking) or ""
    return said


def _lost_ends(placed: list[PlacementRow], asked: dict[int, Instance], when: datetime
               ) -> list[PlacementRow]:
    """The placements as charged: one whose instance is seen gone, not yet closed (no
    reconcile ran), ends when it was lost or its job ended on it, as the reconcile will
    close it (`lost_at`)."""
    return [p._replace(end_at=lost_at(seen, p.start_at, when))
            if p.end_at is None and (seen := asked.get(p.job_id)) is not None
            and seen.id == p.instance and (gone(seen) or ended(seen)) else p for p in placed]


def _by_job(rows: Iterable[tuple]) -> dict[int, list]:
    """Rows whose second field is a job id (the store's placements, events, readings), by
    job, in their order."""
    out: dict[int, list] = {}
    for row in rows:
        out.setdefault(int(row[1]), []).append(row)
    return out


def _shown(store: PriceStore, job: int | str | None, states: Sequence[str],
           name: str | None, limit: int | None,
           only: JobFilter | None = None) -> list[JobRecord]:
    """The jobs `status` shows, oldest first, in one read. With `states` (as shown), those
    that may be shown in them (`vocabulary.stored_states`), every one: `status` keeps
    those shown in them once it has read them, then the newest `limit`."""
    if job is not None:
        return store.jobs.records(job_ids(store, job, states=()))
    found = store.jobs.records(states=stored_states(states))
    if only is not None and not only.empty:
        found = [r for r in found if only.matches(r.spec)]
    if name is not None:
        found = [r for r in found if name_matches(r.name, name)]
        if not found:
            _check_name_pattern(store, name)
    if only is not None and only.budget and not found:
        _check_budget_name(store, only)
    return found[-limit:] if limit and not states else found


def _check_name_pattern(store: PriceStore, name: str) -> None:
    """InvalidInput when no job of the store has a name `name` matches (a typo): the close
    names. A pattern some job matches, in other states, is a filter that found none."""
    names = sorted({r.name for r in store.jobs.records()})
    if names and not any(name_matches(n, name) for n in names):
        raise InvalidInput(f"name {name!r}: no job's name matches it"
                           f"{did_you_mean(name, names) or '; the jobs: ' + few_names(names)}")


def _check_budget_name(store: PriceStore, only: JobFilter) -> None:
    """InvalidInput when the budget asked for is neither configured nor any job's
    constraints.budget_name (a typo): the budgets there are."""
    known = budget_names([r.spec for r in store.jobs.records()], only.named)
    if only.budget not in known:
        accepted = (f"expected one of {', '.join(known)}" if known else
                    "no budget is configured ([budgets.named.NAME]) or named by a job "
                    "(constraints.budget_name)")
        raise InvalidInput(f"budget {only.budget!r}: no job is in a budget of that name: "
                           f"{accepted}{did_you_mean(only.budget, known)}")


class OpenPlacements:
    """Each job's open placement (the newest, when a move has two open) in `placements`
    (the store's rows, by job and start), as its fields by name."""

    def __init__(self, placements: Iterable[PlacementRow]) -> None:
        self.of = {p.job_id: p._asdict() for p in placements if p.end_at is None}
        self.instance = {j: str(fields["instance"]) for j, fields in self.of.items()}


def _standing(decision: StoredDecision | None, placement: dict | None
              ) -> StoredDecision | None:
    """`decision` when it was made where the job runs now (its open placement); a decision
    on an earlier placement (before a recovery or a move) says nothing of this one."""
    if decision is None or placement is None or decision.placement_id != placement["id"]:
        return None
    return decision


def resumes_at(record: JobRecord, instance: Instance | None) -> float | None:
    """The step a job waiting for its recovery (stored recovering, or running on an
    instance that is gone: shown 'recovering') resumes from: its lost instance's newest
    checkpoint's step, else the one stored with the job; None for any other job, or where
    neither is known."""
    gone = instance is not None and AS_INSTANCE_ENDED.get(instance.state) == "recovering"
    if not (record.state == "recovering" or (record.state == "running" and gone)):
        return None
    said = None if instance is None else instance.checkpoint_step
    step = said if said is not None else record.checkpoint_step
    return None if step is None else max(float(step), 0.0)


def _status_of(run: RunningJob, placement: dict | None, instance: Instance | None,
               left: float, reported: bool, cost: JobCost, failure: Failure | None,
               bookings: tuple[Booking, ...], decision: StoredDecision | None) -> JobStatus:
    # A decision whose dollars are not numbers says nothing a user can act on.
    said = "" if decision is None or None in (decision.stay_usd, decision.move_usd) else \
        decision.reason
    return JobStatus(run.record, placement, "" if instance is None else instance.state,
                     left, cost, run.moves, said, reported, failure,
                     "" if instance is None else instance.checkpoint_error, bookings,
                     "" if instance is None else instance.detail, decision=decision,
                     nodes_out=() if instance is None else
                     tuple(sorted({*instance.lost_nodes, *instance.replacing})),
                     setup_since=instance.setup_since if instance is not None
                     and instance.state == "running" and run.record.state == "running"
                     else None,
                     in_setup=run.record.state == "running" and in_setup(instance),
                     no_step_after=None if instance is None else instance.no_step_after)


def _stopped_why(record: JobRecord, events: Sequence[EventRow]) -> str:
    """Why a stopped job was stopped: its last stop's words in its log ('' when not
    stopped)."""
    if record.state != "stopped":
        return ""
    stops = [e for e in events if e.to_state == "stopped"]
    return str(stops[-1].detail or "") if stops else ""


def _failure_of(launcher: Launcher | None, events: Sequence[EventRow],
                placements: Sequence[PlacementRow], checkpoint_uri: str = "") -> Failure:
    """Why the job failed: its last instance's exit code, phase and output, where the
    launcher still has them; else what its log recorded (`events`: its state changes);
    and the step a start resumes it from (`resume_step`)."""
    ended = [e for e in events if e.to_state == "failed"]
    detail = str(ended[-1].detail) if ended else ""
    if launcher is None or not placements:
        return Failure(None, "", detail, [], resume_step(None, checkpoint_uri))
    last = str(placements[-1].instance)
    try:
        instance = launcher.status(last)
        node = _node_logged(detail or instance.detail, launcher)
        lines = (launcher.logs(last, tail=FAILURE_LOG_LINES) if node is None else
                 launcher.logs(last, tail=FAILURE_LOG_LINES, node=node)  # type: ignore[call-arg]
                 ).splitlines()
    except Exception:  # noqa: BLE001 - no longer known, unreadable: what the log says
        return Failure(None, "", detail, [], resume_step(None, checkpoint_uri))
    return Failure(instance.exit_code, instance.phase, detail or instance.detail, lines,
                   resume_step(instance, checkpoint_uri), instance.checkpoint_step_inferred,
                   node)


def _node_logged(detail: str, launcher: Launcher) -> int | None:
    """The node of a gang whose failure ended it, as its failure's words say it
    (`model.failed_node`), where `launcher` keeps each node's output; None otherwise
    (rank 0's)."""
    import inspect

    found = failed_node(detail)
    if found is None or "node" not in inspect.signature(launcher.logs).parameters:
        return None
    return found[0]

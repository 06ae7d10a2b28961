"""Watching running jobs: reconcile carries on unfinished moves, recovers jobs whose
instance is gone, and closes jobs that finished or failed."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from datetime import datetime

from costsched import launch_secrets
from costsched.config import BudgetsConfig
from costsched.lazy import pandas as pd
from costsched.migration.launcher import CloudError, Instance, Launcher
from costsched.model import RECOVERY_NOTE, InvalidInput, failed_node, failure_words
from costsched.optimize.decision import Overheads
from costsched.service.jobs import restarts
from costsched.service.jobs.agents import look_after
from costsched.service.jobs.cap_move import MOVED_AT, moved_at_cap
from costsched.service.jobs.caps import enforce
from costsched.service.jobs.gangs import EVENT as GANG_EVENT
from costsched.service.jobs.node_runs import track_gangs
from costsched.service.jobs.restored_said import correct_resumes
from costsched.service.jobs.resumed_words import unreported_words
from costsched.service.jobs.runs import (
    STEP_LEASE_SECONDS,
    JobEvent,
    RunningJob,
    _open_placement,
    _placed_offering,
    _runs,
    one_line,
    steps_left,
    trouble,
    unknown_instance_fix,
)
from costsched.service.jobs.steps import (
    CHECKPOINT_NOTE,
    UNPUBLISHED,
    _mover,
    _record_step,
    _resume_launches,
    _run_moves,
    _step_news,
    reported_at,
    resume_from,
    secret_names,
    waiting_for_secrets,
)
from costsched.service.jobs.stories import lost_at_stop
from costsched.service.jobs.watch_span import watched
from costsched.service.speeds import flag_new as flag_speeds
from costsched.service.throughputs import learn
from costsched.service.values import as_time
from costsched.shown_state import record_ended_short
from costsched.store import PriceStore
from costsched.store.jobs import JobRecord, StaleState
from costsched.store.moves import MoveRecord
from costsched.vocabulary import RESTART_MARK
from costsched.work import own_total, short_words

log = logging.getLogger("costsched.watch")
# The states of a job a pass looks at the instance of: running, and recovering with no
# move under way (a recovery a killed process began and never made its move).
LOOKED_AFTER = ("running", "recovering")


def reconcile(store: PriceStore, launcher: Launcher, *,
              at: datetime | str | None = None,
              budgets: BudgetsConfig | None = None,
              watch_seconds: float | None = None,
              overheads: Overheads | None = None) -> list[JobEvent]:
    """One pass over this launcher's jobs: carry on every unfinished move (and launches a
    costsched stopped before their first move), recover jobs whose instance was preempted,
    and close jobs that finished or failed. Returns what happened, a line each. Run it
    every few minutes (`costsched status` and the daemon's watcher do). Another costsched
    reconciling at the same time is harmless: every step is taken under the job's lease.
    Budgets are checked before moves (`caps.enforce`, `budgets`/`watch_seconds`: the
    configured ones when not given): a job at its cap is checkpointed and stopped."""
    when = as_time(at) if at is not None else None
    track_gangs(store, launcher, when or as_time(None))  # before anything is charged
    done: list[JobEvent] = _resume_launches(store, launcher, when)
    done += _budgets(store, launcher, when, budgets, watch_seconds, overheads)
    # A move a cap made in this pass was said by its own line: its end's line says not
    # again why it was made.
    told = {e.job_id for e in done if e.kind == "budget" and MOVED_AT in e}
    done += [JobEvent(e.job_id, e.kind, str(e).split(": ", 1)[1].split(f": {MOVED_AT}")[0],
                      level=e.level, notify=e.notify) if e.job_id in told else e
             for e in advance_moves(store, launcher, at=when)]
    busy = {m.job_id for m in store.moves.unfinished()}
    # (A job recovering with no move under way: its recovery stopped before its move was
    # made, a process killed; it is recovered again.)
    runs = [run for job_id, run in _runs(store, states=["running", "recovering"]).items()
            if job_id not in busy and run.launcher == launcher.name]
    done += _check_instances(store, launcher, runs, when)
    done += _recoverable(store, runs, when)
    try:
        learn(store, when)  # the steps/s each placement reached, for the next plans
        done += [JobEvent(job_id, "throughput", line.split(": ", 1)[1],
                          level="warning")  # far from their plans: said once
                 for job_id, line in flag_speeds(store, when or as_time(None))]
    except Exception as exc:  # noqa: BLE001 - speeds are learned again at the next pass
        log.warning("speeds not learned in this pass: %s", one_line(exc))
    return done


def _recoverable(store: PriceStore, runs: list[RunningJob], at: datetime | None
                 ) -> list[JobEvent]:
    """A daemon that could not recover a job still running for want of its secret says so
    now, once, before a preemption comes (`steps.waiting_for_secrets`)."""
    named = [run for run in runs if secret_names(run)] if launch_secrets.carrying() else []
    if not named:
        return []
    running = {r.id for r in store.jobs.records([run.record.id for run in named])
               if r.state == "running"}  # not those this pass recovered or closed
    return waiting_for_secrets(store, [(run, "recovery") for run in named
                                       if run.record.id in running], at, ahead=True)[1]


def _budgets(store: PriceStore, launcher: Launcher, at: datetime | None,
             budgets: BudgetsConfig | None, watch_seconds: float | None,
             overheads: Overheads | None = None) -> list[JobEvent]:
    if budgets is None and watch_seconds is None and watched(store, at or as_time(None)):
        # A look (`status`, `migrate`, the dashboard) while a daemon watches the store:
        # the caps are the daemon's to judge, by its interval and restart model, never by
        # the settings of the shell that looked.
        return []
    if budgets is None or watch_seconds is None:
        from costsched.config import effective

        config = effective()
        budgets = budgets or config.budgets
        watch_seconds = watch_seconds or config.daemon.watch_seconds
    return enforce(store, launcher, budgets, at or as_time(None), watch_seconds, overheads)


def advance_moves(store: PriceStore, launcher: Launcher, *,
                  at: datetime | str | None = None) -> list[JobEvent]:
    """Step every unfinished move of this launcher's jobs as far as it goes now (each under
    its job's lease, taken for all at once; one another costsched is stepping is left to
    it), together (`steps._run_moves`). What changed, a line each."""
    when = as_time(at) if at is not None else None
    unfinished = store.moves.unfinished()
    owners = _runs(store, {m.job_id for m in unfinished})
    mine = [m for m in unfinished if owners[m.job_id].launcher == launcher.name]
    if not mine:
        return []
    names = [f"steps:{m.job_id}" for m in mine]
    with store.leases.holding_many(names, STEP_LEASE_SECONDS) as (holder, taken):
        held = [m for m in mine if f"steps:{m.job_id}" in taken]
        # As the last holder left them, with their jobs as they are now.
        now = {m.id: m for moves in store.moves.of_jobs([m.job_id for m in held]).values()
               for m in moves}
        runs = _runs(store, [m.job_id for m in held])
        going = [m for m in held if not now[m.id].ended]
        # A job whose move needs a secret this process lacks is left to one that holds it.
        waiting, done = waiting_for_secrets(store, [(runs[m.job_id], m.kind) for m in going],
                                            when)
        going = [m for m in going if m.job_id not in waiting]
        after = _stepped(store, launcher, [(runs[m.job_id], now[m.id]) for m in going],
                         holder, when, done)
    for move, left in zip(going, after, strict=True):
        if not isinstance(left, MoveRecord):
            continue  # the other costsched got there first
        if move.kind == "launch" and left.target_instance:  # resumed: keep its prediction
            _landed(store, move.job_id, when)
        if left.state != move.state:
            failed = "failed" in (move.state, left.state)
            # A move a cap made says why at its end (the supervisor's log says it so).
            why = moved_at_cap(left.detail) if left.state == "done" else ""
            done.append(JobEvent(move.job_id, "move",
                                 f"{move.kind} {move.state} -> {left.state}"
                                 + (f": {why}" if why else ""),
                                 notify="failure" if failed else
                                 "recovery" if move.kind == "recovery" else ""))
    return done


def _stepped(store: PriceStore, launcher: Launcher, moves: list[tuple[RunningJob, MoveRecord]],
             holder: str, at: datetime | None, said: list[JobEvent]
             ) -> list[MoveRecord | StaleState]:
    """`_run_moves` of every move together; when one's step raises, each again alone (what
    the steps before wrote is written: each goes on from where it is in the store), and
    one whose step raises again is left as it is for the next pass, said in `said`."""
    try:
        return _run_moves(store, launcher, moves, holder, at)
    except Exception:  # noqa: BLE001 - which move failed is found below, one by one
        pass
    out: list[MoveRecord | StaleState] = []
    for run, move in moves:
        try:
            [left] = _run_moves(store, launcher, [(run, store.moves.get(move.id))], holder, at)
        except Exception as exc:  # noqa: BLE001 - that job's, said under it
            said.append(trouble(run.record.id, exc))
            left = move
        out.append(left)
    return out


def _check_instances(store: PriceStore, launcher: Launcher, runs: list[RunningJob],
                     at: datetime | None) -> list[JobEvent]:
    """Ask the launcher about every running job's instance at once, store the steps they
    report and their checkpoints' news, and act on the jobs whose instance is gone
    (finished, failed, preempted): a line for each thing that happened, in job order."""
    ids = [run.record.id for run in runs]
    placed = _open_instances(store, ids)
    unread: dict[str, Exception] = {}
    instances = _statuses(launcher, list(placed.values()), unread)
    said = store.jobs.last_details(ids, CHECKPOINT_NOTE) if ids else {}
    steps: dict[int, float] = {}
    told: dict[int, datetime | None] = {}  # when each job wrote its step, where said
    setups: dict[int, float | None] = {}  # how long its instance's setup took, where said
    ended: dict[int, float] = {}  # the steps read off instances found gone
    news: dict[int, str] = {}  # job id: what its checkpoints' publishing is now
    gone = []
    lines: dict[int, JobEvent | None] = {}
    repaired: dict[int, list[JobEvent]] = {}  # a gang's nodes replaced in place
    running: dict[int, Instance] = {}  # what each running instance restored, with it
    for run in runs:
        job_id = run.record.id
        if job_id in placed and placed[job_id] in unread:  # not judged gone: said
            lines[job_id] = trouble(job_id, unread[placed[job_id]], unknown_instance_fix(job_id)
                                    if isinstance(unread[placed[job_id]], InvalidInput)
                                    else "")
            continue
        if job_id in placed:
            try:
                instance = look_after(store, launcher, job_id, instances[placed[job_id]], at,
                                      run.checkpoint_uri, repaired.setdefault(job_id, []))
            except Exception as exc:  # noqa: BLE001 - this job's: the others go on
                lines[job_id] = trouble(job_id, exc)
                continue
            step = _step_news(run.record, instance.step, instance.live)
            if step is not None:
                (steps if instance.live else ended)[job_id] = step
                told[job_id] = instance.step_at
                setups[job_id] = instance.setup_seconds
            if instance.state in ("running", "pending"):
                running[job_id] = instance
                now = (f"{UNPUBLISHED}{instance.checkpoint_error}"
                       if instance.checkpoint_error else "published")
                if now != said.get(job_id, "published"):
                    news[job_id] = now
                continue
        gone.append(run)  # gone, or no open placement at all (an interrupted recovery)
    when = at or as_time(None)
    store.jobs.record_steps(steps, at=when, reported=reported_at(told, when), setups=setups)
    store.jobs.record_steps(ended, at=when, extend=False,  # seen gone: no training since
                            setups=setups)
    # Where each job resumed from, as its instance restored it: its words corrected once.
    resumed = {e.job_id: e for e in correct_resumes(store, running, when)}
    for job_id, now in news.items():
        store.jobs.note(job_id, CHECKPOINT_NOTE, now, at=when)
        lines[job_id] = JobEvent(job_id, "checkpoint", f"checkpoints {now}",
                                 level="info" if now == "published" else "warning")
    for run in gone:
        lines[run.record.id] = _act_on_gone(store, launcher, run, at)
    return [e for i in ids for e in (*repaired.get(i, ()), resumed.get(i), lines.get(i)) if e]


def _statuses(launcher: Launcher, instance_ids: list[str],
              unread: dict[str, Exception] | None = None) -> dict[str, Instance]:
    """The launcher's word on each instance, in one call; an instance it does not know is
    asked about alone, so that its error says which. With `unread`, an instance that
    cannot be read (or all of them, when the call fails) is left out, and why kept there,
    so that one instance does not hide the others; without, the error is raised."""
    try:
        found = launcher.statuses(instance_ids) if instance_ids else {}
    except Exception:
        if unread is None:
            raise
        found = {}  # asked one by one below: which fails is said
    for instance_id in instance_ids:
        if instance_id not in found:
            try:
                found[instance_id] = launcher.status(instance_id)
            except Exception as exc:
                if unread is None:
                    raise
                unread[instance_id] = exc
    return found


def _open_instances(store: PriceStore, job_ids: Sequence[int]) -> dict[int, str]:
    """The instance of each job's open placement (the newest, when a move has two open),
    from one read."""
    if not job_ids:
        return {}
    # By job and start: the newest open one of a job comes last.
    return {p.job_id: str(p.instance)
            for p in store.jobs.placement_rows(job_ids, open_only=True)}


def settle(store: PriceStore, launcher: Launcher, seconds: float, poll: float = 0.2) -> None:
    """Reconcile until no move is under way for this launcher's jobs (none that this
    process could carry on: one waiting for a secret it lacks is left), or `seconds`
    pass."""
    deadline = time.monotonic() + seconds
    while True:
        reconcile(store, launcher)
        unfinished = store.moves.unfinished()
        owners = _runs(store, {m.job_id for m in unfinished})
        pending = [m for m in unfinished if owners[m.job_id].launcher == launcher.name
                   and not launch_secrets.missing(m.job_id, secret_names(owners[m.job_id]))]
        if not pending or time.monotonic() >= deadline:
            return
        time.sleep(poll)


def close_ended(store: PriceStore, launcher: Launcher, job_id: int,
                at: datetime | None = None, *, stopping: bool = False) -> JobEvent | None:
    """Close the job `job_id` when its instance has ended by itself (succeeded or failed),
    as a pass would (`_act_on_gone`, under the job's lease), before a command acts on it
    (`costsched stop`): a job that finished since the last pass is closed, never taken for
    one still running. An instance still running is left as it is; one lost (preempted:
    recovered by a pass, not here) too, unless `stopping`: the job is then stopped, its
    placement charged until its instance was lost (`_stop_lost`). None when nothing was
    done, else what happened."""
    run = _runs(store, [job_id])[job_id]
    if run.record.state not in LOOKED_AFTER or run.launcher != launcher.name:
        return None
    return _act_on_gone(store, launcher, run, at, recover=False, stopping=stopping)


def close_ended_named(store: PriceStore, launcher: Launcher, name: str,
                      at: datetime | None = None) -> None:
    """`close_ended` for each live job named `name`: before a launch of that name, a job
    of it whose instance ended by itself since the last pass is closed, never taken for one
    that still runs (its name is then free)."""
    for record in store.jobs.find(name):
        if not record.final:
            close_ended(store, launcher, record.id, at)


def _act_on_gone(store: PriceStore, launcher: Launcher, run: RunningJob,
                 at: datetime | None, recover: bool = True,
                 stopping: bool = False) -> JobEvent | None:
    """Close or recover a job whose instance is gone (or that has no open placement),
    under the job's lease; a cloud that fails a call for it is said, and the job is left as
    it is for the next pass. Not `recover`: a job whose instance was lost is left as it is
    (only one that ended by itself is closed), or, `stopping`, stopped (`_stop_lost`)."""
    with store.leases.holding(f"steps:{run.record.id}", STEP_LEASE_SECONDS) as mine:
        # Under the lease, as things are now: another costsched may have acted already.
        if not mine or store.jobs.get(run.record.id).state not in LOOKED_AFTER or any(
                m.job_id == run.record.id for m in store.moves.unfinished()):
            return None
        try:
            return _end_or_recover(store, launcher, run, at, recover, stopping)
        except StaleState:  # a move of the job was started meanwhile: it carries on
            return None
        except CloudError as exc:  # this job's cloud did not answer: the others go on
            return JobEvent(run.record.id, "cloud", f"{exc}; asked again at the next pass",
                            level="warning")
        except Exception as exc:  # noqa: BLE001 - this job's: the others go on
            return trouble(run.record.id, exc)


def _end_or_recover(store: PriceStore, launcher: Launcher, run: RunningJob,
                    at: datetime | None, recover: bool = True,
                    stopping: bool = False) -> JobEvent | None:
    """Close a job whose instance finished, or recover one whose instance is gone (unless
    not `recover`; `stopping`: stop it instead, `_stop_lost`)."""
    placement = _open_placement(store, run.record.id)
    when = at or as_time(None)
    job_id = run.record.id
    if placement is None and not recover:
        return None
    if placement is None:
        return _recover(store, launcher, run, at, None, "no instance",
                        "its placement had ended (an interrupted recovery)")
    instance = launcher.status(str(placement["instance"]))
    _record_step(store, run.record, instance.step, when, live=instance.live,
                 step_at=instance.step_at, setup=instance.setup_seconds)
    if instance.state in ("running", "pending"):
        return None
    allowed = restarts.allowed(run.record.spec) if instance.state == "failed" else 0
    if allowed and restarts.used(store, job_id) < allowed:
        if not recover:  # a stop on its way ends it: neither restarted nor failed
            return None
        return _restart_on_error(store, launcher, run, placement, instance, at, allowed)
    if instance.state in ("succeeded", "failed"):
        launcher.terminate(instance.id)
        # charged until it ended, where its launcher says (a local instance's agent)
        store.jobs.end_placement(job_id, lost_at(
            instance, pd.Timestamp(placement["start_at"]).to_pydatetime(), when))
        if instance.lost_nodes:  # a gang's node lost before the end, not replaced
            _node_lost_at_end(store, run, placement, instance, when)
        detail = (f"finished on {instance.id}" if instance.state == "succeeded" else
                  failure_words(instance.exit_code, instance.detail)
                  + restarts.exhausted(allowed))
        store.jobs.transition(job_id, instance.state, at=when, expect=LOOKED_AFTER,
                              detail=detail)
        if instance.state == "succeeded":
            return JobEvent(job_id, "finished", _succeeded_as(store.jobs.get(job_id)))
        why = (f"exit code {instance.exit_code}" if instance.exit_code is not None
               else instance.detail)
        node = failed_node(instance.detail)  # a gang's node, as `status` names it
        phase = node[1] if node else instance.phase
        where = f" in {phase}" if phase else ""  # 'in setup': not its run
        who = f": node {node[0]} failed" if node else ""
        return JobEvent(job_id, "failed",
                        f"failed{who}{where} ({why}{restarts.exhausted(allowed)})",
                        notify="failure")
    if not recover:
        return _stop_lost(store, launcher, run, placement, instance, when) if stopping \
            else None
    # Preempted, or stopped or terminated behind costsched's back: recover it, its
    # placement charged until it was lost.
    lost = lost_at(instance, pd.Timestamp(placement["start_at"]).to_pydatetime(), when)
    why = f"instance {instance.id} {instance.state}"
    if instance.state == "preempted":
        store.availability.record(_placed_offering(placement), "preempted", at=lost,
                                  detail=f"instance {instance.id}",
                                  source=_observed_as(run.launcher))
    launcher.terminate(instance.id)  # (a cloud that fails it: the job is left as it is)
    _recovering(store, job_id, when, why)  # before its placement ends: never read running
    store.jobs.end_placement(job_id, lost)  # with no placement
    # Its step until it reports again: where the next instance resumes, its checkpoint's.
    resumed = resume_from(store, run, instance.checkpoint_step, when,
                          instance.checkpoint_step_inferred, silent=instance.step is None,
                          ran=instance.ran, version=instance.checkpoint_version)
    if not resumed and instance.step is None:  # lost before it reported a step here
        resumed = unreported_words(store.jobs.get(job_id).steps_done, instance.ran)
    if resumed:
        store.jobs.note(job_id, RECOVERY_NOTE, f"instance {instance.id}: {resumed}", at=when)
    return _recover(store, launcher, run, at, placement, instance.id, why, resumed)


def _stop_lost(store: PriceStore, launcher: Launcher, run: RunningJob, placement: pd.Series,
               instance: Instance, at: datetime) -> JobEvent:
    """A stop of a job whose instance was lost before any pass saw it (preempted, or
    stopped or terminated behind costsched's back): the job is stopped, not recovered; its
    placement charged until the instance was lost and the preemption recorded, as a pass
    would; the step of its newest checkpoint kept, where `start` resumes. What it says
    names the instance and when it was lost."""
    job_id = run.record.id
    lost = lost_at(instance, pd.Timestamp(placement["start_at"]).to_pydatetime(), at)
    said = (f"{lost_at_stop(instance.id, instance.state, lost)}, before this stop: charged "
            "until then, not recovered")
    # Stopped first, under the lease: never read running with no placement.
    store.jobs.transition(job_id, "stopped", at=at, expect=LOOKED_AFTER,
                          detail=f"stopped by the user; {said}")
    if instance.state == "preempted":
        store.availability.record(_placed_offering(placement), "preempted", at=lost,
                                  detail=f"instance {instance.id}",
                                  source=_observed_as(run.launcher))
    launcher.terminate(instance.id)
    store.jobs.end_placement(job_id, lost)
    if instance.checkpoint_step is not None:  # where `start` resumes
        store.jobs.record_progress(job_id, store.jobs.get(job_id).steps_done, at=at,
                                   checkpoint_step=instance.checkpoint_step)
    return JobEvent(job_id, "stopped", said)


def _restart_on_error(store: PriceStore, launcher: Launcher, run: RunningJob,
                      placement: pd.Series, instance: Instance, at: datetime | None,
                      allowed: int) -> JobEvent | None:
    """Restart a job whose instance exited non-zero, with restarts on errors left, from its
    newest checkpoint: the recovery a preemption takes (`_recover`), its instance ended
    first (never two at once), the offering not blamed, and one line in its log."""
    job_id, when = run.record.id, at or as_time(None)
    how = restarts.exited(instance.exit_code, instance.detail)
    why = f"{RESTART_MARK}: instance {instance.id} {how}"
    launcher.terminate(instance.id)
    _recovering(store, job_id, when, why)
    store.jobs.end_placement(job_id, lost_at(
        instance, pd.Timestamp(placement["start_at"]).to_pydatetime(), when))
    resume_from(store, run, instance.checkpoint_step, when, instance.checkpoint_step_inferred)
    record = store.jobs.get(job_id)
    step = instance.checkpoint_step if instance.checkpoint_step is not None else (
        record.checkpoint_step)
    line = restarts.restarted(how, min(step, record.steps_done) if step is not None
                              else record.steps_done, restarts.used(store, job_id) + 1,
                              allowed, instance.checkpoint_step_inferred)
    store.jobs.note(job_id, restarts.RESTART_NOTE, line, at=when)
    return _recover(store, launcher, run, at, placement, instance.id, why, restart=line)


def _recovering(store: PriceStore, job_id: int, at: datetime, why: str) -> None:
    """The job is `recovering` from the moment its recovery begins, before its lost
    placement ends and while its next offering is chosen (the policy reads the market:
    seconds), so that a look from elsewhere meanwhile (`status`, its --json, the dashboard)
    reads it recovering, never running with no placement. Should this process die before
    the recovery's move is made, the next pass recovers the job again (`reconcile`)."""
    if store.jobs.state(job_id) == "running":
        store.jobs.transition(job_id, "recovering", at=at, expect="running",
                              detail=f"recovery: {why}")


def lost_at(instance: Instance, start: datetime, seen: datetime) -> datetime:
    """When a gone or ended instance was billed no longer, its placement charged until
    then: when its launcher says it was lost (clouds stop billing an instance when they
    reclaim it: `Instance.lost_at`) or its job ended on it (a local instance is over with
    its agent: `Instance.ended_at`), kept between its placement's `start` and `seen`, the
    look that saw it gone; `seen` when the launcher says neither. (`status` without a
    reconcile charges it so too: `gone`, `ended`.)"""
    said = instance.lost_at if instance.lost_at is not None else instance.ended_at
    if said is None:
        return seen
    return max(start, min(said, seen))


def ended(instance: Instance) -> bool:
    """Whether the instance's job ended on it by itself, at a time its launcher says: its
    placement is charged until then (`lost_at`), however late a pass closes it."""
    return instance.state in ("succeeded", "failed") and instance.ended_at is not None


def gone(instance: Instance) -> bool:
    """Whether the instance was taken away or ended behind costsched's back (preempted,
    stopped, terminated): its job is recovered, its placement charged until `lost_at`."""
    return instance.state not in ("running", "pending", "succeeded", "failed")


def _observed_as(launcher: str) -> str:
    """`launchers.observed_as`: an instance of the local launcher met no cloud's market."""
    from launchers import observed_as

    return observed_as(launcher)


def _node_lost_at_end(store: PriceStore, run: RunningJob, placement: pd.Series,
                      instance: Instance, at: datetime) -> None:
    """A gang's node lost before the job's end and never replaced (its end came first):
    the preemption recorded against the offering, as for any instance, and kept in the
    job's log (not a recovery: nothing was recovered)."""
    nodes = ", ".join(str(r) for r in instance.lost_nodes)
    store.availability.record(_placed_offering(placement), "preempted", at=at,
                              detail=f"instance {instance.id} node {nodes}",
                              source=_observed_as(run.launcher))
    store.jobs.note(run.record.id, GANG_EVENT, f"instance {instance.id}: node {nodes} was "
                    "preempted and not replaced before the job's end", at=at)


def _recover(store: PriceStore, launcher: Launcher, run: RunningJob, at: datetime | None,
             placement: pd.Series | None, source: str, why: str,
             resumed: str = "", restart: str = "") -> JobEvent | None:
    """Start and step a recovery of a job whose instance is gone (its placement closed);
    `at`: the time of the pass (None: the clock, as the steps go). One this process lacks
    a secret for is started and left `recovering` for a process that holds it (a daemon
    says so once: `steps.waiting_for_secrets`). `resumed`: the steps it lost, in words
    (`steps.resume_from`), said after the recovery's state. `restart`: a restart on error's
    line (`_restart_on_error`), said instead: its offering is not blamed for it."""
    from costsched.service.jobs.decider import JobNow, place  # the policy's: a recovery's

    job_id = run.record.id
    when = at or as_time(None)
    _recovering(store, job_id, when, why)
    lost = () if placement is None or restart else (_placed_offering(placement).key,)
    cands = place(store, JobNow.of(run, None, steps_left(store, run, when), lost), launcher,
                  when)
    move = store.moves.create(job_id, "recovery", cands, at=when,
                              source_instance="" if placement is None else source,
                              detail=why)
    waiting, said = waiting_for_secrets(store, [(run, "recovery")], at)
    if waiting:  # recovering, not running: nothing runs, and the note says why
        return said[0] if said else None
    after = _mover(store, launcher, run, at).run(move)  # under the steps lease already
    if restart:  # a restart on error: said as such, not as a recovery after a preemption
        return JobEvent(job_id, "restart", f"{restart}; restart {after.state}",
                        notify="failure" if after.state == "failed" else "")
    return JobEvent(job_id, "recovery",
                    f"{why}; recovery {after.state}{'; ' + resumed if resumed else ''}",
                    notify="failure" if after.state == "failed" else "recovery")


def _landed(store: PriceStore, job_id: int, at: datetime | None) -> None:
    """`estimates.record_landed`: the planner it asks loads when a launch lands, not for
    every pass."""
    from costsched.service.estimates import record_landed

    record_landed(store, job_id, at)


def _succeeded_as(record: JobRecord) -> str:
    """A job closed as succeeded, in the words every view shows it: 'succeeded', or
    'ended-short: exited 0 at step 150 of 1,200 ...' (`work.ended_short`)."""
    if record_ended_short(record):
        total = own_total(record.spec, record.steps_total)
        return f"ended-short: {short_words(record.steps_done, total)}"
    return "succeeded"

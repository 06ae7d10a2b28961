"""The work a planned move of a running job loses if it is made now, as its instance and
its log have seen it.

A job that follows the contract writes a checkpoint when it is stopped (SIGTERM) and loses
nothing: it has been seen to when its newest stop or preemption notice lost no step (the
step it reported at a stop is its checkpoint's, `halt`'s progress record; a recovery's note
says "no step lost", `steps.resume_from`, as does a move's, `moved`). A recovery that lost
steps says nothing of it: a preemption may take the instance at once, with no notice and no
SIGTERM to save on, and then any job loses the steps since its checkpoint; a stop is always
asked by SIGTERM, so a stop that lost steps says it does not. Else it loses the work since
its newest checkpoint: the steps past that checkpoint's step, at the speed the rest of it
runs at (its measured speed where one is trusted, else its plan's, said so), said with the
hours they make; while the job has had no stop or notice to tell, said as the worst case
('up to ... none if the job checkpoints when stopped'), as a move asks it to stop by
SIGTERM. Those steps are the ones its instance reports now (the step it stands at, and its
agent's newest published checkpoint's: `checkpoint_seen.Reported`); where its instance
reports no checkpoint step, those its log holds: the step it reported past the checkpoint
step stored at its newest stop or notice that lost steps. A job whose checkpoint store
holds no checkpoint at all, or whose newest is at step 0 (files written before its first
step: `resumed_words.resumes_from_checkpoint`), starts over from step 0 wherever it goes,
as a recovery does (`steps.resume_from`): a move loses every step it made (as its instance
reports them; else at least those of its last reading), or, where it reports no step, at
most all its run did since it was placed. Where none of this is known (a checkpoint whose
step is not known: no stop or notice yet, or one published since the one stored; or a store
that cannot be read now), there is no figure: the decision model's assumption prices the
move (half the checkpoint interval, `Overheads.lost_work_hours`), as in every replay, and
its line says so (`assumed_line`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from costsched.amounts import duration
from costsched.decide.price import Decision
from costsched.jobspec import ResolvedJob
from costsched.measured import sps
from costsched.model import RECOVERY_NOTE, InvalidInput, lost_steps_said
from costsched.optimize.decision import MovePrice
from costsched.optimize.job import Workload
from costsched.optimize.overheads import Overheads
from costsched.service.jobs.checkpoint_seen import Reported, newest_version
from costsched.service.jobs.moved import MOVE_NOTE
from costsched.service.jobs.resumed_words import resumes_from_checkpoint
from costsched.service.plan_interval import interval_key
from costsched.store import PriceStore
from costsched.store.job_log import EventRow
from costsched.store.job_rows import JobRecord, PlacementRow

# The job log's kind for a progress record (`JobStore.record_progress`): at a stop, it
# holds the step the job reported and its newest checkpoint's (`halt`).
PROGRESS = "progress"
CHECKPOINTS_WHEN_STOPPED = "none, the job checkpoints when stopped"
# How a job's rest table words a figure it measured (`throughput_rest.RestTable`).
_MEASURED = "measured by this job"


@dataclass(frozen=True)
class LostWork:
    """The hours of work a move made now loses, and where that figure comes from."""

    hours: float
    said: str  # 'none, the job checkpoints when stopped', '120 steps since its ...'

    def line(self) -> str:
        return f"lost work: {self.said}"


def lost_works(store: PriceStore,
               jobs: Sequence[tuple[int | None, ResolvedJob, Reported | None]],
               at: datetime | None = None) -> list[LostWork | None]:
    """For each job (its id, None when not stored; its spec as it is priced: its table at
    the pace the rest of it runs at; and what its instance reports, None when it cannot be
    read), the work a move made `at` loses (`LostWork`), or None where neither its
    instance nor its log knows (the decision model's assumption stands). Its records,
    logs and placements are read once for all of them."""
    ids = sorted({int(j) for j, _, _ in jobs if j is not None})
    if not ids:
        return [None] * len(jobs)
    records = {r.id: r for r in store.jobs.records(ids)}
    events: dict[int, list[EventRow]] = {}
    for e in store.jobs.event_rows(ids, [PROGRESS, RECOVERY_NOTE, MOVE_NOTE]):
        events.setdefault(e.job_id, []).append(e)
    placed: dict[int, PlacementRow] = {}
    for p in store.jobs.placement_rows(ids, open_only=True):
        placed[p.job_id] = p  # by start: the newest open one (a move's target) last
    return [None if j is None or j not in records else
            _lost(records[j], events.get(j, []), placed.get(j), resolved, reported, at)
            for j, resolved, reported in jobs]


def _lost(record: JobRecord, events: list[EventRow], placement: PlacementRow | None,
          resolved: ResolvedJob, reported: Reported | None,
          at: datetime | None) -> LostWork | None:
    if record.state != "running" or placement is None:
        return None
    clean = checkpoints_when_stopped(events)
    if clean:
        return LostWork(0.0, CHECKPOINTS_WHEN_STOPPED)
    # Never seen stopped (None): a move asks it to stop by SIGTERM, on which it may save,
    # so the steps are the worst case; a stop that lost steps (False) makes them a fact.
    worst = clean is None
    # The step as its instance reports it now, else as stored (its last reading).
    step = record.steps_done if reported is None else reported.step
    if reported is not None and reported.checkpoint_step is not None:  # as it reports now
        if resumes_from_checkpoint(reported.checkpoint_step):
            return _since(reported.step, reported.checkpoint_step, placement, resolved,
                          worst)
        return _all_lost(step, reported, placement, resolved, at, AT_STEP_0, worst)
    saved = record.checkpoint_step  # as stored at its newest stop or notice
    if saved is not None:
        if _published_since(record.checkpoint_location, placement.start_at):
            return None
        if resumes_from_checkpoint(saved):
            return _since(step, saved, placement, resolved, worst)
        why = NO_CHECKPOINT if _holds_none(record.checkpoint_location) else AT_STEP_0
        return _all_lost(step, reported, placement, resolved, at, why, worst)
    if not _holds_none(record.checkpoint_location):
        return None  # a checkpoint whose step is not known, or a store not read now
    return _all_lost(step, reported, placement, resolved, at, NO_CHECKPOINT, worst)


# How the steps a move loses are said while the job may save when stopped (`_lost`).
MAY_SAVE = "none if the job checkpoints when stopped"


# Why a move of a job loses all it made: it starts over wherever it goes, where its store
# holds no checkpoint, or its newest is at step 0 (`resumes_from_checkpoint`).
NO_CHECKPOINT = "no checkpoint published"
AT_STEP_0 = "no checkpoint: a move starts it from step 0"


def _all_lost(step: float, reported: Reported | None, placement: PlacementRow,
              resolved: ResolvedJob, at: datetime | None, why: str,
              worst: bool = False) -> LostWork | None:
    """A job with no checkpoint to resume from (`why`), at `step`: wherever it goes, it
    starts over from step 0, unless it saves when stopped (`worst`: it may)."""
    if reported is None and step <= 0:  # no step known: at most all its run did
        return _run_lost(placement, at, why)
    if step <= 0:
        return LostWork(0.0, f"none: {why}, and it has made no step yet")
    floor = reported is None  # its last reading: it may have gone on since
    if floor:
        said = f"at least {step:,.0f} steps, all it made by its last reading ({why})"
        said += ", unless the job checkpoints when stopped" if worst else ""
    else:
        said = f"all {step:,.0f} steps it made ({why}" + (f"; {MAY_SAVE})" if worst else ")")
        said = f"up to {said}" if worst else said
    return _at_pace(step, said, placement, resolved)


def _since(step: float, saved: float, placement: PlacementRow, resolved: ResolvedJob,
           worst: bool = False) -> LostWork | None:
    """The steps past its checkpoint at step `saved`, at its pace: 'up to' those where
    the job may save when stopped (`worst`)."""
    steps = max(step - saved, 0.0)
    if steps == 0:
        return LostWork(0.0, f"none since its checkpoint at step {saved:,.0f}")
    said = f"{steps:,.0f} steps since its checkpoint at step {saved:,.0f}"
    return _at_pace(steps, f"up to {said} ({MAY_SAVE})" if worst else said, placement,
                    resolved)


def _at_pace(steps: float, said: str, placement: PlacementRow,
             resolved: ResolvedJob) -> LostWork | None:
    """`steps` at the speed the rest of the job runs at where it runs, said after `said`;
    None where no speed is known there."""
    try:
        pace = resolved.table.get(resolved.job.model, placement.gpu_model,
                                  int(placement.gpu_count))
    except InvalidInput:  # no speed for it there: no figure
        return None
    rate = float(pace.steps_per_second)
    if not math.isfinite(rate) or rate <= 0:
        return None
    hours = steps / rate / 3600
    whose = "" if pace.basis.startswith(_MEASURED) else "its plan's "
    return LostWork(hours, f"{said}: {duration(hours * 3600)} at {whose}{sps(rate)} steps/s")


def _run_lost(placement: PlacementRow, at: datetime | None,
              why: str = NO_CHECKPOINT) -> LostWork | None:
    """A job that reports no step and published no checkpoint: a move loses all its run
    did, at most the hours since it was placed (its boot and setup among them)."""
    if at is None:
        return None
    hours = max((at - placement.start_at).total_seconds(), 0.0) / 3600
    return LostWork(hours, f"at most {duration(hours * 3600)}, all its run did since it was "
                           f"placed at {placement.start_at:%Y-%m-%d %H:%M} UTC "
                           f"({why}, and it reports no step)")


# Why a running job's move is priced with the assumption (`assumed_line`).
STEP_NOT_KNOWN = "the step of its newest checkpoint is not known"


def assumed_line(job: Workload, overheads: Overheads, why: str = STEP_NOT_KNOWN) -> str:
    """The line of a move priced with the decision model's assumption (no `LostWork`):
    'lost work assumed: 15 min, half the checkpoint interval of 30 min (KEY; ...): WHY'."""
    words = overheads.lost_work_words(job.job.checkpoint_hours,
                                      interval_key(getattr(job, "sky", False)))
    return f"lost work assumed: {words}: {why}"


def checkpoints_when_stopped(events: Sequence[EventRow]) -> bool | None:
    """Whether the job's newest stop, preemption notice or move (of `events`, its progress
    records, recovery notes and move notes, oldest first) lost no step: True when it did
    not (its checkpoint at the step it reported), False when a stop lost some, None when it
    has had none of them. A recovery or a move that lost steps is passed over: its
    preemption may have come with no notice (nothing asked the job to save), and a move's
    source may have been lost before it was asked, which tells nothing of a save on
    SIGTERM."""
    for e in reversed(events):
        if e.kind == PROGRESS:
            found = dict(re.findall(r"(?:^|\s)(steps_done|checkpoint_step)=(\S+)",
                                    e.detail or ""))
            try:
                step, saved = float(found["steps_done"]), float(found["checkpoint_step"])
            except (KeyError, ValueError):  # a launch's record: no stop
                continue
            if step > 0:
                return saved >= step
        elif e.kind in (RECOVERY_NOTE, MOVE_NOTE):
            words = lost_steps_said(e.detail or "")[1]
            if "(its checkpoint's): no step lost" in words:
                return True
    return None


def _published_since(uri: str, start: datetime) -> bool:
    """Whether the job's checkpoint store holds a version published after `start` (the
    run it is on began): its step is then not the one stored. True when the store
    cannot be read now (which it holds is not known)."""
    newest = newest_version(uri)
    if newest is False:
        return True
    return newest is not None and newest.published_at > start


def _holds_none(uri: str) -> bool:
    """Whether the job's checkpoint store is read now and holds no checkpoint (False
    without a store: where its checkpoints go is not known)."""
    return bool(uri) and newest_version(uri) is None


def with_lost(decision: Decision, lost: LostWork | None, resolved: ResolvedJob,
              configured: Overheads | None, checkpoint_gb: float | None = None) -> Decision:
    """`decision` with where its move's lost work and restart come from said in its
    reason, when it prices a move (its own, or the best other a stay weighed), in the
    order of its items: its restart, assumed or left out (`restart_line`); then the lost
    work's figure of its instance or log (`lost`), else the decision model's assumption,
    said as one (`assumed_line`); both by the job's restart model over `configured` (the
    decider's; None: the job's own), of its checkpoint of `checkpoint_gb` (None: the
    spec's size)."""
    move = decision.move if decision.move is not None else (
        None if decision.other is None else decision.other[2])
    if move is None:
        return decision
    said = move_sources(move, lost, resolved, configured, checkpoint_gb)
    return replace(decision, reason=f"{decision.reason}; {said}")


def move_sources(move: MovePrice, lost: LostWork | None, resolved: ResolvedJob,
                 configured: Overheads | None, checkpoint_gb: float | None = None) -> str:
    """Where `move`'s restart and lost work come from, in the order of its items (see
    `with_lost`): 'restart assumed: ...; lost work assumed: ...'."""
    from costsched.service.jobs.restart_line import restart_line

    line = assumed_line(resolved, resolved.overheads(configured)) if lost is None else lost.line()
    size = resolved.job.checkpoint_gb if checkpoint_gb is None else checkpoint_gb
    return f"{restart_line(resolved, configured, move, size)}; {line}"

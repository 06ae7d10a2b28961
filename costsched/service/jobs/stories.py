"""How each instance a job ran on came and ended, in words: the line over its output in
`logs --all`."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import datetime

from costsched.model import RECOVERY_NOTE, lost_steps_said
from costsched.service.jobs.recovered import start_words
from costsched.service.jobs.restarts import is_restart
from costsched.shown_state import shown_state
from costsched.store.job_rows import EventRow, PlacementRow
from costsched.store.jobs import JobRecord
from costsched.store.moves import MoveRecord
from costsched.vocabulary import RESTART_MARK

STATE_EVENT = "state"  # the job log's kind of a state change (`JobStore.transition`)
CAP_STOP = "stopped at "  # how a stop at a budget's cap begins its detail (`caps`)


_CAME = {"launch": "launched", "migration": "moved here", "recovery": "recovered here",
         "start": "started again"}
# How a lost instance's recovery went, by its move's state ('': under way or done).
_RECOVERED = {"": "recovered on the next instance",
              "cancelled": "not recovered, the job was stopped",
              "failed": "not recovered, its recovery failed"}
# The same, of an instance that exited non-zero and was restarted (a restart on error).
_RESTARTED = {"": "restarted on the next instance (a restart on error)",
              "cancelled": "not restarted, the job was stopped",
              "failed": "not restarted, its restart failed"}


def lost_at_stop(instance: str, state: str, at: datetime) -> str:
    """What a stop of a job whose instance was lost before any pass saw it says of it
    ('its instance X had been preempted at 2026-12-01 10:02:41Z'), in its line and its stop's
    detail, where `logs --all` reads it back (`_stopped`)."""
    return f"its instance {instance} had been {state} at {at:%Y-%m-%d %H:%M:%SZ}"


_LOST_AT_STOP = re.compile(r"its instance \S+ had been (\w+) at ")


def _before_start(start: PlacementRow, states: Sequence[EventRow], ended: str) -> str:
    """How the instance before a `start` ended, from the job's state changes (`states`):
    'ended-short ... (exited 0 before its declared steps)' where the start took up a job
    that exited 0 short of them, 'failed ...: exit code 1 (...)' where its command failed
    (the failure as `status` words it), 'stopped ... at the cap of its own budget' where a
    cap stopped it, else 'stopped ...'."""
    taken = [e for e in states if e.to_state == "pending" and e.at <= start.start_at
             and e.from_state in ("stopped", "succeeded", "failed")]
    if taken and taken[-1].from_state == "succeeded":
        return f"ended-short{ended} (exited 0 before its declared steps)"
    if taken and taken[-1].from_state == "failed":
        failed = [e for e in states if e.to_state == "failed" and e.at <= taken[-1].at]
        why = str(failed[-1].detail or "") if failed else ""
        return f"failed{ended}{': ' + why if why else ''}"
    return _stopped(states, start.start_at, ended)


def _stopped(states: Sequence[EventRow], by: datetime | None, ended: str) -> str:
    """'stopped ... at the cap of its own budget' where the job's last stop up to `by`
    (None: its last) was a budget's cap's, whichever pass carried it out (the watch's or
    a `status`'s: one stop, one detail); 'preempted ...: not recovered, the job was
    stopped' where its instance was lost before the stop (`lost_at_stop`); else
    'stopped ...'."""
    stops = [e for e in states if e.to_state == "stopped" and (by is None or e.at <= by)]
    detail = str(stops[-1].detail or "") if stops else ""
    if detail.startswith(CAP_STOP):  # 'stopped at its own budget: $... would pass ...'
        return f"stopped{ended} at the cap of {detail[len(CAP_STOP):].split(':', 1)[0]}"
    lost = _LOST_AT_STOP.search(detail)  # lost before the stop: as a recovery it cancelled
    if lost:
        return f"{lost[1]}{ended}: {_RECOVERED['cancelled']}"
    return f"stopped{ended}"


def instance_stories(placed: Sequence[PlacementRow], moves: Sequence[MoveRecord],
                     record: JobRecord, notes: Iterable[EventRow] = ()) -> dict[str, str]:
    """Per instance the job ran on, how it came and how it ended, in words: "recovered here
    2026-03-01 10:00Z, preempted 2026-03-01 11:30Z: recovered on the next instance" (an
    instance lost says what the recovery saw: preempted, or stopped or terminated behind
    costsched's back; a recovery a stop cancelled, that it was not recovered; one a start
    followed, whether it was stopped (at a budget's cap) or ended short of the job's steps,
    from the job's state changes among `notes`; the last, the job's state as every view
    shows it). A migration
    cancelled (a stop, its source unable to stop) or failed moved nothing: its source reads
    as it really ended, stopped where an instance followed it. The instance a recovery
    came to says the steps it lost, as the job's log keeps them (`notes`, its
    RECOVERY_NOTE events) right after how it came: "recovered here ..., resumes from step
    300 (its checkpoint's): 78 steps lost; succeeded ..."; a start, the step it resumed
    from, as its start said it ("started again ..., resumes from step 3,471 (its
    checkpoint's); succeeded ...")."""
    notes = list(notes)
    lost = {m.source_instance: m for m in moves if m.kind == "recovery" and m.source_instance}
    said = dict(lost_steps_said(e.detail) for e in notes if e.kind == RECOVERY_NOTE)
    states = [e for e in notes if e.kind == STATE_EVENT]
    came_from = {m.target_instance: m.source_instance for m in lost.values()}
    started = {m.target_instance: start_words(m) for m in moves if m.kind == "start"}
    restarted = {m.target_instance for m in lost.values() if is_restart(m)}
    migrations = [m for m in moves if m.kind == "migration" and m.source_instance]
    moved = {m.source_instance for m in migrations if m.state not in ("cancelled", "failed")}
    halted = {m.source_instance for m in migrations if m.state == "cancelled"}
    runs: dict[str, list[PlacementRow]] = {}
    for p in placed:  # a gang's node replaced in place: one instance, several placements
        runs.setdefault(str(p.instance), []).append(p)
    order = list(runs)
    out = {}
    for n, instance in enumerate(order):
        first, last = runs[instance][0], runs[instance][-1]
        after = runs[order[n + 1]][0] if n + 1 < len(order) else None
        ended = "" if last.end_at is None else f" {last.end_at:%Y-%m-%d %H:%MZ}"
        if instance in lost:
            move = lost[instance]
            words = _RESTARTED if is_restart(move) else _RECOVERED
            seen = move.detail.removeprefix(f"{RESTART_MARK}: ").removeprefix(
                f"instance {instance} ") or "lost"
            went = f"{seen}{ended}: {words.get(move.state, words[''])}"
        elif instance in moved:
            went = f"moved away{ended}"
        elif after is not None and after.reason == "start":
            went = _before_start(after, states, ended)
        elif after is not None and instance in halted:
            went = f"stopped{ended}"
        elif last.end_at is None:
            went = "running"
        elif record.state == "stopped":  # the job's end: by the user, or at a cap
            went = _stopped(states, None, ended)
        else:  # the job's end, or (a job between instances) the instance's
            went = f"{shown_state(record) if record.final else 'ended'}{ended}"
        # Where it resumed from, right after how it came (a recovery's steps lost, a
        # start's step), so that it never reads as the next instance's.
        lost_here = (said.get(came_from.get(instance, "")) if first.reason == "recovery"
                     else started.get(instance, "") if first.reason == "start" else "")
        came = "restarted here" if instance in restarted else _CAME.get(first.reason,
                                                                         first.reason)
        out[instance] = (f"{came} {first.start_at:%Y-%m-%d %H:%MZ}"
                         f"{', ' + lost_here + ';' if lost_here else ','} {went}")
    return out

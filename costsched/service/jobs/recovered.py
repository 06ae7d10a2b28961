"""A recovery after a preemption in the words of `status`: its job's log keeps the steps it
lost when the preemption is seen (RECOVERY_NOTE, `steps.resume_from`'s words), but a
recovery is counted once it is under way, not while it waits to start (a secret this
process lacks: its move stays planned). While it waits, it is said to come ('instance ID
was preempted at ...; the job will resume from step 100 ...'); once under way, at the time
it began: its instance's placement, else its move's start."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from costsched.model import lost_steps_said
from costsched.store.job_rows import EventRow, PlacementRow
from costsched.store.moves import MoveRecord

_RESUMES = "resumes from "


def waiting(note: EventRow, moves: Sequence[MoveRecord]) -> bool:
    """Whether the recovery of the preemption `note` (a RECOVERY_NOTE) waits to start: its
    move, of the lost instance, still planned."""
    instance, _ = lost_steps_said(str(note.detail))
    return any(m.kind == "recovery" and m.source_instance == instance and m.state == "planned"
               for m in moves)


def began(note: EventRow, placed: Sequence[PlacementRow]) -> datetime:
    """When the recovery of the preemption `note` began: its first placement after it
    (a recovery's), else when the preemption was seen."""
    after = [p.start_at for p in placed if p.reason == "recovery" and p.start_at >= note.at]
    return min(after, default=note.at)


def gang_moved(note: EventRow, ended: Sequence[EventRow],
               placed: Sequence[PlacementRow]) -> str:
    """Of the recovery of the preemption `note`, a gang's ended because its lost node
    could not be replaced where it ran (`ended`: its job's lines saying so,
    `gang_stalls.not_replaced`): 'node 1 could not be replaced in us-east-1a: the gang
    moved to aws us-east-1b' (where its recovery placed it, once it did); '' for any other
    recovery."""
    from costsched.gang_stalls import not_replaced

    instance, _ = lost_steps_said(str(note.detail))
    said = [found[1] for e in sorted(ended, key=lambda e: e.id) if e.id < note.id
            and (found := not_replaced(str(e.detail))) is not None and found[0] == instance]
    if not said:
        return ""
    went = sorted((p for p in placed if p.reason == "recovery" and p.start_at >= note.at),
                  key=lambda p: p.start_at)
    return said[-1] + (f": the gang moved to {went[0].cloud} {went[0].zone or went[0].region}"
                       if went else "")


def lost_as(instance: str, moves: Sequence[MoveRecord]) -> str:
    """How the recovered `instance` was lost, as its recovery's move says it (`moves`: its
    job's): 'preempted', 'stopped' or 'terminated' (behind costsched's back), else 'lost'."""
    for m in moves:
        state = m.detail.removeprefix(f"instance {instance} ")
        if m.kind == "recovery" and m.source_instance == instance and state in _LOST_STATES:
            return state
    return "lost"


_LOST_STATES = ("preempted", "stopped", "terminated")


def said_of(note: EventRow, gang: str = "", moves: Sequence[MoveRecord] = (),
            waits: bool = False) -> str:
    """A recovery's words (`note`'s, a RECOVERY_NOTE): the instance lost and how (`lost_as`
    of `moves`), then where the job resumes: 'instance ID was preempted; the job resumes
    from step 100 ...' (`waits`, its recovery yet to start: 'instance ID was preempted at
    ... UTC; the job will resume from ...'); with what ended its gang (`gang`: `gang_moved`'s
    words) said of its instance: 'instance ID: node 1 could not be replaced in ...: the
    gang moved to ...; the job resumes from ...'."""
    instance, words = lost_steps_said(str(note.detail))
    if words.startswith(_RESUMES):  # the job resumes, never the instance lost
        words = f"the job {'will resume from ' if waits else _RESUMES}{words[len(_RESUMES):]}"
    elif not gang:  # a gang's node's own words: 'instance ID: node 1: resumes from ...'
        return str(note.detail)
    how = lost_as(instance, moves)
    at = f" at {note.at:%Y-%m-%d %H:%M} UTC" if waits else ""
    head = f"instance {instance} was {how}{at}" if not gang else \
        f"{how}{at}: instance {instance}: {gang}" if waits else f"instance {instance}: {gang}"
    return head + (f"; {words}" if words else "")


def recovery_line(note: EventRow, moves: Sequence[MoveRecord],
                  placed: Sequence[PlacementRow], waits: str = "", gang: str = "") -> str:
    """The line of one preemption's recovery (`note`): 'recovered at 2026-11-30 22:46 UTC:
    instance ID was preempted; the job resumes from step 100 ...' once under way, else
    'instance ID was preempted at ... UTC; the job will resume from step 100 ..., once its
    recovery starts' (`waits`: what it waits for, the line `status` says it in: 'recovery
    waits for secret X (...): ...'). `gang`: what ended its gang, said after its instance
    (`gang_moved`)."""
    if not waiting(note, moves):
        return (f"recovered at {began(note, placed):%Y-%m-%d %H:%M} UTC: "
                f"{said_of(note, gang, moves)}")
    why = waits.partition(" (")[0].removeprefix("recovery ") if waits else ""
    return (f"{said_of(note, gang, moves, waits=True)}, once its recovery starts"
            + (f": it {why}" if why else ""))


# A start's move, in its own words: where it resumes from follows (`started_lines`).
START_RESUMES = "started again from its newest verified checkpoint"


def start_words(move: MoveRecord) -> str:
    """Where a start's move (`move`) resumed the job from, as its start said it ('resumes
    from step 3,471 (its checkpoint's)'); '' for any other move, or a start that said
    none."""
    prefix = START_RESUMES + ": "
    return move.detail[len(prefix):] if (move.kind == "start"
                                         and move.detail.startswith(prefix)) else ""


def started_lines(moves: Sequence[MoveRecord]) -> list[tuple[datetime, str]]:
    """Each start of a job (`moves`: its moves) with the step it resumed from
    (`start_words`): (when, 'started again at 2026-12-02 13:36 UTC: resumes from step
    3,471 (its checkpoint's)'), as a recovery's line says it; starts that said none, left
    out."""
    return [(m.created_at, f"started again at {m.created_at:%Y-%m-%d %H:%M} UTC: {words}")
            for m in moves if (words := start_words(m))]


def resumed_of(move: MoveRecord, notes: Sequence[EventRow]) -> str:
    """Where `move` resumed its job from, in the words `status` says it: a start's
    (`start_words`), a recovery's (its lost instance's newest RECOVERY_NOTE of `notes`);
    '' for any other move, or one that said none."""
    if move.kind == "start":
        return start_words(move)
    if move.kind != "recovery":
        return ""
    said = [words for e in notes
            if (found := lost_steps_said(str(e.detail)))[0] == move.source_instance
            and (words := found[1])]
    return said[-1] if said else ""

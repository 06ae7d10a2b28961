"""The step a migration resumes its job from, in the words of `status`, as a recovery and a
start say theirs (`resumed_words`): kept in the job's log once the instance it moves from
has stopped (MOVE_NOTE: 'instance ID: resumes from step 198 (its checkpoint's): no step
lost'), and said under the job once its move went ahead ('moved at 2026-12-04 06:02 UTC:
...'); never for a move that ended with the job where it was."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from costsched.model import lost_steps_said
from costsched.service.jobs.resumed_words import resumed_words

if TYPE_CHECKING:
    from costsched.migration.launcher import Instance
    from costsched.store import PriceStore
    from costsched.store.job_rows import EventRow
    from costsched.store.moves import MoveRecord

MOVE_NOTE = "moved"
# The moves a note is said for: under way or done (a cancelled or failed one moved nothing).
_NOT_MOVED = ("cancelled", "failed")


def note_moved(store: PriceStore, job_id: int, source: Instance, version: int | None,
               exact: bool, at: datetime, stood: float) -> None:
    """Keep in job `job_id`'s log (`store`: the store, or a batch's) the step its move
    resumes it from: the checkpoint its stopped `source` instance published last (its
    step as it reported it; step 0 where the job's store holds none: `version` None),
    against the step it stood at (`exact`: as its instance last said it, else a floor;
    `stood`: the step stored, where the instance says none). Nothing where the step it
    resumes from is not known."""
    saved = source.checkpoint_step
    if saved is None and version is None:
        saved = 0
    if saved is None:
        return
    reached = source.step if source.step is not None else stood
    words = resumed_words(float(max(saved, 0)), float(reached), exact,
                          source.checkpoint_step_inferred)
    store.jobs.note(job_id, MOVE_NOTE, f"instance {source.id}: {words}", at=at)


def went_ahead(notes: Sequence[EventRow], moves: Sequence[MoveRecord]) -> list[EventRow]:
    """The move notes of `notes` (MOVE_NOTE events) whose migration (of `moves`) went
    ahead: under way or done."""
    return [note for note in notes
            if any(m.kind == "migration" and m.state not in _NOT_MOVED
                   and m.source_instance == lost_steps_said(str(note.detail))[0]
                   for m in moves)]


def moved_lines(notes: Sequence[EventRow], moves: Sequence[MoveRecord]
                ) -> list[tuple[datetime, str]]:
    """Each move's note (`notes`) whose migration went ahead (`went_ahead`), as (when,
    'moved at 2026-12-04 06:02 UTC: instance ID: resumes from step 198 (its
    checkpoint's): no step lost')."""
    return [(note.at, f"moved at {note.at:%Y-%m-%d %H:%M} UTC: {note.detail}")
            for note in went_ahead(notes, moves)]

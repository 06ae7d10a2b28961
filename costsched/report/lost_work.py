"""The work a recovery lost, in the report's moves: the steps its job's recovery note
counted lost (`model.steps_lost`: a whole instance lost, or a gang's node replaced in
place), and what training them again cost: those steps at the pace the job kept on the
GPUs it trained them again on (else where it lost them), at the price the placement it
trained them again on ran at, for all the job's nodes. Where no pace was measured the
steps stay, unpriced (NaN)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime

from costsched.measured import Speed
from costsched.model import RECOVERY_NOTE, lost_steps_said, steps_lost
from costsched.store.job_rows import EventRow, PlacementRow

# A recovery's note is written as its move is planned: the same second, give or take the
# store's clock (a note at most this many seconds from its move is the move's).
NOTE_SLACK_SECONDS = 60.0


def paces(measured: Sequence[Speed]) -> dict[tuple[int, str, int], float]:
    """Each job's measured steps per second on each GPU (model, count) it trained on."""
    return {(s.job_id, s.gpu_model, int(s.gpu_count)): float(s.measured_sps)
            for s in measured if _known(s.measured_sps) and s.measured_sps > 0}


def note_for(notes: Sequence[EventRow], job_id: int, instance: str | None, at: datetime,
             node: str | None = None) -> float | int:
    """The steps lost that the RECOVERY_NOTE of `job_id` for the lost `instance` (at
    `at`, within NOTE_SLACK_SECONDS; `node`: a gang's node replaced in place, its
    words 'node 1: ...') counted; NaN where no note counted them."""
    best: tuple[float, float] | None = None  # (seconds from `at`, steps)
    for event in notes:
        if event.kind != RECOVERY_NOTE or event.job_id != job_id or not instance:
            continue
        lost, words = lost_steps_said(str(event.detail or ""))
        if lost != instance or words.startswith("node ") != (node is not None):
            continue
        if node is not None and not words.startswith(f"node {node}:"):
            continue
        apart = abs((event.at - at).total_seconds())
        if apart > NOTE_SLACK_SECONDS and node is None:
            continue
        counted = steps_lost(words)
        if counted is not None and (best is None or apart < best[0]):
            best = (apart, counted[0])
    return math.nan if best is None else int(best[1])


def lost_work_usd(steps: float, job_id: int, lost_on: PlacementRow | None,
                  redone_on: PlacementRow | None, pace: Mapping[tuple[int, str, int], float],
                  nodes: int) -> float:
    """`steps` lost at the job's measured pace on `redone_on`'s GPUs (else `lost_on`'s),
    times `redone_on`'s price (else `lost_on`'s) for its `nodes`: 0 for none lost, NaN
    where no pace or price is known."""
    if not _known(steps):
        return math.nan
    if steps <= 0:
        return 0.0
    for placement in (redone_on, lost_on):
        if placement is None:
            continue
        sps = pace.get((job_id, placement.gpu_model, int(placement.gpu_count)))
        price = (redone_on or lost_on).usd_per_hour  # type: ignore[union-attr]
        if sps and _known(price):
            return steps / sps / 3600 * float(price) * max(int(nodes), 1)
    return math.nan


def _known(value: object) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)

"""Whether a start of a job that ended short went nowhere: it ended short again at no step
past the one its run before reached (or reporting no step at all), so its command stops
there by itself and another start bills one more run that ends there too."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def start_went_nowhere(charged: Sequence[Any], readings: Sequence[tuple], step: float,
                       stood_at: float | None) -> bool:
    """`charged`: the job's placements charged (each with `id` and `reason`); `readings`:
    its placements' step readings (`JobStore.reading_rows`: placement id first, its last
    step fifth); `step`: the step it ended at now; `stood_at`: the step its run before
    ended at, as its newest start noted it (`steps.stood_at_of`; its readings may have seen
    that run end sooner: a step read off an instance found gone is not kept as its last)."""
    if not charged:
        return False
    newest = max(charged, key=lambda p: p.id)
    if newest.reason != "start":
        return False
    reached = {r[0]: float(r[4]) for r in readings}  # by placement: its last step
    if newest.id not in reached:  # it reported no step at all
        return True
    before = [v for k, v in reached.items() if k != newest.id] + (
        [] if stood_at is None else [stood_at])
    return bool(before) and max(reached[newest.id], step) <= max(before)

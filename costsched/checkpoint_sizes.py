"""What a move copied: the measured size of a job's checkpoint, read from its checkpoint
store, for the cost meter's egress (`costs.egress_rows`: status, report, budgets and the
dashboard charge the same figure).

A version's size is the total of every file of the checkpoint (all its files, those it
carried forward from earlier versions included: a move copies them all). A move is charged
the newest version published at or before it (the one it copied); when the store no longer
keeps that one (only the last few versions are), the oldest it keeps, the nearest measured.
A job whose store holds no version, or cannot be read now, has nothing measured: its moves
are charged the size its job file declares (`checkpoint.size_gb`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from costsched.passes import memo

if TYPE_CHECKING:
    from costsched.store import PriceStore
    from costsched.store.job_rows import PlacementRow

# Each version kept: (when it was published, its size in GB), oldest first.
Measured = tuple[tuple[datetime, float], ...]
MOVE_REASONS = ("migration", "recovery", "start")  # placements the checkpoint is copied into
MEASURED, DECLARED = "measured", "declared"  # where a move's GB come from (`gb_source`)


def versions(uri: str) -> Measured:
    """The versions the checkpoint store `uri` keeps, with their sizes; () when it holds
    none or cannot be read now (once per pass)."""
    if not uri:
        return ()

    def read() -> Measured:
        from launchers.checkpoints import open_store

        try:
            listed = open_store(uri).list()
        except Exception:  # noqa: BLE001 - unreadable now: the declared size stands
            return ()
        return tuple((c.published_at, c.size / 1e9) for c in listed)

    return memo(("checkpoint-sizes", uri), read, shared=True)


def of_locations(locations: Mapping[int, str]) -> dict[int, Measured]:
    """Each job's measured versions (by job id, from its checkpoint location); jobs with
    none measured are left out."""
    return {j: found for j, uri in locations.items() if (found := versions(uri))}


def of_moved(store: PriceStore, placements: Iterable[PlacementRow]) -> dict[int, Measured]:
    """`of_locations` of the jobs of `placements` that moved (one read of their records;
    nothing read for jobs that never moved)."""
    moved = sorted({p.job_id for p in placements if p.reason in MOVE_REASONS})
    if not moved:
        return {}
    return of_locations({r.id: r.checkpoint_location for r in store.jobs.records(moved)})


def at_move(measured: Sequence[tuple[datetime, float]], at: datetime) -> float | None:
    """The GB a move at `at` copied: the newest version published at or before it, else the
    oldest kept; None when nothing is measured."""
    if not measured:
        return None
    before = [gb for published, gb in measured if published <= at]
    return before[-1] if before else measured[0][1]

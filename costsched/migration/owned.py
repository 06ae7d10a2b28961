"""The instances of a job this store launched, of those a launcher lists by the job's tag:
the one rule (`costsched.store.scope.ours`) every path that ends or adopts a job's
instances asks (a move's steps, a stop), so that what another store using the same cloud
account launched for its own job of the same number is left alone."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from typing import Protocol

from costsched.migration.launcher import Instance
from costsched.store.moves import MoveRecord
from costsched.store.scope import ours, parse_attempt


class JobMoves(Protocol):
    """What is read of the move store (`MoveStore`, or a batch's moves)."""

    @property
    def scope(self) -> str: ...

    def of_job(self, job_id: int) -> list[MoveRecord]: ...


def owned(moves: JobMoves, job_id: int, instances: Iterable[Instance],
          placed: Collection[str] = ()) -> list[Instance]:
    """The live ones of `instances` (listed by job `job_id`'s tag) this store launched, or
    placed the job on (`placed`: its open placements' instances, this store's by its own
    records); the job's moves are read only when one carries an attempt tag of the old
    form."""
    listed = [i for i in instances if i.live]
    stored: Sequence[MoveRecord] = ()
    if any(getattr(parse_attempt(i.attempt), "scope", None) == "" for i in listed):
        stored = moves.of_job(job_id)
    scope = moves.scope
    return [i for i in listed if i.id in placed or ours(i.attempt, job_id, scope, stored)]

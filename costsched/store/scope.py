"""Whose launch an instance is. Two stores using the same cloud account (or the same local
instances folder) both count jobs and moves from 1, and every launcher builds its
idempotency (AWS's ClientToken, the Compute Engine and Azure names, the local folder) from
the job and the launch attempt's tag: so each store prefixes its moves' attempt tags with
its own id, its scope (`store_identity`, made once by revision 0016):

    {scope}-j{job}-m{move}-{candidate}   a move created by a store with a scope
    j{job}-m{move}-{candidate}           a move stored before (its launch was sent so)

`ours` is the one rule every path that adopts or ends a tagged instance asks (the moves'
state machine, a stop, the sweep): an instance is this store's when its tag carries this
store's scope, or carries the old form and names one of this store's moves of that job
stored before the scope (as it was decided before: the tag cannot say more).
"""

from __future__ import annotations

import contextlib
import re
import secrets
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy import Engine, insert, select
from sqlalchemy.exc import IntegrityError

from costsched.store.database import write
from costsched.store.schema import SCOPE_BYTES, store_identity

_ATTEMPT = re.compile(r"(?:([0-9a-f]{8,16})-)?j(\d+)-m(\d+)-(\d+)")
_SCOPES: weakref.WeakKeyDictionary[Engine, str] = weakref.WeakKeyDictionary()


class StoredMove(Protocol):
    """What `ours` reads of a move (a MoveRecord)."""

    id: int
    job_id: int
    scope: str


@dataclass(frozen=True)
class Attempt:
    """What a launch attempt's tag names: the store's scope ('' in the old form), the job,
    the move and the candidate tried."""

    scope: str
    job_id: int
    move_id: int
    candidate: int


def attempt_tag(scope: str, job_id: int, move_id: int, candidate: int) -> str:
    """The tag of the launch of `move_id`'s candidate `candidate` (see the module's doc)."""
    tag = f"j{int(job_id)}-m{int(move_id)}-{int(candidate)}"
    return f"{scope}-{tag}" if scope else tag


def parse_attempt(attempt: str | None) -> Attempt | None:
    """The attempt a tag names; None: not a move's tag."""
    found = _ATTEMPT.fullmatch(attempt or "")
    if found is None:
        return None
    return Attempt(found[1] or "", int(found[2]), int(found[3]), int(found[4]))


def ours(attempt: str | None, job_id: int, scope: str, moves: Iterable[StoredMove]) -> bool:
    """Whether an instance of job `job_id` tagged `attempt` is this store's launch: its tag
    names the job and carries `scope` (this store's), or is in the old form and names one
    of `moves` (this store's moves of the job) stored before the scope."""
    found = parse_attempt(attempt)
    if found is None or found.job_id != int(job_id):
        return False
    if found.scope:
        return bool(scope) and found.scope == scope
    return any(m.id == found.move_id and m.job_id == found.job_id and not m.scope
               for m in moves)


def store_scope(engine: Engine) -> str:
    """This store's scope (read once per engine; made when the store has none)."""
    known = _SCOPES.get(engine)
    if known is None:
        known = _SCOPES[engine] = _read_or_make(engine)
    return known


def _read_or_make(engine: Engine) -> str:
    with engine.connect() as conn:
        found = conn.execute(select(store_identity.c.scope)
                             .where(store_identity.c.id == 1)).scalar()
    if found:
        return str(found)
    # The revision makes it: only a store whose row was deleted gets here. Another process
    # that made it first wins (its id is read below).
    with contextlib.suppress(IntegrityError):
        write(engine, lambda conn: conn.execute(insert(store_identity).values(
            id=1, scope=secrets.token_hex(SCOPE_BYTES))))
    with engine.connect() as conn:
        return str(conn.execute(select(store_identity.c.scope)
                                .where(store_identity.c.id == 1)).scalar_one())

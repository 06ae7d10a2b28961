"""Live updates: a fingerprint of what the pages show, and a server-sent event stream that
says when it changes (the page then fetches its content again, without a reload)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable

from sqlalchemy import func, select

from costsched.store import PriceStore
from costsched.store.schema import job_events, jobs, moves, placements

POLL_SECONDS = 2.0
PING_SECONDS = 15.0  # a comment line keeps proxies from closing a quiet stream


def fingerprint(store: PriceStore) -> str:
    """Changes whenever a job, placement, move or job event is written: a job's state or
    reported step, a placement opened or ended, a move's step, an event logged."""
    with store.jobs.engine.connect() as conn:
        job_row = conn.execute(select(func.count(), func.max(jobs.c.updated_ts),
                                      func.sum(jobs.c.steps_done))).one()
        placed = conn.execute(select(func.count(), func.max(placements.c.id),
                                     func.count(placements.c.end_ts))).one()
        events = conn.execute(select(func.max(job_events.c.id))).scalar()
        moved = conn.execute(select(func.count(), func.max(moves.c.updated_ts))).one()
    return ".".join(str(v) for v in (*job_row, *placed, events, *moved))


async def stream(read: Callable[[], str], disconnected: Callable[[], object],
                 poll: float = POLL_SECONDS) -> AsyncIterator[str]:
    """`event: change` with the new fingerprint whenever `read()` (run in a thread) gives
    another one; the first event is the current fingerprint. Ends when the client goes."""
    from starlette.concurrency import run_in_threadpool

    last, quiet = None, 0.0
    while not await disconnected():  # type: ignore[misc]
        now = await run_in_threadpool(read)
        if now != last:
            last, quiet = now, 0.0
            yield f"event: change\nid: {now}\ndata: {json.dumps(now)}\n\n"
        elif quiet >= PING_SECONDS:
            quiet = 0.0
            yield ": ping\n\n"
        await asyncio.sleep(poll)
        quiet += poll

"""Stopping a job, whatever it is doing: running, launching, recovering, or in any state of
a move.

The stop is recorded first (the job is cancelled, from whichever live state it is in now),
so a store that cannot be written leaves the job running as it was. Then, under the job's
lease ("steps:<id>", waited for a while when another costsched is stepping the job), every
live instance of the job is terminated, every placement ends and every unfinished move is
cancelled. When the lease stays held elsewhere (a cloud's launch call that takes long),
the instances seen now are terminated and the placements ended anyway, and the move is left
to its holder: the move's next step sees the job cancelled and winds it down, ending
whatever it launched (`costsched.migration.machine.Mover.wind_down`); if that holder died,
the next pass that takes the lease does. A stop interrupted after it was recorded is
finished by stopping again.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone

from costsched.migration.launcher import Launcher
from costsched.model import FINAL_STATES, JOB_STATES, InvalidInput
from costsched.service.jobs.runs import job_ids
from costsched.service.values import as_time
from costsched.store import PriceStore
from costsched.store.jobs import JobRecord, StaleState
from costsched.store.leases import holder_name
from costsched.store.moves import MoveRecord

STOP_WAIT_SECONDS = 30.0  # how long a stop waits for another costsched's step to end
LEASE_SECONDS = 300  # as the steps of moves hold it (service.jobs.STEP_LEASE_SECONDS)
_POLL = 0.2
LIVE_JOB_STATES = tuple(s for s in JOB_STATES if s not in FINAL_STATES)


def stop_job(store: PriceStore, launcher: Launcher, job_id: int, at: datetime, *,
             wait_seconds: float = STOP_WAIT_SECONDS,
             detail: str = "stopped by the user") -> JobRecord:
    """Stop the job `job_id` (see the module's doc): its record, cancelled."""
    record = store.jobs.get(job_id)
    if record.final and not (record.state == "cancelled" and _leftovers(store, launcher,
                                                                        job_id)):
        raise InvalidInput(f"job {job_id} ({record.name}) is {record.state} already")
    if not record.final:
        try:
            record = store.jobs.transition(job_id, "cancelled", at=at, expect=LIVE_JOB_STATES,
                                           detail=detail)
        except StaleState:  # it ended by itself meanwhile (finished, or failed)
            record = store.jobs.get(job_id)
            if record.state != "cancelled":
                raise InvalidInput(f"job {job_id} ({record.name}) is {record.state} "
                                   "already") from None
    with _waiting_for_lease(store, f"steps:{job_id}", wait_seconds) as mine:
        if mine:
            for move in store.moves.of_job(job_id):
                if not move.ended:
                    _cancel(store, move, at)
        for instance in launcher.instances(job_id):
            if instance.live:
                launcher.terminate(instance.id)
        while store.jobs.end_placement(job_id, at) is not None:
            pass  # a job stopped mid-migration has two
    return record


def _leftovers(store: PriceStore, launcher: Launcher, job_id: int) -> bool:
    """Whether a cancelled job still has something to end: an unfinished move, a live
    instance, an open placement (a stop that was interrupted)."""
    return (any(not m.ended for m in store.moves.of_job(job_id))
            or any(i.live for i in launcher.instances(job_id))
            or store.jobs.newest_open_placement(job_id) is not None)


def _cancel(store: PriceStore, move: MoveRecord, at: datetime) -> None:
    # StaleState: moved on since it was read; its next step winds it down
    with contextlib.suppress(StaleState):
        store.moves.advance(move, "cancelled", at=at,
                            detail=f"the job was stopped ({move.state})")


@contextmanager
def _waiting_for_lease(store: PriceStore, name: str, wait_seconds: float) -> Iterator[bool]:
    """Hold the lease `name` for the block, waiting up to `wait_seconds` for another holder
    to give it up; yields whether it was taken."""
    holder = holder_name()
    deadline = time.monotonic() + max(wait_seconds, 0.0)
    while True:
        taken = store.leases.acquire(name, holder, LEASE_SECONDS, datetime.now(timezone.utc))
        if taken or time.monotonic() >= deadline:
            break
        time.sleep(_POLL)
    try:
        yield taken
    finally:
        if taken:
            store.leases.release(name, holder)


def stop(store: PriceStore, launcher: Launcher, job: int | str, *,
         at: datetime | str | None = None) -> JobRecord:
    """End a job, whatever it is doing (a move under way included): its instances are
    terminated (its published checkpoints are kept). See `stop_job`."""
    return stop_job(store, launcher, job_ids(store, job, states=())[0], as_time(at))

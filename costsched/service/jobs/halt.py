"""Stopping a job, the mechanics (`stop_job`): what `costsched stop` and a stop at a
budget's cap both do. See `costsched.service.jobs.stopping` for what a stop guarantees."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone

from costsched.migration.launcher import CloudError, Launcher
from costsched.migration.owned import owned
from costsched.model import FINAL_STATES, JOB_STATES, InvalidInput, state_phrase
from costsched.service.jobs.busy import acted_on
from costsched.service.jobs.node_runs import track_gangs
from costsched.service.jobs.runs import within_total
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
    """Stop the job `job_id` (see the module's doc): its record, stopped."""
    record = store.jobs.get(job_id)
    if record.final and not (record.state == "stopped" and _leftovers(store, launcher,
                                                                      job_id)):
        raise InvalidInput(_ended(record))
    if not record.final:
        try:
            record = store.jobs.transition(job_id, "stopped", at=at, expect=LIVE_JOB_STATES,
                                           detail=detail)
        except StaleState:  # it ended by itself meanwhile (finished, or failed)
            record = store.jobs.get(job_id)
            if not record.final:  # its state kept changing under other writers
                raise acted_on(record, "ask again to stop it") from None
            if record.state != "stopped":
                raise InvalidInput(_ended(record)) from None
    with _waiting_for_lease(store, f"steps:{job_id}", wait_seconds) as mine:
        if mine:
            for move in store.moves.of_job(job_id):
                if not move.ended:
                    _cancel(store, move, at)
        # This store's only: another store on the same account numbers its jobs alike.
        # Its gang's nodes that ran unseen since the last pass are charged to their end.
        track_gangs(store, launcher, at, [job_id])
        placed = set(store.jobs.placements_of([job_id], open_only=True)["instance"].astype(str))
        ended = []
        for instance in owned(store.moves, job_id, launcher.instances(job_id), placed):
            launcher.terminate(instance.id)
            ended.append(instance.id)
        # and what its placed instance said, if it had ended already (preempted, or
        # finished since the last pass): its checkpoint's step is where `start` resumes
        _record_last_report(store, launcher, job_id, [*ended, *sorted(placed - {*ended})], at)
        while store.jobs.end_placement(job_id, at) is not None:
            pass  # a job stopped mid-migration has two
    return record


def _ended(record: JobRecord) -> str:
    """Why a job that has ended is not stopped: 'job 3 (x) has succeeded: nothing to
    stop' ('is stopped already' for one stopped before)."""
    said = f"job {record.id} ({record.name}) {state_phrase(record.state)}"
    return f"{said} already" if record.state == "stopped" else f"{said}: nothing to stop"


def _record_last_report(store: PriceStore, launcher: Launcher, job_id: int,
                        instances: list[str], at: datetime) -> None:
    """What the job's instances said last, once they ended: the step it reported, and the
    step of its newest checkpoint (where `start` resumes, `Instance.checkpoint_step`). A
    job checkpoints and exits on its stop, after the last look at it: without this its
    stored step would be that look's. A backend that cannot say keeps what was stored."""
    steps, saved = [], []
    for instance_id in instances:
        try:
            last = launcher.status(instance_id)
        except (InvalidInput, CloudError):  # gone with its instance: nothing more to read
            continue
        steps += [last.step] if last.step is not None and last.step > 0 else []
        saved += [last.checkpoint_step] if last.checkpoint_step is not None else []
    record = store.jobs.get(job_id)
    step = within_total(record, max(steps, default=record.steps_done))
    if step != record.steps_done:
        # Reached by the stop, some time after `at` (the stop's own work, its wait for a
        # move's step, the job's checkpoint): when is not known, so it is no reading of
        # the placement's training (not `extend`ed, as a step read off an instance found
        # gone): a measured speed never counts steps without their time.
        store.jobs.record_steps({job_id: step}, at=at, extend=False)
    if saved:  # a newly published checkpoint, its step: logged with the step reported
        store.jobs.record_progress(job_id, step, at=at,
                                   checkpoint_step=within_total(record, max(saved)))


def _leftovers(store: PriceStore, launcher: Launcher, job_id: int) -> bool:
    """Whether a stopped job still has something to end: an unfinished move, a live
    instance, an open placement (a stop that was interrupted)."""
    return (any(not m.ended for m in store.moves.of_job(job_id))
            or bool(owned(store.moves, job_id, launcher.instances(job_id)))
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

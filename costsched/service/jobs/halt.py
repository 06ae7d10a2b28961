"""Stopping a job, the mechanics (`stop_job`): what `costsched stop` and a stop at a
budget's cap both do; and closing one that a stop at a cap found at its end (`finish_job`).
See `costsched.service.jobs.stopping` for what a stop guarantees."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timezone

from costsched.migration.launcher import CloudError, Launcher
from costsched.migration.owned import owned
from costsched.model import FINAL_STATES, JOB_STATES, InvalidInput
from costsched.service.jobs.busy import acted_on
from costsched.service.jobs.node_runs import track_gangs
from costsched.service.jobs.runs import RunningJob
from costsched.service.jobs.state_said import state_said
from costsched.shown_state import record_ended_short
from costsched.store import PriceStore
from costsched.store.jobs import JobRecord, StaleState
from costsched.store.leases import holder_name
from costsched.store.moves import MoveRecord
from costsched.work import own_total, past_total

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
    _wind_down(store, launcher, job_id, at, wait_seconds, "the job was stopped")
    return record


def done_all(record: JobRecord, step: float | None = None) -> bool:
    """Whether the job has done all its declared steps: the last step it reported, or
    `step` (its instance's), has reached them (`work.own_total`; never where its work is
    not given in its own steps)."""
    total = own_total(record.spec, record.steps_total)
    return total is not None and max(record.steps_done, step or 0.0) >= total


def trains_past(record: JobRecord) -> bool:
    """Whether the job has reported steps past its declared total (`work.past_total`):
    it trains on beyond its declared work, so that total is not where it ends; a stop
    that ends it there (a budget's cap) stops it, and it is no success."""
    return past_total(record.steps_done, own_total(record.spec, record.steps_total))


def finishing(store: PriceStore, runs: Mapping[int, RunningJob], at: datetime,
              seconds: float) -> set[int]:
    """Those of `runs` that have done all their declared steps (`done_all`) and
    reported the last of them within `seconds` (a watch interval) of `at`: left to end by
    themselves. One still running after that hangs after its training (its process never
    exits) and is charged all the while: its cap stops it like any other job, and
    `caps._stop_at_cap` closes it as succeeded. One that reported steps past them
    (`work.past_total`) trains on beyond its declared work: its cap binds as any other's
    (its fresh steps never keep it finishing)."""
    done = [j for j, run in runs.items() if done_all(run.record) and not trains_past(
        run.record)]
    if not done:
        return set()
    last: dict[int, float] = {}
    for row in store.jobs.reading_rows(done):  # (.., job, .., .., last step, its time)
        if row[5] is not None:
            last[int(row[1])] = max(float(row[5]), last.get(int(row[1]), 0.0))
    since = at.timestamp() - seconds
    return {j for j in done
            if last.get(j, runs[j].record.updated_at.timestamp()) >= since}


def finish_job(store: PriceStore, launcher: Launcher, job_id: int, instance: str,
               at: datetime, *, wait_seconds: float = STOP_WAIT_SECONDS) -> JobRecord | None:
    """Close the job `job_id`, whose `instance` has done all its steps (`done_all`), as
    succeeded, as the watch closes a finished job: its step, its instance ended, its
    placement ended. A stop asked of it as it reached its end (a budget's cap) does not
    make it stopped. None: it had ended meanwhile (the watch's end pass closed it)."""
    _record_last_report(store, launcher, job_id, [instance], at)  # its last step
    try:
        record = store.jobs.transition(job_id, "succeeded", at=at, expect=LIVE_JOB_STATES,
                                       detail=f"finished on {instance}")
    except StaleState:
        return None
    _wind_down(store, launcher, job_id, at, wait_seconds, "the job finished")
    return record


def _wind_down(store: PriceStore, launcher: Launcher, job_id: int, at: datetime,
               wait_seconds: float, why: str) -> None:
    """End what is left of a job that has ended (`why`, in its moves' words): its unfinished
    moves, its instances, its placements; its last report kept."""
    with _waiting_for_lease(store, f"steps:{job_id}", wait_seconds) as mine:
        if mine:
            for move in store.moves.of_job(job_id):
                if not move.ended:
                    _cancel(store, move, at, why)
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


def _ended(record: JobRecord) -> str:
    """Why a job that has ended is not stopped, in its shown state word (`state_said`):
    'job 3 (x) has succeeded: nothing to stop' ('is stopped already' for one stopped
    before); one that ended short of its declared steps names the start that does the
    rest."""
    said = f"job {record.id} ({record.name}) {state_said(record)}"
    if record.state == "stopped":
        return f"{said} already"
    rest = f"; `costsched start {record.id}` does the rest" if record_ended_short(record) \
        else ""
    return f"{said}: nothing to stop{rest}"


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
    step = max(steps, default=record.steps_done)  # as reported, past its total too
    if step != record.steps_done:
        # Reached by the stop, some time after `at` (the stop's own work, its wait for a
        # move's step, the job's checkpoint): when is not known, so it is no reading of
        # the placement's training (not `extend`ed, as a step read off an instance found
        # gone): a measured speed never counts steps without their time.
        store.jobs.record_steps({job_id: step}, at=at, extend=False)
    if saved:  # a newly published checkpoint, its step: logged with the step reported
        store.jobs.record_progress(job_id, step, at=at,
                                   checkpoint_step=max(saved))


def _leftovers(store: PriceStore, launcher: Launcher, job_id: int) -> bool:
    """Whether a stopped job still has something to end: an unfinished move, a live
    instance, an open placement (a stop that was interrupted)."""
    return (any(not m.ended for m in store.moves.of_job(job_id))
            or bool(owned(store.moves, job_id, launcher.instances(job_id)))
            or store.jobs.newest_open_placement(job_id) is not None)


def _cancel(store: PriceStore, move: MoveRecord, at: datetime, why: str) -> None:
    # StaleState: moved on since it was read; its next step winds it down
    with contextlib.suppress(StaleState):
        store.moves.advance(move, "cancelled", at=at, detail=f"{why} ({move.state})")


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

"""Stopping a job."""

from __future__ import annotations

from datetime import datetime

from costsched.migration.launcher import Launcher
from costsched.model import InvalidInput
from costsched.service.jobs.runs import _open_placement, job_ids
from costsched.service.values import as_time
from costsched.store import PriceStore
from costsched.store.jobs import JobRecord


def stop(store: PriceStore, launcher: Launcher, job: int | str, *,
         at: datetime | str | None = None) -> JobRecord:
    """End a job: its instance is terminated (its published checkpoints are kept). The stop
    is recorded before anything is terminated, so a store that cannot be written leaves the
    job running as it was (never an instance gone that the next pass would recover), and a
    stop interrupted after that is finished by stopping the job again."""
    when = as_time(at)
    job_id = job_ids(store, job, states=())[0]
    record = store.jobs.get(job_id)
    unfinished = [m for m in store.moves.of_job(job_id) if not m.ended]
    live = [i for i in launcher.instances(job_id) if i.live]
    open_placement = _open_placement(store, job_id) is not None
    if record.final and not (record.state == "cancelled" and
                             (unfinished or live or open_placement)):
        raise InvalidInput(f"job {job_id} ({record.name}) is {record.state} already")
    if not record.final:
        record = store.jobs.transition(job_id, "cancelled", at=when, expect=record.state,
                                       detail="stopped by the user")
    for move in unfinished:
        store.moves.advance(move, "cancelled", at=when, detail="the job was stopped")
    for instance in live:
        launcher.terminate(instance.id)
    while open_placement and store.jobs.end_placement(job_id, when) is not None:
        pass  # a job stopped mid-migration has two
    return record

"""Stopping a job, whatever it is doing: running, launching, recovering, or in any state of
a move.

The stop is recorded first (the job is stopped, from whichever live state it is in now),
so a store that cannot be written leaves the job running as it was. Then, under the job's
lease ("steps:<id>", waited for a while when another costsched is stepping the job), every
live instance of the job is terminated, every placement ends and every unfinished move is
cancelled. When the lease stays held elsewhere (a cloud's launch call that takes long),
the instances seen now are terminated and the placements ended anyway, and the move is left
to its holder: the move's next step sees the job stopped and winds it down, ending
whatever it launched (`costsched.migration.machine.Mover.wind_down`); if that holder died,
the next pass that takes the lease does. A stop interrupted after it was recorded is
finished by stopping again.

A job whose instance ended by itself since the last pass (it succeeded or failed, the
supervisor not yet round) is closed first, as that pass would close it
(`watch.close_ended`): it is not stopped ("has succeeded: nothing to stop"), and keeps its
state, its progress and its final checkpoint. One whose instance was lost (preempted)
since the last pass is stopped, not recovered, its placement charged until the instance was
lost (`watch.close_ended`, `stopping`): the stop says so (`stop_said`).
"""

from __future__ import annotations

from datetime import datetime

from costsched.migration.launcher import Launcher
from costsched.service.jobs.halt import (  # noqa: F401 - stop_job: as callers name it
    LIVE_JOB_STATES,
    STOP_WAIT_SECONDS,
    stop_job,
)
from costsched.service.jobs.runs import job_ids
from costsched.service.jobs.watch import close_ended
from costsched.service.values import as_time
from costsched.store import PriceStore
from costsched.store.jobs import JobRecord


def stop(store: PriceStore, launcher: Launcher, job: int | str, *,
         at: datetime | str | None = None) -> JobRecord:
    """Stop a job, whatever it is doing (a move under way included): it is `stopped`, its
    instances are terminated, its published checkpoints and code are kept, and `start`
    takes it up again. See `stop_job`. A job that ended by itself meanwhile is closed as
    it ended (InvalidInput: 'job 3 (x) has succeeded: nothing to stop')."""
    return stop_said(store, launcher, job, at=at)[0]


def stop_said(store: PriceStore, launcher: Launcher, job: int | str, *,
              at: datetime | str | None = None) -> tuple[JobRecord, str]:
    """`stop`, and what it has to say beyond the job's state: that its instance had been
    lost before the stop, and when ('' when it had not)."""
    job_id, when = job_ids(store, job, states=())[0], as_time(at)
    done = close_ended(store, launcher, job_id, when, stopping=True)
    if done is not None and done.kind == "stopped":  # lost before: stopped there
        return store.jobs.get(job_id), str(done).split(": ", 1)[1]
    return stop_job(store, launcher, job_id, when), ""

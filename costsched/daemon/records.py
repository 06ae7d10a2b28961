"""What the store records of the daemon's work, read without the scheduler (APScheduler,
the tasks, the watcher): each task's schedule and runs (`status`, for `costsched status`
and `daemon status`), the supervisor's lease, the jobs a daemon watches."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import inspect, text

from costsched.model import FINAL_STATES, JOB_STATES
from costsched.store import PriceStore
from costsched.store.leases import TaskRun
from costsched.store.schema import scheduler_jobs

TASKS = ("collect", "replan", "catalog")
COUNTED = ("running", "ok", "failed")  # the runs that serve a trigger (skips do not)
JOBSTORE_TABLE = scheduler_jobs.name  # made with the store's schema
SUPERVISOR_LEASE = "supervisor"


@dataclass(frozen=True)
class TaskStatus:
    task: str
    next_run: datetime | None  # from the schedule in the store (None: never scheduled)
    last: TaskRun | None  # the newest run that was not a skip
    failures: list[TaskRun]  # the newest failed runs, newest first


def status(store: PriceStore, failures: int = 3) -> list[TaskStatus]:
    """Each task's next scheduled run, last run and recent failures, as the store records
    them (whether or not a daemon runs now)."""
    next_runs: dict[str, float | None] = {}
    if inspect(store.engine).has_table(JOBSTORE_TABLE):
        with store.engine.connect() as conn:
            rows = conn.execute(text(f"SELECT id, next_run_time FROM {JOBSTORE_TABLE}")).all()
        next_runs = {str(r[0]): r[1] for r in rows}
    out = []
    for task in TASKS:
        ts = next_runs.get(task)
        out.append(TaskStatus(
            task, None if ts is None else datetime.fromtimestamp(float(ts), timezone.utc),
            store.task_runs.last(task, statuses=COUNTED),
            store.task_runs.recent(task, statuses=("failed",), limit=failures)))
    return out


def live_jobs(store: PriceStore) -> list[int]:
    """The ids of the jobs not ended yet (what a daemon watches)."""
    return store.jobs.ids(states=[s for s in JOB_STATES if s not in FINAL_STATES])


def sweep_owed(store: PriceStore) -> bool:
    """Whether an instance a launch that failed over may have left behind is not swept yet
    (`service.jobs.sweep.owed`): a daemon watches until it is, as it watches a job."""
    from costsched.service.jobs.sweep import owed

    return owed(store, datetime.now(timezone.utc))

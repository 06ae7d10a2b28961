"""The scheduled optimizer: collect prices, re-plan running jobs, refresh the on-demand
catalog, on cron schedules, unattended.

APScheduler 3 keeps the schedule in the store's own database (table apscheduler_jobs, job
ids "collect", "replan", "catalog", replaced at each start). Several daemons may share a
store, on several hosts: each task runs under a lease named after it, and runs only when
its trigger fired since the task's last recorded run, so each trigger runs a task once;
re-planning decides every job first, then starts the moves under each job's own lease
("steps:<id>", decided again once it is held), together (`migration.machine.run_many`).
A daemon that finds the lease held elsewhere, or the trigger served already, records a
"skipped" run.

Beside the tasks, every daemon runs the watcher every `daemon.watch_seconds` (30 s by
default): it looks at the running jobs' instances and recovers a preempted or dead job at
once, under the job's lease (so several daemons act once); `--once` looks once.

    daemon = Daemon(store, loaded.config)
    daemon.serve()               # until SIGTERM or SIGINT
    run_once(store, config)      # each task that is due, one time (for cron)

Tests compress the schedules by passing APScheduler triggers (`triggers=`): the config's
schedules are 5-field cron expressions, whose finest step is a minute.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from costsched.daemon.events import log, logfmt

# The scheduler (APScheduler, the tasks, the watcher) loads when one of its names is first
# read: `costsched status` reads the daemon's records (`records.status`) without it.
_MODULES = {
    "JOBSTORE_TABLE": "records", "TASKS": "records", "TaskStatus": "records",
    "status": "records",
    "TASK_FUNCTIONS": "scheduler", "Daemon": "scheduler", "default_launchers": "scheduler",
    "run_once": "scheduler", "triggers_from": "scheduler",
    "_scheduled": "scheduler",  # the schedule stored in a database names it here
}

__all__ = ["JOBSTORE_TABLE", "TASKS", "TASK_FUNCTIONS", "Daemon", "TaskStatus",
           "default_launchers", "log", "logfmt", "run_once", "status", "triggers_from"]


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value

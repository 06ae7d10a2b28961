"""Running jobs: launch, reconcile (recoveries, finished jobs, unfinished moves), migrate,
stop, status and logs, over the job store and a launcher.

Each job's launches, migrations and recoveries go through the persisted state machine
(`costsched.migration.machine`); these functions choose the offerings (the decision model's
ranking, the policy's decision) and let the machine carry them out. A launcher is passed in
(`launchers.make_launcher`), so the core never imports a backend.

One module a job: `launches` (launch, start), `watch` (reconcile, recover), `move`
(migrate), `statuses` (status), `job_logs` (logs, follow), `stopping`, `budgets` (alarms), `caps`
(budgets that stop spending, at every watch), `budget_launch` (budgets at launch) and
`sweep` (ending the instances that run for no job, at the daemon's watch);
beneath them `steps` (carrying moves out), `candidates` (the offerings to try) and `runs`
(a running job as stored).
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

# Public name -> the module of this package that defines it: each loads on first use, so
# that `status` does not load the launches' planner nor `launch` the budgets' reports.
_MODULES = {
    "LaunchFit": "budget_launch", "launch_fits": "budget_launch",
    "budgets_now": "budgets",
    "BudgetState": "caps", "budget_states": "caps", "raise_budget": "caps",
    "measured_rates": "decider",
    "launch": "launches", "start": "launches", "NotLaunched": "launches",
    "not_launched": "launches", "refuse_bad_input": "launches",
    "refuse_bad_input_at": "launches",
    "MigrationAdvice": "move", "migrate": "move",
    "CANDIDATES": "runs", "CAPACITY_COOLDOWN": "market", "MIN_MIGRATION_INTERVAL": "runs",
    "STEP_LEASE_SECONDS": "runs", "RunningJob": "runs", "job_ids": "runs",
    "namesakes": "runs",
    "progress": "runs", "steps_left": "runs",
    "Failure": "statuses", "JobStatus": "statuses",
    "every_log": "job_logs", "follow": "job_logs", "logs": "job_logs", "status": "statuses",
    "stop": "stopping",
    "advance_moves": "watch", "reconcile": "watch", "settle": "watch",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_MODULES})


if TYPE_CHECKING:  # the names as type checkers and editors see them
    from costsched.service.jobs.budget_launch import LaunchFit, launch_fits
    from costsched.service.jobs.budgets import budgets_now
    from costsched.service.jobs.caps import BudgetState, budget_states, raise_budget
    from costsched.service.jobs.decider import measured_rates
    from costsched.service.jobs.job_logs import every_log, follow, logs
    from costsched.service.jobs.launches import (
        NotLaunched,
        launch,
        not_launched,
        refuse_bad_input,
        refuse_bad_input_at,
        start,
    )
    from costsched.service.jobs.market import CAPACITY_COOLDOWN
    from costsched.service.jobs.move import MigrationAdvice, migrate
    from costsched.service.jobs.runs import (
        CANDIDATES,
        MIN_MIGRATION_INTERVAL,
        STEP_LEASE_SECONDS,
        RunningJob,
        job_ids,
        namesakes,
        progress,
        steps_left,
    )
    from costsched.service.jobs.statuses import Failure, JobStatus, status
    from costsched.service.jobs.stopping import stop
    from costsched.service.jobs.watch import advance_moves, reconcile, settle

__all__ = ["CANDIDATES", "CAPACITY_COOLDOWN", "MIN_MIGRATION_INTERVAL", "STEP_LEASE_SECONDS",
           "BudgetState", "Failure", "JobStatus", "LaunchFit", "MigrationAdvice", "NotLaunched",
           "RunningJob", "advance_moves", "budgets_now", "budget_states", "every_log", "follow",
           "job_ids", "launch", "launch_fits", "logs", "measured_rates", "migrate", "namesakes",
           "not_launched", "progress", "raise_budget", "reconcile", "refuse_bad_input",
           "refuse_bad_input_at", "settle", "start", "status", "steps_left", "stop"]

"""The service's operations for notebooks: the job or query first, the store as `db=`.

`db` is a `PriceStore`, a SQLAlchemy URL or a SQLite file path, or None for the default
store ($COSTSCHED_DB, else a file in the user data directory). The options are those of
the functions of `costsched.service` of the same name.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from costsched import service
from costsched.clouds.hints import collect_hint
from costsched.service.plan import Jobs
from costsched.service.stores import StoreLike


def existing(db: StoreLike) -> StoreLike:
    """`db`, when it is no SQLite file that does not exist: a function that only reads never
    makes a store, so a misspelt path is one line naming it, not an empty answer."""
    if isinstance(db, (str, Path)):
        from costsched.model import InvalidInput
        from costsched.service.store_files import missing_store
        from costsched.taskfile import close_files

        missing = missing_store(str(db))
        if missing is not None:
            path = missing.resolve()
            close = close_files(path, (path.suffix.lower(),) if path.suffix else ())
            makes = (f"`costsched.import_prices`, `costsched prices import FILE` or "
                     f"{collect_hint()} makes one")
            raise InvalidInput(f"db {str(db)!r}: no such store ({path})"
                               + (f"{close} If not, {makes}" if close else f"; {makes}"))
    return db


def plan(jobs: Jobs, *, db: StoreLike = None, **options: Any) -> service.PlanResult:
    """Plan job specs (files or `JobSpec`s); `.table` is one row per job."""
    return service.plan(db, jobs, **options)


def backtest(*, db: StoreLike = None, **options: Any) -> service.BacktestResult:
    """Replay the stored prices through the policies; `.summary` is per model and policy."""
    return service.backtest(existing(db), **options)


def prices(at: Any = None, *, db: StoreLike = None, **filters: Any) -> pd.DataFrame:
    """Every matching offering's price as of `at` (default now), cheapest per GPU-hour."""
    return service.prices(existing(db), at, **filters)


def price_history(instance_type: str, *, db: StoreLike = None, **options: Any
                  ) -> pd.DataFrame:
    return service.price_history(existing(db), instance_type, **options)


def import_prices(paths: Sequence[str | Path], *, db: StoreLike = None, **options: Any
                  ) -> service.ImportResult:
    return service.import_prices(db, paths, **options)


def collect_prices(*, db: StoreLike = None, **options: Any) -> Any:
    """Collect today's prices from the clouds (a `price_collectors.runner.RunSummary`)."""
    return service.collect_prices(db, **options)


def budgets(at: Any = None, *, db: StoreLike = None, **options: Any) -> pd.DataFrame:
    """Each budget now (or at `at`), a row each: its cap and period, spent, committed by its
    running jobs, forecast to their end, left, its jobs, running and stopped at its cap
    (the rows of `status --json`'s "budgets"). `options`: `config` (a `BudgetsConfig`),
    `interval_seconds`: the effective configuration's when not given."""
    from costsched.service.jobs.budgets import budgets_now
    from costsched.service.stores import using
    from costsched.service.values import as_time
    from costsched.service.views import budgets_document

    with using(existing(db)) as store:
        states = budgets_now(store, at=None if at is None else as_time(at), **options)
    return pd.DataFrame(budgets_document(states), columns=BUDGET_COLUMNS)


BUDGET_COLUMNS = ["name", "kind", "period", "usd", "spent_usd", "committed_usd",
                  "forecast_usd", "left_usd", "used", "jobs", "running", "stopped",
                  "spent_by_job"]

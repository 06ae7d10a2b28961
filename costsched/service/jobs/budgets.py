"""The budgets as `status`, `report` and the Python API show them: each budget now."""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from costsched.config import BudgetsConfig
from costsched.service.jobs.caps import BudgetState, budget_states
from costsched.service.values import as_time
from costsched.store import PriceStore


def budgets_now(store: PriceStore, *, at: datetime | None = None,
                config: BudgetsConfig | None = None,
                interval_seconds: float | None = None,
                of_jobs: Collection[int] | None = None) -> list[BudgetState]:
    """Every budget as `status`, `report` and the Python API show it: the configured ones
    (`config`, `interval_seconds`: the effective configuration's when not given) at `at`
    (default now); `of_jobs`: only the budgets of those jobs (a view of some jobs shows
    theirs)."""
    if config is None or interval_seconds is None:
        from costsched.config import effective

        found = effective()
        config = config or found.budgets
        interval_seconds = interval_seconds or found.daemon.watch_seconds
    states = budget_states(store, config, as_time(at), interval_seconds)
    if of_jobs is None:
        return states
    return [s for s in states if set(s.jobs) & set(of_jobs)]

"""The budgets as `status`, `report` and the Python API show them: each budget now; and
each running job's forecast, as its own budget's reads it (the dashboard's)."""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable
from datetime import datetime

from costsched.config import BudgetsConfig
from costsched.costs import JobCost
from costsched.service.jobs.caps import BudgetState, budget_state, budget_states, charging
from costsched.service.jobs.watch_span import watch_span
from costsched.service.values import as_time
from costsched.store import PriceStore


def budgets_now(store: PriceStore, *, at: datetime | None = None,
                config: BudgetsConfig | None = None,
                interval_seconds: float | None = None,
                of_jobs: Collection[int] | None = None,
                charged: Iterable[JobCost] = ()) -> list[BudgetState]:
    """Every budget as `status`, `report` and the Python API show it: the configured ones
    (`config`, `interval_seconds`: the effective configuration's when not given) at `at`
    (default now); `of_jobs`: only the budgets of those jobs (a view of some jobs shows
    theirs); `charged`: the costs of the jobs a look shows (`JobStatus.cost`), whose
    placements each budget charges as they do (one whose instance the look saw gone ends
    when it was lost, not at `at`): one spend per job in one view."""
    if config is None or interval_seconds is None:
        from costsched.config import effective

        found = effective()
        config = config or found.budgets
        interval_seconds = interval_seconds or found.daemon.watch_seconds
    ends = {c.placement.id: c.placement.end_at for cost in charged for c in cost.charged
            if c.placement.end_at is not None}
    when = as_time(at)
    # The next interval committed as the watch will charge it (`watch_span`).
    states = budget_states(store, config, when, watch_span(store, interval_seconds, when),
                           ends)
    if of_jobs is None:
        return states
    return [s for s in states if set(s.jobs) & set(of_jobs)]


def job_forecasts(store: PriceStore, job_ids: Collection[int], *, at: datetime | None = None,
                  interval_seconds: float | None = None) -> dict[int, float | None]:
    """Each running job of `job_ids` at `at` (default now): its forecast, what it spent
    plus its cost to its end at the speed the rest of it runs at, computed as its own
    budget's forecast is (`BudgetState.forecast_usd`, budget or not): one figure wherever
    a job's forecast shows. None where its rest cannot be priced. `interval_seconds`: the
    watch's (the effective configuration's when not given)."""
    if interval_seconds is None:
        from costsched.config import effective

        interval_seconds = effective().daemon.watch_seconds
    when = as_time(at)
    records = store.jobs.records(sorted(job_ids), states=["running"]) if job_ids else []
    if not records:
        return {}
    read = charging(store, records, [r.id for r in records], every=False)
    figures = {r.id: budget_state(store, r.name, "job", math.nan, "total", [r.id], when,
                                  interval_seconds, read).forecast_usd for r in records}
    return {j: f if math.isfinite(f) else None for j, f in figures.items()}

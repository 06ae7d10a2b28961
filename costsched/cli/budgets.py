"""The budgets table of `status` and `report`: each budget now."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING

from costsched.cli.common import console, table
from costsched.config import effective

if TYPE_CHECKING:
    from costsched.service.jobs.caps import BudgetState
    from costsched.service.jobs.statuses import JobStatus
    from costsched.store import PriceStore


def budgets_now(store: PriceStore, at: datetime | None = None,
                of_jobs: Collection[int] | None = None,
                shown: Iterable[JobStatus] = ()) -> list[BudgetState]:
    """Each budget of the effective configuration now, or at `at` (a report's end);
    `of_jobs`: only the budgets of those jobs (a command about one job names its own);
    `shown`: the jobs the same output shows, whose costs the budgets spend as they are
    charged there (an instance seen gone, not reconciled, charged until it was lost)."""
    from costsched.service.jobs.budgets import budgets_now as now

    config = effective()
    return now(store, at=at, config=config.budgets,
               interval_seconds=config.daemon.watch_seconds, of_jobs=of_jobs,
               charged=[s.cost for s in shown])


def print_budgets(store: PriceStore, of_jobs: Collection[int] | None = None,
                  at: datetime | None = None, states: list[BudgetState] | None = None,
                  spent_places: int | None = None,
                  written: Mapping[int, tuple[float, float]] | None = None) -> None:
    """Each budget (of the jobs `of_jobs`, when given) at `at` (default now): spent,
    committed by its running jobs, forecast to their end (or the period's), and the jobs
    it stopped; `states`: those budgets, read already (`budgets_now`); `spent_places`: the
    decimals of the jobs' costs printed above it (`status`), the fewest its amounts take,
    so that a job's cost reads the same in both tables ('$0.003716', not '$0.0037'), and
    a stopped job's forecast as its spend; `written`: each job's cost, exact and as
    `status` writes it (the sum of its parts as written), by id, which a job's own budget
    spent reads as."""
    if states is None:
        states = budgets_now(store, at=at, of_jobs=of_jobs)
    if not states:
        return
    from costsched.report.budgets_now import DETAIL, HEADINGS, TITLE, budget_cells

    rows = budget_cells(states, spent_places, written)
    console.print(table(TITLE, HEADINGS, rows, detail=DETAIL))  # type: ignore[arg-type]



"""The budgets table of `status` and `report`: each budget now."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING

from costsched.amounts import charged_usd, decimals, given, usd
from costsched.cli.common import console, table
from costsched.config import effective

if TYPE_CHECKING:
    from costsched.service.jobs.caps import BudgetState
    from costsched.store import PriceStore


def budgets_now(store: PriceStore, at: datetime | None = None,
                of_jobs: Collection[int] | None = None) -> list[BudgetState]:
    """Each budget of the effective configuration now, or at `at` (a report's end);
    `of_jobs`: only the budgets of those jobs (a command about one job names its own)."""
    from costsched.service.jobs.budgets import budgets_now as now

    config = effective()
    return now(store, at=at, config=config.budgets,
               interval_seconds=config.daemon.watch_seconds, of_jobs=of_jobs)


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
    # The cap as the user set it ('$2.00'); each amount column at the precision it needs
    # (`costsched.amounts`): spent, committed and forecast are not parts of a sum.
    # (`spent_places`: no fewer decimals than the jobs' costs above, whose sums they are.)
    columns = [[usd(v, max(decimals(values), spent_places or 0)) for v in values]
               for values in ([getattr(s, f) for s in states]
                              for f in ("spent_usd", "committed_usd", "forecast_usd"))]
    for i, s in enumerate(states):  # a job's own budget: its spend as the job's cost reads
        found = (written or {}).get(s.jobs[0]) if s.kind == "job" and len(s.jobs) == 1 \
            else None
        if found is not None and spent_places is not None and abs(found[0] - s.spent_usd) < 1e-9:
            columns[0][i] = charged_usd(found[1], spent_places)
            if abs(s.forecast_usd - s.spent_usd) < 1e-9:  # a stopped job's: its spend
                columns[2][i] = columns[0][i]
    rows = [[s.name, s.period, given(s.usd), *(c[i] for c in columns), _jobs(s.running),
             _jobs(s.stopped)] for i, s in enumerate(states)]
    # "stopped at cap": the jobs its cap stopped, not every job whose state is stopped.
    headings = ["budget", "period", "cap $", "spent $", "committed $", "forecast $",
                "running", "stopped at cap"]
    console.print(table("Budgets now", headings, rows, detail=["committed $", "period"]))


def _jobs(ids: Sequence[int]) -> str:
    """'job 3', 'jobs 3, 5' (ids that do not read as a count); '-' for none."""
    if not ids:
        return "-"
    return ("job " if len(ids) == 1 else "jobs ") + ", ".join(map(str, ids))

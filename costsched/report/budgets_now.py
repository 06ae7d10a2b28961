"""The "Budgets now" table of `status`, `report` and `report --html`, cell by cell: each
budget now, its spent, committed and forecast dollars, and the jobs it runs and stopped.
(Its rows are made by the services, `budgets_now`; this writes them.)"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from costsched.amounts import charged_usd, decimals, given, usd

TITLE = "Budgets now"
# "stopped at cap": the jobs its cap stopped, not every job whose state is stopped.
HEADINGS = ["budget", "period", "cap $", "spent $", "committed $", "forecast $", "running",
            "stopped at cap"]
DETAIL = ["committed $", "period"]  # what a narrow view leaves out first
FIGURES = ("spent_usd", "committed_usd", "forecast_usd")  # a budget's dollars, read together


def budget_cells(states: Sequence[Any], spent_places: int | None = None,
                 written: Mapping[int, tuple[float, float]] | None = None
                 ) -> list[list[str]]:
    """The rows of the budgets `states` (`BudgetState`s) as written, under HEADINGS.

    The cap as the user set it, at the row's precision ('$0.0060' beside '$0.0023');
    spent, committed and forecast, read against
    each other, at one precision (`costsched.amounts`: the one they need together, zero
    too: 'committed $0.0000' beside 'spent $0.0035'), at no fewer decimals than
    `spent_places` (the store's scale, at which the jobs' costs beside it read:
    '$0.00185', not '$0.0019'). `written`: each job's cost, exact and as written at that
    scale (the sum of its parts as written), by id, which a job's own budget's spent
    reads as, and a stopped job's forecast (its spend) too, where the rows read at that
    scale (never '$0.01' beside 'committed $0.0275': the row's one precision first)."""
    figures = [[getattr(s, f) for s in states] for f in FIGURES]
    places = figure_places(states, spent_places)
    columns = [[usd(v, places) for v in values] for values in figures]
    at_scale = spent_places is not None and places == spent_places
    for i, s in enumerate(states):  # a job's own budget: its spend as the job's cost reads
        found = (written or {}).get(s.jobs[0]) if s.kind == "job" and len(s.jobs) == 1 \
            and at_scale else None
        if found is not None and spent_places is not None and abs(found[0] - s.spent_usd) < 1e-9:
            columns[0][i] = charged_usd(found[1], spent_places)
            if abs(s.forecast_usd - s.spent_usd) < 1e-9:  # a stopped job's: its spend
                columns[2][i] = columns[0][i]
    # (the cap at the row's precision: one row, one precision)
    return [[s.name, s.period, given(s.usd, places), *(c[i] for c in columns), _jobs(s.running),
             _jobs(s.stopped)] for i, s in enumerate(states)]


def figure_places(states: Sequence[Any], spent_places: int | None = None) -> int:
    """The decimals at which the budgets `states` write their spent, committed and
    forecast dollars (`budget_cells`), wherever they are said."""
    return max(decimals([getattr(s, f) for f in FIGURES for s in states]), spent_places or 0)


def _jobs(ids: Sequence[int]) -> str:
    """'job 3', 'jobs 3, 5' (ids that do not read as a count); '-' for none."""
    if not ids:
        return "-"
    return ("job " if len(ids) == 1 else "jobs ") + ", ".join(map(str, ids))

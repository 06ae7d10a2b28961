"""The budgets table of `status` and `report`: each budget now."""

from __future__ import annotations

from costsched.cli.common import console, money, table
from costsched.config import effective
from costsched.store import PriceStore


def print_budgets(store: PriceStore) -> None:
    """Each budget: spent, committed by its running jobs, forecast to their end, and the
    jobs it stopped."""
    from costsched.service.jobs.caps import budget_states
    from costsched.service.values import as_time

    config = effective()
    states = budget_states(store, config.budgets, as_time(None), config.daemon.watch_seconds)
    if not states:
        return
    rows = [[s.name, s.period, money(s.usd, 2), money(s.spent_usd, 4),
             money(s.committed_usd, 4), money(s.forecast_usd, 2),
             ", ".join(map(str, s.running)) or "-", ", ".join(map(str, s.stopped)) or "-"]
            for s in states]
    headings = ["budget", "period", "cap $", "spent $", "committed $", "forecast $",
                "running", "stopped"]
    console.print(table("Budgets now", headings, rows, detail=["committed $", "period"]))

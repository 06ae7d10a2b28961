"""Amounts read against each other in one row read at one precision, a zero among them
too: a budget's spent, committed and forecast ('committed $0.0000' beside 'spent
$0.0035'), an egress row's $ per GB beside its total."""

from __future__ import annotations

from types import SimpleNamespace

from costsched.report.budgets_now import budget_cells
from costsched.report.cells import format_cell


def test_a_budget_rows_figures_read_at_one_precision() -> None:
    state = SimpleNamespace(name="team", period="month", usd=5.0, spent_usd=0.0035,
                            committed_usd=0.0, forecast_usd=0.0035, kind="shared",
                            jobs=[1], running=[1], stopped=[])
    [row] = budget_cells([state])
    assert row[3:6] == ["$0.0035", "$0.0000", "$0.0035"]  # was committed $0.00


def test_an_egress_rows_price_reads_at_its_rows_precision() -> None:
    places = {"usd": 5, "hours": 4, "charged": 1}
    assert format_cell("usd_per_gb", 0.0, places) == "$0.00000"  # was $0.0000
    assert format_cell("usd", 0.0, places) == "$0.00000"
    assert format_cell("usd_per_gb", 0.12, {"usd": 2}) == "$0.1200"

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


def test_a_jobs_own_budget_reads_its_spend_at_the_rows_precision() -> None:
    # the store's scale is 2 decimals; the row's committed and forecast need 4: its spent
    # reads at 4 too, never '$0.01' beside '$0.0275' ('<$0.01' beside '$0.0053')
    job2 = SimpleNamespace(name="job 2 (bigram2)", period="total", usd=5.0,
                           spent_usd=0.0123, committed_usd=0.0275, forecast_usd=0.0833,
                           kind="job", jobs=[2], running=[2], stopped=[])
    job3 = SimpleNamespace(name="job 3", period="total", usd=0.07, spent_usd=0.0037,
                           committed_usd=0.0573, forecast_usd=0.0053, kind="job",
                           jobs=[3], running=[3], stopped=[])
    rows = budget_cells([job2, job3], 2, {2: (0.0123, 0.01), 3: (0.0037, 0.0037)})
    assert [r[3:6] for r in rows] == [["$0.0123", "$0.0275", "$0.0833"],
                                      ["$0.0037", "$0.0573", "$0.0053"]]


def test_a_jobs_own_budget_reads_its_spend_as_its_cost_at_the_stores_scale() -> None:
    state = SimpleNamespace(name="job 4", period="total", usd=5.0, spent_usd=0.0654,
                            committed_usd=0.12, forecast_usd=0.0654, kind="job",
                            jobs=[4], running=[], stopped=[4])
    [row] = budget_cells([state], 2, {4: (0.0654, 0.06)})  # its parts as written: $0.06
    assert row[3:6] == ["$0.06", "$0.12", "$0.06"]

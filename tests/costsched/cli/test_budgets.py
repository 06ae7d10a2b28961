"""The budgets table of `status`: its stopped column names the jobs the cap stopped, in
words that do not read as the job state `stopped` a user's own stop leaves."""

from __future__ import annotations

import pytest

from costsched.cli import budgets
from costsched.cli.common import console
from costsched.service.jobs.caps import BudgetState


def test_the_column_of_jobs_a_cap_stopped_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    states = [BudgetState("job 4 (mlp8-long)", "job", 5.0, "total", 0.0002, 0.0, 0.0002,
                          jobs=(4,), stopped=())]
    monkeypatch.setattr(budgets, "budgets_now", lambda store, **_: states)
    with console.capture() as captured:
        budgets.print_budgets(None)  # type: ignore[arg-type]
    out = captured.get()
    assert "stopped at cap" in out
    assert " stopped " not in out.replace("stopped at cap", "")


def test_a_command_about_one_job_shows_only_that_jobs_budgets(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from costsched.service.jobs import budgets as service_budgets

    states = [BudgetState("job 2 (mlp8-job)", "job", 5.0, "total", 0.0027, 0.0, 0.0027,
                          jobs=(2,)),
              BudgetState("job 4 (mlp8-long)", "job", 5.0, "total", 0.0002, 0.0, 0.0002,
                          jobs=(4,)),
              BudgetState("vision", "named", 50.0, "month", 1.0, 0.0, 1.0, jobs=(2, 4))]
    monkeypatch.setattr(service_budgets, "budget_states", lambda *_, **__: states)
    monkeypatch.setattr(service_budgets, "watch_span", lambda _store, seconds, _at: seconds)
    assert [s.name for s in budgets.budgets_now(None, of_jobs={4})] == [  # type: ignore[arg-type]
        "job 4 (mlp8-long)", "vision"]
    assert len(budgets.budgets_now(None)) == 3  # type: ignore[arg-type]


def test_a_cap_and_the_amounts_read_at_one_precision(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A $2 budget reads at its row's precision, as every amount of the row does ('$2.0000'
    beside a spend of '$0.0002'); spent, committed and forecast, compared, read at one
    precision."""
    states = [BudgetState("job 4 (mlp8-long)", "job", 2.0, "total", 0.0002, 0.0, 0.0002,
                          jobs=(4,)),
              BudgetState("vision", "named", 2.5, "month", 1.0, 0.25, 1.5, jobs=(2, 4))]
    monkeypatch.setattr(budgets, "budgets_now", lambda store, **_: states)
    with console.capture() as captured:
        budgets.print_budgets(None)  # type: ignore[arg-type]
    out = captured.get()
    assert "$2.0000 " in out and "$2.5000 " in out
    assert "$2.00 " not in out and "$2.50 " not in out
    # Spent, committed and forecast, read against each other: one precision (was
    # committed '$0.25' and '$0.00' beside spent '$0.0002').
    assert "$0.0002" in out and "$1.0000" in out and "$0.2500" in out
    assert "$0.0000 " in out and "$0.00 " not in out


def test_a_collection_plans_budget_reads_at_its_totals_precision() -> None:
    from types import SimpleNamespace

    import pandas as pd

    from costsched.cli import plan_tables

    assignment = pd.DataFrame([{"job": "a", "offering": "aws us-east-1a p3.2xlarge spot",
                                "hours": 0.01, "cost": 0.0042}])
    collection = SimpleNamespace(feasible=True, assignment=assignment, total_cost=0.0042,
                                 policy="min_cost", makespan_hours=0.01, instances=None)
    with console.capture() as captured:
        plan_tables.print_collection_table(collection, 2.0)  # type: ignore[arg-type]
    out = captured.get()
    assert "total $0.0042" in out and "budget $2.0000" in out  # (one line, one precision)

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
    monkeypatch.setattr(budgets, "budgets_now", lambda store, at=None: states)
    with console.capture() as captured:
        budgets.print_budgets(None)  # type: ignore[arg-type]
    out = captured.get()
    assert "stopped at cap" in out
    assert " stopped " not in out.replace("stopped at cap", "")

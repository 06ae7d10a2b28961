"""`plan` flags, where the figures stand, an offering whose pessimistic cost may not fit
the job's budget: the figure and the rule `launch` refuses by without --yes (preemptions at
the 95th percentile), in the table, its note and --json alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costsched.config import BudgetsConfig
from costsched.service.jobs.budget_launch import launch_fits
from costsched.store import PriceStore
from tests.costsched.service.test_budget_launch import AT, _job, priced  # noqa: F401

WHEN = AT.isoformat()


def _plan(cli, db_path: Path, job: Path, *more: str):  # noqa: ANN001, ANN202
    shown = cli("plan", job, "--db", db_path, "--at", WHEN, *more)
    assert shown.exit_code == 0, shown.output
    return shown


def test_an_offering_whose_pessimistic_cost_may_overrun_the_budget_is_flagged(
        tmp_path: Path, priced: PriceStore, cli, db_path: Path) -> None:  # noqa: F811, ANN001
    [fit] = launch_fits(priced, [_job(tmp_path, budget=1000)], BudgetsConfig(), AT)
    between = round((fit.expected_usd + fit.pessimistic_usd) / 2, 2)
    job = _job(tmp_path, budget=between)
    [risky] = launch_fits(priced, [job], BudgetsConfig(), AT)
    assert risky.fits and not risky.safe  # launch asks for --yes
    doc = json.loads(_plan(cli, db_path, job, "--json").stdout)
    [row] = doc["rankings"][0]["ranking"]
    assert row["pessimistic_cost"] == risky.pessimistic_usd  # the launch's own figure
    assert row["budget_may_not_fit"] is True
    text = _plan(cli, db_path, job).stdout
    [line] = [r for r in text.splitlines() if r.strip(" │").startswith("1 ")]
    assert f"{round(fit.expected_usd, 2):,.2f}!" in line.replace("$", "")
    [note] = [n for n in text.splitlines() if n.strip().startswith("!")]
    assert f"pessimistic ${risky.pessimistic_usd:,.2f}" in note and "may not fit" in note
    assert f"budget ${between:,.2f}" in note and "--yes" in note


@pytest.mark.parametrize("constraints", [{"budget": 1000}, {}])
def test_an_offering_that_fits_even_pessimistically_is_not_flagged(
        tmp_path: Path, priced: PriceStore, cli, db_path: Path,  # noqa: F811, ANN001
        constraints: dict) -> None:
    job = _job(tmp_path, **constraints)
    doc = json.loads(_plan(cli, db_path, job, "--json").stdout)
    [row] = doc["rankings"][0]["ranking"]
    assert row["budget_may_not_fit"] is False
    text = _plan(cli, db_path, job).stdout
    assert not [n for n in text.splitlines() if n.strip().startswith("!")]
    assert "!" not in "".join(r for r in text.splitlines() if r.strip(" │").startswith("1 "))

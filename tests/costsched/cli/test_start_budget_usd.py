"""`start --budget` reads an amount of USD as `plan --budget` does ('$0.03', '1,200'), and
refuses one it cannot read in the same words: one parser for every --budget in USD."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.store import PriceStore


@pytest.fixture()
def db(tmp_path: Path) -> str:
    path = tmp_path / "store.sqlite"
    PriceStore(str(path)).dispose()
    return str(path)


@pytest.mark.parametrize("amount", ["$0.03", "0.03", "1,200", " $5 "])
def test_start_takes_dollars_as_plan_does(db: str, amount: str) -> None:
    result = CliRunner().invoke(app, ["start", "nosuch", "--budget", amount, "--db", db],
                                env={"COLUMNS": "200"}, prog_name="costsched")
    assert result.exit_code == 2
    # read: the start goes on to the job, which this store does not hold
    assert result.output.splitlines() == ["error: job 'nosuch': no job of that name in the "
                                          "store"]


@pytest.mark.parametrize("command", [["start", "nosuch"], ["plan", "job.yaml"]])
def test_every_budget_in_usd_refuses_alike(db: str, command: list[str]) -> None:
    result = CliRunner().invoke(app, [*command, "--budget", "0.02eur", "--db", db],
                                env={"COLUMNS": "200"}, prog_name="costsched")
    assert result.exit_code == 2
    assert result.output.splitlines() == [
        f"error: costsched {command[0]}: --budget '0.02eur': only USD is taken: expected an "
        f"amount of USD, such as 50 or '$50'; `costsched {command[0]} --help` shows the usage"]

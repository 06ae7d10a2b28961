"""Progress bars only on a terminal: off one (a pipe, a file, CI) a bar cannot be erased, so
`collect` and `backtest` write neither its frames nor the blank line it leaves."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from costsched.cli import app, common

WINDOW = ["--first-start", "2020-02-24", "--starts", "3", "--every-hours", "48"]
BAR = "━"


def _no_bar(stderr: str) -> None:
    assert BAR not in stderr, stderr
    assert "" not in stderr.splitlines(), f"a blank line in {stderr!r}"


def test_collect_off_a_terminal_writes_no_bar_and_no_blank_line(cli, azure_prices) -> None:
    result = cli("collect", "--cloud", "azure", "--gpu", "T4")
    assert result.exit_code == 0, result.output
    _no_bar(result.stderr)
    assert "Collected prices" in result.stdout


def test_collect_on_a_terminal_still_shows_its_bar(cli, azure_prices, monkeypatch) -> None:
    monkeypatch.setattr(common.err_console, "_force_terminal", True)
    result = cli("collect", "--cloud", "azure", "--gpu", "T4")
    assert result.exit_code == 0, result.output
    assert BAR in result.stderr


@pytest.mark.parametrize("mode", [[], ["--collection"]])
def test_backtest_off_a_terminal_writes_no_bar_and_no_blank_line(recorded_store,
                                                                  mode: list[str]) -> None:
    result = CliRunner().invoke(app, ["backtest", "--db", recorded_store.url, "--models", "A3C",
                                      "--region", "us-east-1", *WINDOW, *mode],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    _no_bar(result.stderr)
    assert result.stdout.strip()

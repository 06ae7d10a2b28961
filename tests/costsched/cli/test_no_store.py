"""Views of the bundled data answer on a fresh machine, with no store, and make none."""

from __future__ import annotations

import json
from pathlib import Path

import platformdirs
import pytest
from typer.testing import CliRunner

from costsched.cli import app


@pytest.mark.parametrize("argv", [["prices", "show", "--json"], ["gpus", "--json"],
                                  ["throughput", "show", "--json"]])
def test_a_bundled_view_needs_no_store(monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> None:
    monkeypatch.delenv("COSTSCHED_DB", raising=False)
    default = Path(platformdirs.user_data_dir("costsched")) / "prices.sqlite"
    assert not default.exists()
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)
    assert not default.exists()

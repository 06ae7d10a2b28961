"""A count and its noun agree in every line that prints one: '1 offering', '1 ask',
'2 offerings' (never '1 offerings')."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.costsched.service.booked_world import FIXTURES


def _one_block() -> dict:
    body = json.loads((FIXTURES / "describe_capacity_block_offerings.json").read_text())
    return {**body, "CapacityBlockOfferings": body["CapacityBlockOfferings"][:1]}


def test_an_import_of_one_booked_offering_says_1_offering(cli, tmp_path: Path) -> None:  # noqa: ANN001
    body = tmp_path / "offerings.json"
    body.write_text(json.dumps(_one_block()))
    result = cli("prices", "import", str(body))
    assert result.exit_code == 0, result.output
    assert "Booked capacity: 1 file, 1 offering, 1 new" in result.stdout


def test_collect_booked_of_one_ask_says_1_ask(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from costsched.cli import app
    from costsched.cli import collect as cli_collect
    from costsched.service.booked_collect import BookedCollection
    from price_collectors.runner import CloudSummary, RunSummary

    def prices(store: Any, request: Any, **_: Any) -> RunSummary:  # the prices: none new
        return RunSummary({c: CloudSummary(c) for c in request.clouds})

    monkeypatch.setattr(cli_collect, "run_collection", prices)
    monkeypatch.setattr(cli_collect, "_collect_booked",
                        lambda *_: BookedCollection(asked=1, offerings=1, added=0))
    ran = CliRunner().invoke(app, ["collect", "--cloud", "aws", "--region", "us-east-1",
                                   "--booked", "--gpu", "H100",
                                   "--new-store", "--db", str(tmp_path / "s.sqlite")],
                             catch_exceptions=False)
    assert ran.exit_code == 0, ran.output
    assert "Booked capacity: 1 offering found in 1 ask, 0 new" in ran.stdout, ran.stdout

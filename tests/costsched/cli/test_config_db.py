"""The configuration file's `db` is the store every command uses, as `costsched config
show` lists it: --db, then $COSTSCHED_DB, come first."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app

PRICES = Path(__file__).resolve().parents[3] / "examples" / "demo" / "prices-before.csv"


def _run(args: list[str], config: Path, **env: str):  # noqa: ANN202 - click's Result
    return CliRunner().invoke(app, args, env={"COSTSCHED_CONFIG": str(config),
                                             "COLUMNS": "200", **env})


def test_the_configured_db_is_the_store_commands_read_and_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("COSTSCHED_DB", raising=False)
    team = tmp_path / "team.sqlite"
    config = tmp_path / "config.toml"
    config.write_text(f'db = "{team}"\n')

    said = _run(["status"], config)
    assert said.exit_code == 2
    assert f"the configuration's db {team}: no such store" in said.output

    imported = _run(["prices", "import", str(PRICES), "--whole"], config)
    assert imported.exit_code == 0, imported.output
    assert team.exists()  # made where the configuration says, not in the user data folder
    shown = _run(["prices", "show", "--json"], config)
    assert shown.exit_code == 0 and '"usd_per_hour"' in shown.output, shown.output

    other = tmp_path / "other.sqlite"
    refused = _run(["status", "--db", str(other)], config)  # --db first
    assert refused.exit_code == 2 and f"--db {other}: no such store" in refused.output
    by_env = _run(["status"], config, COSTSCHED_DB=str(other))  # then $COSTSCHED_DB
    assert by_env.exit_code == 2 and "$COSTSCHED_DB" in by_env.output

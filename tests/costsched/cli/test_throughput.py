"""`costsched throughput`: the bundled figures need no store, and a GPU count beyond any
instance is one line, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import platformdirs
import pytest
from typer.testing import CliRunner

from costsched.cli import app


@pytest.fixture()
def no_store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No COSTSCHED_DB, and no store in the user data directory."""
    monkeypatch.delenv("COSTSCHED_DB", raising=False)
    data = Path(platformdirs.user_data_dir("costsched"))
    assert not (data / "prices.sqlite").exists()
    return data


def test_show_needs_no_store_and_makes_none(no_store: Path) -> None:
    runner = CliRunner()
    shown = runner.invoke(app, ["throughput", "show", "--json"])
    assert shown.exit_code == 0, shown.output
    rows = json.loads(shown.stdout)["throughputs"]
    assert any(r["model"].startswith("ResNet-50") and r["gpu_model"] == "V100" for r in rows)
    one = runner.invoke(app, ["throughput", "show", "--model", "ResNet-50 (batch size 64)"])
    assert one.exit_code == 0 and "K80" in one.stdout
    assert not (no_store / "prices.sqlite").exists()
    # A store named that does not exist is still a typo, said in one line.
    missing = runner.invoke(app, ["throughput", "show", "--db", str(no_store / "typo.sqlite")])
    assert missing.exit_code == 2 and "no such store" in missing.output
    # The measured runs are the store's: without one, that is said.
    runs = runner.invoke(app, ["throughput", "show", "--measured"])
    assert runs.exit_code == 2 and "no such store" in runs.output


@pytest.mark.parametrize("argv", [
    ["throughput", "forget", "--gpu", "V100:99999999999999999999"],
    ["throughput", "forget", "--gpu", "V100:17"],
    ["throughput", "show", "--count", "99999999999999999999"],
    ["throughput", "set", "ResNet-50 (batch size 64)", "V100:99999999999999999999", "3"],
])
def test_a_gpu_count_beyond_any_instance_is_one_line(cli, argv: list[str]) -> None:  # noqa: ANN001
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "from 1 to 16" in lines[0] and "Traceback" not in result.output

"""`costsched config show` writes each value as the TOML file writes it: true and false,
tables as inline tables, never Python's True, None or {'usd': 50.0}."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from costsched.cli import app


def _cells(output: str, key: str) -> str:
    line = next(line for line in output.splitlines() if f" {key} " in line)
    return line.split("│")[2].strip()


def test_booleans_and_tables_read_as_the_file_writes_them(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[azure]\npublic_ip = true\n\n[budgets.named.team]\nusd = 50\n")
    result = CliRunner().invoke(app, ["config", "show", "--config", str(path)],
                                env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    assert _cells(result.output, "azure.public_ip") == "true"
    assert _cells(result.output, "azure.create_resource_group") == "false"
    assert _cells(result.output, "budgets.named") == (
        'team: {usd = 50.0, period = "total", labels = {}}')
    assert "True" not in result.output and "None" not in result.output

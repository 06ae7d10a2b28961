"""`costsched --config PATH COMMAND`: the config file for any command, as the docs say; the
hint given when --config follows a command names that form, and it works."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app


@pytest.fixture
def config_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("COSTSCHED_CONFIG", raising=False)  # restored after the test
    path = tmp_path / "team.toml"
    path.write_text("[policy]\nmargin = 0.37\n")
    return path


def test_the_root_config_option_is_read_by_a_command(config_file: Path) -> None:
    result = CliRunner().invoke(app, ["--config", str(config_file), "config", "show",
                                      "--json"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert shown["file"] == str(config_file) and shown["read"] is True
    assert shown["values"]["policy.margin"] == {"value": 0.37, "from": f"file {config_file}"}


def test_a_missing_config_file_is_one_line(config_file: Path) -> None:
    result = CliRunner().invoke(app, ["--config", "nope.toml", "status"],
                                prog_name="costsched")
    assert result.exit_code == 2
    assert result.stderr == ("error: --config 'nope.toml': no such file: expected "
                             "a TOML config file; `costsched --help` shows the usage\n")
    folder = config_file.parent
    result = CliRunner().invoke(app, ["--config", str(folder), "status"],
                                prog_name="costsched")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: --config '{folder}': a directory: "
                                    "expected a TOML config file")


@pytest.mark.parametrize("argv", [["status"], ["prices", "history"]])
def test_config_after_the_command_names_the_form_that_works(
        config_file: Path, argv: list[str]) -> None:
    runner = CliRunner()
    wrong = runner.invoke(app, [*argv, "--config", str(config_file)], prog_name="costsched")
    assert wrong.exit_code == 2
    hint = re.search(r"--config comes before the command \(`costsched (.*?) \.\.\.`\)",
                     wrong.stderr)
    assert hint, wrong.stderr
    hinted = hint.group(1).replace("PATH", str(config_file)).split()
    assert hinted == ["--config", str(config_file), *argv]
    if argv == ["status"]:  # the hinted command runs, with the file in effect
        done = runner.invoke(app, hinted)
        assert done.exit_code == 0, done.output
        assert os.environ["COSTSCHED_CONFIG"] == str(config_file)

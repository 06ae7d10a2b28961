"""A config file as editors save it (with a byte order mark) is read; a --config that is a
folder or empty is said in one line with the root --config's words, exit code 2."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app


def test_a_config_file_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    file = tmp_path / "c.toml"
    file.write_bytes(b"\xef\xbb\xbf[policy]\nmargin = 0.3\n")
    result = CliRunner().invoke(app, ["config", "show", "--config", str(file), "--json"],
                                prog_name="costsched")
    assert result.exit_code == 0, result.output
    assert '"policy.margin"' in result.stdout and "0.3" in result.stdout


@pytest.mark.parametrize("given", ["folder", ""])
def test_a_config_that_is_a_folder_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           given: str) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder").mkdir()
    result = CliRunner().invoke(app, ["config", "show", "--config", given],
                                prog_name="costsched")
    assert result.exit_code == 2, (result.output, result.exception)
    [line] = result.stderr.splitlines()
    assert line.endswith(": a directory: expected a TOML config file"), line


def test_a_config_not_there_says_no_such_file(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["config", "show", "--config", str(tmp_path / "x.toml")],
                                prog_name="costsched")
    assert result.exit_code == 2, (result.output, result.exception)
    [line] = result.stderr.splitlines()
    assert line.endswith("x.toml: no such file: expected a TOML config file"), line

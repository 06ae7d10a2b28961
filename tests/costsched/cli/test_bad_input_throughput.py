"""`throughput` given bad input as a user gives it (a spreadsheet's CSV, a folder where a
file is meant, an empty path): one line naming the file and what is accepted, exit code 2,
no traceback, the measurements file untouched."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app

HEADER = "model,gpu_model,gpu_count,steps_per_second"


@pytest.fixture()
def measured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "throughputs.csv"
    monkeypatch.setenv("COSTSCHED_THROUGHPUTS", str(path))
    monkeypatch.chdir(tmp_path)
    return path


def _one_error_line(*argv: str) -> str:
    result = CliRunner().invoke(app, list(argv), prog_name="costsched")
    assert result.exit_code == 2, (result.output, result.exception)
    assert "Traceback" not in result.output and result.stdout == ""
    [line] = result.stderr.splitlines()
    return line


def test_a_csv_saved_with_a_byte_order_mark_imports(measured: Path, tmp_path: Path) -> None:
    given = tmp_path / "mine.csv"
    given.write_bytes(b"\xef\xbb\xbf" + f"{HEADER}\nmy-model,V100,1,3.5\n".encode())
    result = CliRunner().invoke(app, ["throughput", "import", str(given)])
    assert result.exit_code == 0, result.output
    assert "my-model,V100,1,3.5" in measured.read_text()


@pytest.mark.parametrize("argv, said", [
    (["throughput", "import", ""], "error: csv '': expected a CSV file of measurements "
                                   "(model, gpu_model, gpu_count, steps_per_second[, source])"),
    (["throughput", "show", "--file", "folder"],
     "error: --file folder: a directory: expected the measurements CSV file"),
])
def test_a_path_that_names_no_file_is_refused_in_one_line(measured: Path, tmp_path: Path,
                                                          argv: list[str], said: str) -> None:
    (tmp_path / "folder").mkdir()
    assert _one_error_line(*argv) == said
    assert not measured.exists()


def test_a_negative_number_names_the_argument(measured: Path) -> None:
    line = _one_error_line("throughput", "set", "MODEL", "V100", "-1.5")
    assert "steps_per_second: expected a positive number ('-1'... reads as an option)" in line
    assert "no such option" not in line


def test_an_argument_given_as_an_option_is_not_taken_for_help(measured: Path) -> None:
    line = _one_error_line("throughput", "set", "--model", "X")
    assert "no such option: --model" in line
    assert "'--help'" not in line, line
    assert "model is an argument: give it without --model" in line

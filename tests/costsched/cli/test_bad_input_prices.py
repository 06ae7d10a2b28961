"""`prices import` and `prices export` given bad input as a user gives it (a spreadsheet's
CSV, a misspelt column, a row with a field too many, an empty path): one line naming the
file, the field and what is accepted, exit code 2, no traceback, nothing stored."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.store import OBSERVATION_COLUMNS, PriceStore

HEADER = ",".join(OBSERVATION_COLUMNS)
ROW = "aws,us-east-1,us-east-1a,p3.2xlarge,spot,linux,V100,1,8,61.0,0.92,2024-06-01T00:00:00Z,quote"


def _store(tmp_path: Path) -> Path:
    """A store made already (a new one's line, 'creating the store', aside)."""
    db = tmp_path / "s.db"
    PriceStore(str(db)).dispose()
    return db


def _run(*args: str):
    return CliRunner().invoke(app, list(args), prog_name="costsched")


def _one_error_line(result) -> str:  # noqa: ANN001
    assert result.exit_code == 2, (result.output, result.exception)
    assert "Traceback" not in result.output
    [line] = result.stderr.splitlines()
    assert line.startswith("error: ")
    return line


def test_a_csv_saved_with_a_byte_order_mark_imports(tmp_path: Path) -> None:
    """Spreadsheets write UTF-8 CSVs with a BOM: it is no part of the first column's name."""
    path = tmp_path / "prices.csv"
    path.write_bytes(b"\xef\xbb\xbf" + f"{HEADER}\n{ROW}\n".encode())
    result = _run("prices", "import", str(path), "--partial", "--db", str(tmp_path / "s.db"),
                  "--new-store",
                  "--json")
    assert result.exit_code == 0, result.output
    assert '"inserted": 1' in result.stdout


@pytest.mark.parametrize("header, said", [
    (HEADER.replace("usd_per_hour", "usd_per_hr"),
     "missing column usd_per_hour: the header has usd_per_hr; did you mean 'usd_per_hour'?"),
    (HEADER.replace(",source", ""), "missing column source: expected the export's columns "),
    (HEADER.replace("market,", "markt,").replace(",source", ""),
     "missing columns market, source: the header has markt; did you mean 'market'?"),
])
def test_an_export_with_a_column_missing_names_it(tmp_path: Path, header: str,
                                                  said: str) -> None:
    path = tmp_path / "prices.csv"
    path.write_text(f"{header}\n{ROW}\n")
    line = _one_error_line(_run("prices", "import", str(path), "--db", str(_store(tmp_path))))
    assert line.startswith(f"error: {path}: {said}"), line


def test_a_row_with_a_field_more_than_the_header_is_named(tmp_path: Path) -> None:
    """Not read as its fields shifted by one (pandas takes the first as the row's index)."""
    path = tmp_path / "prices.csv"
    path.write_text(f"{HEADER}\n{ROW}\n{ROW},extra\n")
    line = _one_error_line(_run("prices", "import", str(path), "--db", str(_store(tmp_path))))
    assert line == (f"error: {path}: row 3: 14 fields: expected 13, as the header has "
                    "(a value holding a comma is written in double quotes)"), line


def test_an_empty_path_to_import_is_refused_not_read_as_the_current_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "good.csv").write_text(f"{HEADER}\n{ROW}\n")
    db = tmp_path / "s.db"
    line = _one_error_line(_run("prices", "import", "good.csv", "", "--db", str(db),
                                          "--new-store"))
    assert line == "error: paths '': expected a file or a directory of recorded logs"
    assert not db.exists()


def test_an_empty_path_to_export_to_is_refused(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    line = _one_error_line(_run("prices", "export", "", "--db", str(_store(tmp_path))))
    assert line == "error: path '': expected a .csv or .parquet path"


def test_a_history_whose_since_is_after_its_until_is_refused(tmp_path: Path) -> None:
    """Not answered 'no known prices' for a type that has some."""
    line = _one_error_line(_run("prices", "history", "--instance", "p3.2xlarge", "--since",
                                "2026-12-01", "--until", "2026-01-01", "--db",
                                str(_store(tmp_path))))
    assert line == ("error: --since 2026-12-01: expected a time before --until 2026-01-01 "
                    "(the end of the period)")

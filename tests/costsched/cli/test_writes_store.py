"""Every command that writes to a store takes the same rule as `launch`: a --db that names
no store yet is refused in one line naming it and --new-store (nothing is made); with
--new-store it is made; a store that exists needs no flag. `quotas` without --refresh only
reads: a --db that does not exist is refused, --new-store or not."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.store import PriceStore
from tests.costsched.bills.exports import azure_csv, azure_row

ROOT = Path(__file__).resolve().parents[3]
SIGNALS = ROOT / "tests" / "fixtures" / "signals" / "spot-advisor-data.json"


def _bill(tmp: Path) -> str:
    path = tmp / "part_0.csv"
    path.write_bytes(azure_csv([azure_row("2024-06-01", "/subscriptions/s/virtualMachines/vm9",
                                          "Virtual Machines", 2.0)]))
    return str(path)


# Each writing command, as run on input it takes (`collect`: Azure's price API on loopback).
WRITERS: dict[str, Callable[[Path], list[str]]] = {
    "prices import": lambda tmp: ["prices", "import",
                                  str(ROOT / "examples" / "demo" / "prices-before.csv"),
                                  "--whole"],
    "collect": lambda tmp: ["collect", "--cloud", "azure"],
    "risk import": lambda tmp: ["risk", "import", str(SIGNALS), "--kind", "advisor"],
    "bills import": lambda tmp: ["bills", "import", _bill(tmp)],
    "quotas --refresh": lambda tmp: ["quotas", "--refresh", "--cloud", "aws"],
}
STORING = sorted(set(WRITERS) - {"quotas --refresh"})  # (no test reads a cloud's quotas)


def _run(argv: list[str]):  # noqa: ANN202
    return CliRunner().invoke(app, argv, catch_exceptions=False)


def _ready(name: str, request: pytest.FixtureRequest) -> None:
    if name == "collect":
        request.getfixturevalue("azure_prices")


@pytest.mark.parametrize("name", sorted(WRITERS))
def test_a_db_that_names_no_store_is_refused_in_one_line_and_nothing_is_made(
        name: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    _ready(name, request)
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    db = tmp_path / "typo" / "store.sqlite"
    result = _run([*WRITERS[name](inputs), "--db", str(db)])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"error: --db {db}: no such store ({db}); add --new-store to make it (unasked, only "
        "the default store is made)"]
    assert result.stdout == ""
    assert not db.parent.exists()


@pytest.mark.parametrize("name", STORING)
def test_new_store_makes_it_and_says_so_once(
        name: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    _ready(name, request)
    db = tmp_path / "new" / "store.sqlite"
    result = _run([*WRITERS[name](tmp_path), "--db", str(db), "--new-store"])
    assert result.exit_code == 0, result.output
    assert db.exists() and result.stderr.count(f"creating the store {db}") == 1


@pytest.mark.parametrize("name", STORING)
def test_a_store_that_exists_needs_no_flag(
        name: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    _ready(name, request)
    db = tmp_path / "store.sqlite"
    PriceStore(str(db)).dispose()
    result = _run([*WRITERS[name](tmp_path), "--db", str(db)])
    assert result.exit_code == 0, result.output
    assert "creating the store" not in result.stderr


def test_a_refresh_with_new_store_is_not_refused(tmp_path: Path) -> None:
    """Past the rule, a refresh that read no quota keeps no store (`collect_new_store`)."""
    db = tmp_path / "store.sqlite"
    result = _run(["quotas", "--refresh", "--cloud", "aws", "--db", str(db), "--new-store"])
    assert result.exit_code == 1, result.output
    assert "aws quotas" in result.stderr and "no such store" not in result.stderr
    assert not db.exists()


@pytest.mark.parametrize("flag", [[], ["--new-store"]])
def test_quotas_without_refresh_only_reads_a_db_that_exists(flag: list[str],
                                                              tmp_path: Path) -> None:
    db = tmp_path / "typo.sqlite"
    result = _run(["quotas", "--db", str(db), *flag])
    assert result.exit_code == 2, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith(f"error: --db {db}: no such store ({db}); "), line
    assert "--new-store" in line and not db.exists()


def test_with_no_db_the_default_store_is_made_unasked(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """$COSTSCHED_DB's store (as the default one) is the store every command uses: made by
    the first command that writes, as by the first launch."""
    db = tmp_path / "team" / "store.sqlite"
    monkeypatch.setenv("COSTSCHED_DB", str(db))
    result = _run(WRITERS["prices import"](tmp_path))
    assert result.exit_code == 0, result.output
    assert db.exists() and result.stderr.count(f"creating the store {db}") == 1


def test_a_database_without_a_store_is_refused_as_a_missing_file_is(empty_url: str) -> None:
    """On a database server too: a --db whose database holds no costsched store yet is
    named in one line (its password masked) and left empty; --new-store makes the store."""
    from costsched.store.database import describe

    argv = [*WRITERS["prices import"](Path()), "--db", empty_url]
    refused = _run(argv)
    assert refused.exit_code == 2, refused.output
    [line] = refused.stderr.splitlines()
    what = "no costsched store in this database yet" if "://" in empty_url else "no such store"
    assert line.startswith(f"error: --db {describe(empty_url)}: {what}"), line
    assert line.endswith("; add --new-store to make it (unasked, only the default store is "
                         "made)"), line
    assert "costsched:costsched@" not in line  # (its password masked)
    made = _run([*argv, "--new-store"])
    assert made.exit_code == 0, made.output
    assert _run(["prices", "show", "--db", empty_url]).exit_code == 0

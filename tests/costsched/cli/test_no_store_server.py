"""A command that only reads never creates a store, on a database server as with a SQLite
file: an empty database (a PostgreSQL schema of its own) is said to hold no store yet, in
one line with how to make one, and stays empty; a missing driver names costsched's extra."""

from __future__ import annotations

import sys

import pytest
from sqlalchemy import create_engine, inspect
from typer.testing import CliRunner

from costsched.cli import app
from costsched.store.database import StoreError, describe, make_engine


def _tables(url: str) -> list[str]:
    if "://" not in url:
        return []
    engine = create_engine(url)
    try:
        return inspect(engine).get_table_names()
    finally:
        engine.dispose()


@pytest.mark.parametrize("argv", [["status"], ["report"], ["logs", "1"]])
def test_a_read_of_an_empty_database_names_it_and_creates_nothing(
        empty_url: str, monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> None:
    monkeypatch.setenv("COSTSCHED_DB", empty_url)
    result = CliRunner().invoke(app, argv, prog_name="costsched")
    assert result.exit_code == 2, result.output
    [line] = result.output.splitlines()
    what = ("no costsched store in this database yet" if "://" in empty_url
            else "no such store")
    assert line.startswith(f"error: $COSTSCHED_DB {describe(empty_url)}: {what}"), line
    assert line.endswith("; `costsched launch JOB.yaml`, `costsched collect` or `costsched "
                         "prices import FILE` makes one")
    assert "costsched:costsched@" not in line  # (its password masked)
    assert _tables(empty_url) == []
    named = CliRunner().invoke(app, [*argv, "--db", empty_url], prog_name="costsched")
    assert named.exit_code == 2 and named.output.startswith(f"error: --db {describe(empty_url)}")
    assert _tables(empty_url) == []


def test_a_bundled_view_of_an_empty_database_uses_the_list_prices_in_memory(
        empty_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if "://" not in empty_url:
        pytest.skip("a SQLite file: test_no_store")
    monkeypatch.setenv("COSTSCHED_DB", empty_url)
    result = CliRunner().invoke(app, ["gpus", "--json"], prog_name="costsched")
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith(f"no store at {describe(empty_url)} yet: bundled list "
                                    "prices only")
    assert _tables(empty_url) == []


def test_a_missing_postgresql_driver_names_costscheds_extra(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if not installed
    with pytest.raises(StoreError) as caught:
        make_engine("postgresql+psycopg://me:pw@127.0.0.1:1/db")
    assert str(caught.value).endswith("its database driver 'psycopg' is not installed; "
                                      "install it (pip install 'costsched[postgres]')")

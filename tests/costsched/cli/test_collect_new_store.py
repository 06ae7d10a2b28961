"""`collect` and `quotas` leave no new store behind when they store nothing (no cloud
could be read): they say so instead, and a store they did store in is kept."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app


def _run(*argv: str):  # noqa: ANN202
    return CliRunner().invoke(app, list(argv), catch_exceptions=False)


def test_a_collection_that_stores_nothing_makes_no_store(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "boto3", None)  # no SDK: nothing can be collected
    db = tmp_path / "new.sqlite"
    result = _run("collect", "--cloud", "aws", "--db", str(db), "--new-store")
    assert result.exit_code == 1, result.output
    assert list(tmp_path.glob("new.sqlite*")) == []
    assert "creating the store" not in result.stderr
    assert result.stdout.splitlines()[-1] == (
        f"Stored 0 new rows, 0 unchanged, 0 rejected; nothing to keep: no store made at {db}")


def test_a_collection_that_stores_nothing_names_no_store_in_its_json(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "boto3", None)  # no SDK: nothing can be collected
    db = tmp_path / "new.sqlite"
    result = _run("collect", "--cloud", "aws", "--db", str(db), "--new-store", "--json")
    assert result.exit_code == 1, result.output
    assert list(tmp_path.glob("new.sqlite*")) == []
    out = json.loads(result.stdout)
    assert out["store"] is None  # the store was not kept: no path of one
    assert out["store_note"] == f"nothing to keep: no store made at {db}"
    assert out["inserted"] == 0 and not out["ok"]


def test_a_collection_that_stores_names_its_kept_store_in_its_json(
        tmp_path: Path, azure_prices) -> None:  # noqa: ANN001
    db = tmp_path / "new.sqlite"
    result = _run("collect", "--cloud", "azure", "--db", str(db), "--new-store", "--json")
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert db.exists() and out["store"] == str(db) and out["store_note"] is None


def test_a_collection_that_stores_keeps_its_new_store(tmp_path: Path, azure_prices) -> None:  # noqa: ANN001
    db = tmp_path / "new.sqlite"
    result = _run("collect", "--cloud", "azure", "--db", str(db), "--new-store")
    assert result.exit_code == 0, result.output
    assert db.exists() and f"store: {db}" in result.stdout
    assert result.stderr.count(f"creating the store {db}") == 1


def test_quotas_that_read_nothing_make_no_store(tmp_path: Path) -> None:
    db = tmp_path / "new.sqlite"
    refreshed = _run("quotas", "--refresh", "--cloud", "aws", "--db", str(db), "--new-store")
    assert refreshed.exit_code == 1, refreshed.output
    assert "aws quotas" in refreshed.stderr and "tests read no cloud" in refreshed.stderr
    assert "creating the store" not in refreshed.stderr
    shown = _run("quotas", "--db", str(db))  # (only reads: the store is not there)
    assert shown.exit_code == 2 and "no such store" in shown.stderr, shown.output
    default = _run("quotas")  # the default store, not made yet: nothing read yet
    assert default.exit_code == 0, default.output
    assert default.stdout.startswith("No quotas read yet")
    assert "creating the store" not in default.stderr
    assert list(tmp_path.glob("new.sqlite*")) == []


def test_a_refused_refresh_makes_no_store(tmp_path: Path) -> None:
    db = tmp_path / "new.sqlite"
    refused = _run("quotas", "--refresh", "--region", "us-eats-1", "--db", str(db),
                   "--new-store")
    assert refused.exit_code == 2 and "--region" in refused.output, refused.output
    assert "creating the store" not in refused.stderr
    assert list(tmp_path.glob("new.sqlite*")) == []

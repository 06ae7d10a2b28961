"""The database under the stores: where a store is shown, and writes that lose a race."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
from sqlalchemy import text

from costsched.store import PriceStore, StoreBusy, StoreError, database
from costsched.store_limits import DEFAULT_LIMITS, Limits


def test_describe_masks_the_password_and_shows_sqlite_paths(tmp_path: Path) -> None:
    assert database.describe("postgresql+psycopg://me:pw@db.example/prices") == \
        "postgresql+psycopg://me:***@db.example/prices"
    path = tmp_path / "p.sqlite"
    assert database.describe(database.resolve_url(str(path))) == str(path)
    store = PriceStore("postgresql+psycopg://me:pw@db.example/prices", migrate=False)
    assert store.where == "postgresql+psycopg://me:***@db.example/prices"
    store.dispose()


def test_a_directory_is_not_a_store(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="is a directory"):
        database.resolve_url(str(tmp_path))


def test_write_runs_again_when_it_loses_a_race(any_store: PriceStore,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(database.time, "sleep", lambda _s: None)
    calls: list[int] = []

    def work(conn) -> int:  # noqa: ANN001
        calls.append(conn.execute(text("SELECT 1")).scalar_one())
        if len(calls) < 3:
            raise StoreBusy("store x: busy")
        return len(calls)

    assert database.write(any_store.engine, work) == 3

    def always(conn) -> None:  # noqa: ANN001
        calls.append(1)
        raise StoreBusy("store x: busy")

    calls.clear()
    with pytest.raises(StoreBusy):
        database.write(any_store.engine, always)
    assert len(calls) == database.WRITE_ATTEMPTS


def test_a_held_sqlite_write_lock_is_busy_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(database.time, "sleep", lambda _s: None)
    quick = Limits(busy_seconds=0.1)
    store, rival = PriceStore(str(tmp_path / "p.sqlite"), limits=quick), None
    holder = store.engine.connect()
    holder.execution_options(sqlite_begin="IMMEDIATE")
    holder.begin()
    try:
        rival = PriceStore(str(tmp_path / "p.sqlite"), migrate=False, limits=quick)
        with pytest.raises(StoreBusy, match="busy: another process holds its write lock"):
            rival.jobs.create("resnet", {}, 10.0, at=datetime.now(timezone.utc))
    finally:
        holder.rollback()
        holder.close()
    assert rival.jobs.list().empty
    rival.dispose()
    store.dispose()



def test_a_store_waits_as_long_as_it_is_told_and_reads_no_configuration(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The store takes its limits from its caller: a configuration in the environment
    changes nothing of a store opened without them (the service's `open_store` reads it)."""
    config = tmp_path / "config.toml"
    config.write_text("[store]\nbusy_seconds = 2.5\n")
    monkeypatch.setenv("COSTSCHED_CONFIG", str(config))
    monkeypatch.setenv("COSTSCHED_STORE_STATEMENT_TIMEOUT_SECONDS", "7")
    url = f"sqlite:///{tmp_path / 'p.sqlite'}"
    plain = PriceStore(url)
    told = PriceStore(url, limits=Limits(busy_seconds=0.25), migrate=False)
    try:
        assert database._BUSY_SECONDS[plain.engine] == DEFAULT_LIMITS.busy_seconds == 10.0
        assert database._BUSY_SECONDS[told.engine] == 0.25
        with told.engine.connect() as conn:
            assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar_one() == 250
    finally:
        plain.dispose()
        told.dispose()
    timeouts = database._postgresql_timeouts({}, Limits(busy_seconds=3,
                                                        statement_timeout_seconds=7))
    assert timeouts["options"] == "-c statement_timeout=7000 -c lock_timeout=3000"


def test_a_store_opened_and_used_loads_no_configuration_or_model(tmp_path: Path) -> None:
    probe = ("import sys\nfrom costsched.store import PriceStore\n"
             "store = PriceStore(sys.argv[1])\nstore.jobs.list()\nstore.dispose()\n"
             "print(' '.join(sorted(m for m in sys.modules if m in {'costsched.config', "
             "'costsched.optimize', 'costsched.policies', 'costsched.jobspec'})))")
    out = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "p.sqlite")],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""

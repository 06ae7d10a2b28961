"""The database under the stores: where a store is shown, and writes that lose a race."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from sqlalchemy import text

from costsched.store import PriceStore, StoreBusy, StoreError, database


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
    monkeypatch.setenv("COSTSCHED_STORE_BUSY_SECONDS", "0.1")
    monkeypatch.setattr(database.time, "sleep", lambda _s: None)
    store, rival = PriceStore(str(tmp_path / "p.sqlite")), None
    holder = store.engine.connect()
    holder.execution_options(sqlite_begin="IMMEDIATE")
    holder.begin()
    try:
        rival = PriceStore(str(tmp_path / "p.sqlite"), migrate=False)
        with pytest.raises(StoreBusy, match="busy: another process holds its write lock"):
            rival.jobs.create("resnet", {}, 10.0, at=datetime.now(timezone.utc))
    finally:
        holder.rollback()
        holder.close()
    assert rival.jobs.list().empty
    rival.dispose()
    store.dispose()


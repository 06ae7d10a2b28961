"""The database under the stores: where a store is shown, and writes that lose a race."""

from __future__ import annotations

import time
from datetime import datetime, timezone
from functools import partial
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



def _backend_pids(engine) -> set[int]:  # noqa: ANN001 - an Engine
    with engine.connect() as conn:
        return {conn.execute(text("SELECT pg_backend_pid()")).scalar_one()}


def test_a_pooled_connection_is_pinged_only_when_its_server_spoke(
    any_store: PriceStore
) -> None:
    """PostgreSQL: a quiet pooled connection is lent without a round trip; one whose server
    ended the session is pinged, found gone and replaced, and the work goes on."""
    engine = any_store.engine
    if engine.dialect.name != "postgresql":
        pytest.skip("the pool's check of PostgreSQL connections")
    pings: list[object] = []

    def ping(dbapi_connection: object) -> bool:
        pings.append(dbapi_connection)
        return type(engine.dialect).do_ping(engine.dialect, dbapi_connection)

    engine.dialect.do_ping = partial(database._ping_if_stirred, ping)
    [pid] = _backend_pids(engine)
    for _ in range(3):
        assert any_store.count() == 0
    assert _backend_pids(engine) == {pid} and pings == []  # the same connection, unpinged

    admin = database.make_engine(str(engine.url.render_as_string(hide_password=False)))
    with admin.connect() as conn:
        assert conn.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid}).scalar_one()
    admin.dispose()
    deadline = time.monotonic() + 10
    while True:  # the server's goodbye reaches the pooled connection's socket
        assert any_store.count() == 0
        if pings or time.monotonic() > deadline:
            break
    assert len(pings) == 1  # pinged once, found gone, replaced
    assert _backend_pids(engine) != {pid}


def test_a_store_goes_on_after_its_server_ended_the_pooled_session(
    any_store: PriceStore
) -> None:
    engine = any_store.engine
    if engine.dialect.name != "postgresql":
        pytest.skip("the pool's check of PostgreSQL connections")
    [pid] = _backend_pids(engine)
    admin = database.make_engine(str(engine.url.render_as_string(hide_password=False)))
    with admin.connect() as conn:
        assert conn.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid}).scalar_one()
    admin.dispose()
    time.sleep(0.5)  # the goodbye arrives
    assert any_store.count() == 0
    assert _backend_pids(engine) != {pid}

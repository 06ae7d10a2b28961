"""A store that is busy, locked, read-only, deleted or made read-only while in use: the
command waits a bounded time, then fails in one line with exit 75 (try again) or 2 (fix it);
what is shown is what was committed; a task whose store went away does not report success."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from typer.testing import CliRunner

from costsched.cli import app
from costsched.store import PriceStore
from tests.reliability.test_store_open import UNPRIVILEGED, open_dir  # noqa: F401 - fixture

ROOT = Path(__file__).resolve().parents[2]
# A bound on a wait that must end, far below what an unbounded one takes; never a speed
# limit: a busy machine may take many times longer than a quiet one around the wait itself.
HANG = 60.0


def python(code: str, *args: str, unprivileged: bool = False,
           env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*(UNPRIVILEGED if unprivileged else []), sys.executable, "-c",
                           textwrap.dedent(code), *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env={**os.environ, **(env or {})})


# --- a read-only store whose WAL holds committed rows ---------------------------------------

KILLED_WRITER = """
    import os, signal, sys
    from datetime import datetime, timezone
    from costsched.store import PriceStore
    store = PriceStore(sys.argv[1])
    with store.engine.connect() as conn:  # the rows below stay in the WAL
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    store.jobs.create("walled", {"spec": {"name": "walled"}}, 10.0,
                      at=datetime.now(timezone.utc))
    os.kill(os.getpid(), signal.SIGKILL)  # killed before it could fold the WAL in
"""
LIST_JOBS = """
    import sys
    from costsched.store import PriceStore
    print(sorted(PriceStore(sys.argv[1]).jobs.list()["name"]))
"""


def killed_writer_store(directory: Path) -> Path:
    path = directory / "store.sqlite"
    done = python(KILLED_WRITER, str(path))
    assert done.returncode == -signal.SIGKILL, done.stderr
    wal = Path(f"{path}-wal")
    assert wal.stat().st_size > 0
    for file in directory.iterdir():
        file.chmod(0o444)
    directory.chmod(0o555)
    return path


def test_a_read_only_store_shows_the_rows_committed_in_its_wal(open_dir: Path) -> None:  # noqa: F811
    path = killed_writer_store(open_dir)
    before = {f.name: f.read_bytes() for f in open_dir.iterdir()}
    shown = python(LIST_JOBS, str(path), unprivileged=True)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == "['walled']"
    assert {f.name: f.read_bytes() for f in open_dir.iterdir()} == before  # nothing written


def test_a_read_only_wal_without_its_shm_fails_clearly(open_dir: Path) -> None:  # noqa: F811
    path = killed_writer_store(open_dir)
    open_dir.chmod(0o755)
    Path(f"{path}-shm").unlink()
    open_dir.chmod(0o555)
    code = "import sys; from costsched.cli import app; app(sys.argv[1:])"
    shown = python(code, "prices", "show", "--db", str(path), unprivileged=True)
    assert shown.returncode == 2, shown.stderr
    assert shown.stderr.strip().splitlines() == [
        f"error: store {path}: read-only, and rows committed in its write-ahead log "
        "store.sqlite-wal need store.sqlite-shm beside it to be read: open it once where its "
        "directory is writable"]


# --- a busy store: bounded, then exit 75 --------------------------------------------------------

HOLD_SQLITE_LOCK = """
    import sqlite3, sys, time
    conn = sqlite3.connect(sys.argv[1], isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    print("locked", flush=True)
    time.sleep(120)
"""


def test_a_sqlite_write_lock_held_elsewhere_is_waited_for_busy_seconds(
        tmp_path: Path, dispa: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "store.sqlite"
    PriceStore(str(path)).dispose()
    monkeypatch.setenv("COSTSCHED_STORE_BUSY_SECONDS", "2")
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(HOLD_SQLITE_LOCK),
                               str(path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        started = time.monotonic()
        result = CliRunner().invoke(app, ["prices", "import", str(dispa / "azure"), "--db",
                                          str(path)])
        took = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
    assert result.exit_code == 75, result.output
    assert result.stderr.strip().splitlines() == [
        f"error: store {path}: busy: another process holds its write lock; try again"]
    # 2 s of waiting after reading the files; the upper bound only tells a bounded wait from
    # the 185 s of old (a busy machine may take long over the files)
    assert 2 <= took < HANG, took


@pytest.fixture()
def pg_store(fresh_url) -> str:  # noqa: ANN001
    url = fresh_url("postgresql")
    PriceStore(url).dispose()
    return url


def locked(url: str, table: str):  # noqa: ANN201
    """A connection of another client holding an exclusive lock on `table`."""
    engine = create_engine(url)
    conn = engine.connect()
    conn.execute(text(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE"))
    return engine, conn


@pytest.mark.parametrize(("setting", "says"), [
    ("COSTSCHED_STORE_STATEMENT_TIMEOUT_SECONDS", "ran past the statement timeout"),
    ("COSTSCHED_STORE_BUSY_SECONDS", "a lock is held by another writer"),
])
def test_a_postgresql_table_locked_elsewhere_ends_in_exit_75(
        pg_store: str, monkeypatch: pytest.MonkeyPatch, setting: str, says: str) -> None:
    monkeypatch.setenv(setting, "1")
    engine, holder = locked(pg_store, "jobs")
    try:
        started = time.monotonic()
        result = CliRunner().invoke(app, ["status", "--db", pg_store])
        took = time.monotonic() - started
    finally:
        holder.rollback()
        holder.close()
        engine.dispose()
    assert result.exit_code == 75, result.output
    assert len(result.stderr.strip().splitlines()) == 1 and says in result.stderr
    assert took < HANG, took


def test_a_postgresql_write_waits_busy_seconds_in_all(pg_store: str, dispa: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_STORE_BUSY_SECONDS", "2")
    engine, holder = locked(pg_store, "prices")
    try:
        started = time.monotonic()
        result = CliRunner().invoke(app, ["prices", "import", str(dispa / "azure"), "--db",
                                          pg_store])
        took = time.monotonic() - started
    finally:
        holder.rollback()
        holder.close()
        engine.dispose()
    assert result.exit_code == 75, result.output
    assert "a lock is held by another writer; try again" in result.stderr
    assert 1 <= took < HANG, took


# --- a store that goes away while a task runs ---------------------------------------------

DAEMON_ONCE = """
    import os, sys
    from pathlib import Path
    from costsched import daemon
    from costsched.cli import app

    store, fault = Path(sys.argv[1]), sys.argv[2]

    def collect(_daemon, _at):
        if fault == "deleted":
            for suffix in ("", "-wal", "-shm"):
                Path(f"{store}{suffix}").unlink(missing_ok=True)
        else:
            store.chmod(0o444)
        return "collected 10 prices"

    daemon.TASK_FUNCTIONS["collect"] = collect
    daemon.TASK_FUNCTIONS["replan"] = lambda _d, _a: "nothing to do"
    daemon.TASK_FUNCTIONS["catalog"] = lambda _d, _a: "up to date"
    app(["daemon", "--once", "--config", sys.argv[3]])
"""


@pytest.mark.parametrize("fault", ["deleted", "read-only"])
def test_a_store_gone_during_daemon_once_fails_the_run(open_dir: Path, fault: str) -> None:  # noqa: F811
    store = open_dir / "store.sqlite"
    config = open_dir / "config.toml"
    config.write_text(f'db = "{store}"\n')
    PriceStore(str(store)).dispose()
    for file in open_dir.iterdir():
        file.chmod(0o666)
    open_dir.chmod(0o777)
    done = python(DAEMON_ONCE, str(store), fault, str(config), unprivileged=True)
    assert done.returncode != 0, done.stdout + done.stderr
    assert "collect: ok" not in done.stdout
    lines = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    reason = "deleted or moved" if fault == "deleted" else "turned read-only"
    assert lines and reason in lines[-1], done.stderr
    assert "Traceback" not in done.stderr


def test_the_daemons_config_file_sets_the_wait(tmp_path: Path) -> None:
    """`daemon --config` opens its store with that file's [store] section (open_store's
    limits), not only the default configuration."""
    from datetime import datetime, timezone

    from costsched.config import StoreConfig
    from costsched.service.stores import open_store
    from costsched.store.database import StoreBusy

    path = tmp_path / "store.sqlite"
    PriceStore(str(path)).dispose()
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(HOLD_SQLITE_LOCK),
                               str(path)], stdout=subprocess.PIPE, text=True)
    store = open_store(str(path), StoreConfig(busy_seconds=0.5))
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        started = time.monotonic()
        with pytest.raises(StoreBusy):
            store.jobs.create("waits", {}, 1.0, at=datetime.now(timezone.utc))
        took = time.monotonic() - started
    finally:
        holder.kill()
        holder.wait()
        store.dispose()
    assert 0.5 <= took < HANG, took

"""Stores that cannot be opened: each way ends the command with one line naming the store
and what to do, exit code 2, no traceback, and never the password of a URL."""

from __future__ import annotations

import os
import shutil
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import make_url
from typer.testing import CliRunner

from costsched.cli import app
from costsched.store import PriceStore, database

ROOT = Path(__file__).resolve().parents[2]
SECRET = "s3cr3t-pw"
DEMO_PRICES = ROOT / "examples" / "demo" / "prices-before.csv"
# Root ignores file permissions; without these capabilities it is held to them.
UNPRIVILEGED = (["setpriv", "--bounding-set=-dac_override,-dac_read_search",
                 "--inh-caps=-dac_override,-dac_read_search"] if os.geteuid() == 0 else [])


def show(db: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["prices", "show", "--db", db], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def assert_one_line(code: int, out: str, err: str, *needles: str, exit_code: int = 2) -> None:
    """One line naming the store, no secret, no traceback; exit 2 (fix it) or 75 (try
    again: the store is there but cannot be used now)."""
    assert code == exit_code, (code, out, err)
    assert len(err.strip().splitlines()) == 1, err
    # (a URL: named as the option that gave it, as the file it names for a path)
    assert err.startswith(("error: store ", "error: --db ")), err
    assert "Traceback" not in out + err and SECRET not in out + err
    for needle in needles:
        assert needle in err, (needle, err)


def test_a_directory(tmp_path: Path) -> None:
    assert_one_line(*show(str(tmp_path)), str(tmp_path), "is a directory")


def test_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "notes.sqlite"
    path.write_text("these are my notes, not a database\n" * 100)
    assert_one_line(*show(str(path)), str(path), "not a SQLite database")
    assert path.read_text().startswith("these are my notes")  # left as it was


def test_a_path_under_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    db = tmp_path / "file" / "prices.sqlite"
    # A command that writes makes a missing store it is told to (one that reads refuses it:
    # no such store).
    result = CliRunner().invoke(app, ["prices", "import", str(DEMO_PRICES), "--db", str(db),
                                      "--new-store"], catch_exceptions=False)
    assert_one_line(result.exit_code, result.stdout, result.stderr.strip(),
                    "file is a file, not a folder")


def test_an_unknown_url_scheme() -> None:
    assert_one_line(*show(f"nosuchdb://me:{SECRET}@host/db"), "unknown database kind 'nosuchdb'",
                    "me:***@host")


def test_a_missing_driver_names_the_package() -> None:
    pytest.importorskip("sqlalchemy.dialects.mysql")
    try:
        import MySQLdb  # noqa: F401
        pytest.skip("mysqlclient is installed here")
    except ImportError:
        pass
    assert_one_line(*show(f"mysql://me:{SECRET}@localhost/db"), "'MySQLdb' is not installed",
                    "pip install mysqlclient")


def test_a_malformed_url() -> None:
    assert_one_line(*show("postgresql://me:pw@host:notaport/db"), "not a database URL")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_connection_refused() -> None:
    url = f"postgresql+psycopg://me:{SECRET}@127.0.0.1:{_free_port()}/db"
    assert_one_line(*show(url), "connection refused", "start it or fix the host and port",
                    exit_code=75)


@pytest.fixture()
def silent_server() -> Iterator[int]:
    """A port that accepts connections and never answers."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield listener.getsockname()[1]
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    listener.close()


def test_a_silent_server_ends_at_the_connect_timeout(silent_server: int) -> None:
    url = f"postgresql+psycopg://me:{SECRET}@127.0.0.1:{silent_server}/db?connect_timeout=2"
    done: list[tuple[int, str, str]] = []
    thread = threading.Thread(target=lambda: done.append(show(url)), daemon=True)
    thread.start()
    thread.join(120)  # a hang guard only: without a timeout it would never end
    assert done, "the command hung on a server that never answers"
    assert_one_line(*done[0], "did not answer in time", "connect_timeout", exit_code=75)


# --- file permissions ---------------------------------------------------------------


@pytest.fixture()
def open_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory the unprivileged command can reach (pytest's own is private to root)."""
    if UNPRIVILEGED and shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: file permissions cannot be tested")
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"costsched-ro-{os.getpid()}-{tmp_path.name}"
    path.mkdir(mode=0o755)
    yield path
    path.chmod(0o755)
    shutil.rmtree(path)


def cli(*args: str) -> subprocess.CompletedProcess:
    code = "import sys; from costsched.cli import app; app(sys.argv[1:])"
    return subprocess.run([*UNPRIVILEGED, sys.executable, "-c", code, *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


def read_only_store(directory: Path, dispa: Path, *, lock_dir: bool) -> Path:
    path = directory / "prices.sqlite"
    store = PriceStore(str(path))
    from price_collectors import recorded

    store.ingest(recorded.read_paths([dispa / "azure"]).observations())
    store.dispose()
    path.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    if lock_dir:
        directory.chmod(0o555)
    return path


@pytest.mark.parametrize("lock_dir", [False, True], ids=["file", "file-and-directory"])
def test_a_read_only_store_reads_and_refuses_writes(open_dir: Path, dispa: Path,
                                                    lock_dir: bool) -> None:
    path = read_only_store(open_dir, dispa, lock_dir=lock_dir)
    before = path.read_bytes()
    shown = cli("prices", "show", "--db", str(path), "--at", "2020-03-01", "--json")
    assert shown.returncode == 0, shown.stderr
    assert '"cloud": "azure"' in shown.stdout
    written = cli("prices", "import", str(dispa / "aws" / "cost" / "eu-central-1"), "--db",
                  str(path))
    assert written.returncode == 2, written.stderr
    assert written.stderr.strip().splitlines() == [
        f"error: store {path}: read-only: writing needs write permission on the file and its"
        " directory (reading works)"]
    assert path.read_bytes() == before


def test_an_unwritable_directory(open_dir: Path) -> None:
    open_dir.chmod(0o555)
    result = cli("prices", "import", str(DEMO_PRICES), "--db", str(open_dir / "prices.sqlite"),
                 "--new-store")
    assert result.returncode == 2, result.stderr
    assert result.stderr.strip().splitlines() == [
        f"error: store {open_dir / 'prices.sqlite'}: cannot be opened: its directory must"
        " exist and be writable, and the path must be a file"]


# --- PostgreSQL refusing ---------------------------------------------------------------


def test_postgresql_wrong_password(pg_url: str) -> None:
    url = make_url(pg_url).set(password=SECRET).render_as_string(hide_password=False)
    assert_one_line(*show(url), "authentication failed", "***@")


def test_postgresql_missing_database(pg_url: str) -> None:
    url = make_url(pg_url).set(database="no_such_database_here")
    assert_one_line(*show(url.render_as_string(hide_password=False)),
                    "the database does not exist", "createdb")


def _settings(url: str) -> tuple[str, str]:
    store = PriceStore(url, migrate=False)
    with store.engine.connect() as conn:
        statement = conn.exec_driver_sql("SHOW statement_timeout").scalar_one()
        connect = conn.connection.dbapi_connection.info.get_parameters()["connect_timeout"]
    store.dispose()
    return statement, connect


def test_postgresql_timeouts_default_and_from_the_url(pg_url: str) -> None:
    assert _settings(pg_url) == ("1min",  # [store] statement_timeout_seconds: 60
                                 str(database.CONNECT_TIMEOUT_S))
    own = make_url(pg_url).update_query_dict({"options": "-c statement_timeout=1500",
                                              "connect_timeout": "4"})
    assert _settings(own.render_as_string(hide_password=False)) == ("1500ms", "4")

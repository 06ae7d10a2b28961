"""The database under every store: where it is, its engine, its schema revision, its times.

The price store and the job store share one database and one Alembic history
(`revisions/`). Times are stored as whole UTC epoch seconds.
"""

from __future__ import annotations

import math
import os
import random
import sqlite3
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from functools import cache, partial
from pathlib import Path
from typing import TypeVar

import platformdirs
from sqlalchemy import (
    URL,
    Connection,
    Engine,
    Table,
    create_engine,
    event,
    insert,
    inspect,
    make_url,
    select,
    text,
)
from sqlalchemy.engine import ExceptionContext, Result
from sqlalchemy.exc import (
    ArgumentError,
    DBAPIError,
    NoSuchModuleError,
    OperationalError,
    SQLAlchemyError,
)

from costsched.frames import to_epoch_seconds  # noqa: F401 - the store's name for it
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.model import InvalidInput, utc
from costsched.redact import redact_url
from costsched.store_limits import DEFAULT_LIMITS, StoreLimits
from costsched.store_revision import VERSION_TABLE, newest_revision

ENV_DB = "COSTSCHED_DB"
_SCRIPTS = "costsched.store:revisions"
CONNECT_TIMEOUT_S = 10  # PostgreSQL: unless the URL sets connect_timeout
# How long a busy store is waited for and a PostgreSQL statement may run are the caller's
# (`costsched.store_limits`: the configuration's [store] section, else the defaults).
WRITE_ATTEMPTS = 6  # a write that loses a race (lock, deadlock, serialization) runs again
_UPGRADE_LOCK = 0x636F737473636864  # PostgreSQL advisory lock key around schema upgrades
# The driver each SQLAlchemy dialect imports, and the package that provides it.
_DRIVER_PACKAGES = {"MySQLdb": "mysqlclient", "pymysql": "PyMySQL",
                    "psycopg": "'costsched[postgres]'",  # psycopg with its own libpq
                    "psycopg2": "psycopg2-binary", "asyncpg": "asyncpg", "pyodbc": "pyodbc",
                    "oracledb": "oracledb", "mariadb": "mariadb", "pg8000": "pg8000"}

T = TypeVar("T")


class StoreError(InvalidInput):
    """The store cannot be opened or used: what failed, where, and what to do."""


class StoreUnavailable(StoreError):
    """The store cannot be used now but may be soon (the server is down or unreachable,
    did not answer in time, is out of resources, or another writer holds a lock): try
    again later. The CLI exits with EX_TEMPFAIL (75) for it, so that cron can retry."""


class StoreBusy(StoreUnavailable):
    """A write lost a race with another writer (a lock, a deadlock, a serialization
    failure): running it again may succeed."""


def default_url(make_folder: bool = True) -> str:
    """COSTSCHED_DB if set, else a SQLite file in the platform's user data directory."""
    if os.environ.get(ENV_DB):
        return resolve_url(os.environ[ENV_DB], make_folder)
    data_dir = Path(platformdirs.user_data_dir("costsched"))
    return resolve_url(str(data_dir / "prices.sqlite"), make_folder)


def resolve_url(db: str, make_folder: bool = True) -> str:
    """A SQLAlchemy URL as is; a plain path becomes a SQLite file URL (its directory is
    created, unless not `make_folder`: only named)."""
    if "://" in db:
        return db
    path = Path(db).expanduser().resolve()
    if path.is_dir():
        raise StoreError(f"store {path}: is a directory; expected a SQLite file path "
                         "(e.g. prices.sqlite) or a SQLAlchemy URL")
    if not make_folder:
        return f"sqlite:///{path}"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        # A file where a folder of the path should be: said so (mkdir says "File exists").
        file = next((p for p in path.parents if p.exists()), None)
        if file is not None and not file.is_dir():
            raise StoreError(f"store {path}: {file} is a file, not a folder; choose a "
                             "writable location") from None
        raise StoreError(f"store {path}: cannot create its directory {path.parent} "
                         f"({exc.strerror or exc}); choose a writable location") from None
    return f"sqlite:///{path}"


def describe(url: str) -> str:
    """Where a store is, for messages: a SQLite file's path, else its URL with the password
    masked."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError):
        return redact_url(url)
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        return parsed.database
    return redact_url(url)


def make_engine(url: str, limits: StoreLimits | None = None) -> Engine:
    """An engine for `url` whose database errors are one-line StoreErrors.

    SQLite: WAL, a busy timeout, foreign keys, and transactions begun by SQLAlchemy (so a
    write can take the lock up front: `write`), each checking first that the file is still
    the one opened. PostgreSQL: connect, lock and statement timeouts unless the URL sets
    them, and connections checked before use (a restarted server). `limits`: how long to
    wait (the configuration's [store] section; default: `store_limits.DEFAULT_LIMITS`)."""
    where = describe(url)
    limits = limits if limits is not None else DEFAULT_LIMITS
    watch: _FileWatch | None = None
    try:
        parsed = make_url(url)
        backend = parsed.get_backend_name()
        kwargs: dict = {}
        if backend == "sqlite":
            kwargs["connect_args"] = {"timeout": limits.busy_seconds}
            opened = _read_only_sqlite(parsed)
            if parsed.database not in (None, "", ":memory:") and \
                    not str(parsed.database).startswith("file:"):
                watch = _FileWatch(Path(str(parsed.database)), writable=opened is parsed)
            parsed = opened
        else:
            kwargs["pool_pre_ping"] = True
        if backend == "postgresql" and parsed.get_driver_name() in ("psycopg", "psycopg2"):
            kwargs["connect_args"] = _postgresql_timeouts(parsed.query, limits)
        watched = _watched_connect(parsed, limits, where) \
            if backend == "postgresql" and parsed.get_driver_name() == "psycopg" else None
        engine = create_engine(parsed, **kwargs)
    except StoreError:
        raise
    except (ArgumentError, ValueError, ImportError) as exc:
        raise StoreError(f"store {where}: {_refused(url, exc)}") from None
    _BUSY_SECONDS[engine] = limits.busy_seconds
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", partial(_sqlite_pragmas, limits.busy_seconds))
        event.listen(engine, "begin", partial(_sqlite_begin, watch))
    if engine.dialect.name == "postgresql":
        from costsched.store.schema import for_postgresql

        for_postgresql()
    if watched is not None:
        event.listen(engine, "do_connect", watched)
    event.listen(engine, "handle_error", partial(_translate, where))
    return engine


def url_refused(url: str) -> str | None:
    """Why the URL `url` names no database costsched can open (its kind unknown, not a
    URL, its driver not installed), told without connecting, for its caller to say where
    the URL came from; None when it can be tried (a SQLite path: always)."""
    if "://" not in url:
        return None
    try:
        create_engine(make_url(url)).dispose()  # connects to nothing
    except (ArgumentError, ValueError, ImportError) as exc:
        return _refused(url, exc)
    return None


def _refused(url: str, exc: Exception) -> str:
    """What the error making an engine for `url` raised means, with the fix."""
    meant = _meant(url)
    if isinstance(exc, NoSuchModuleError):
        kinds = "sqlite, postgresql+psycopg or another SQLAlchemy dialect"
        scheme = url.split("://", 1)[0]
        return (f"unknown database kind {scheme!r}; did you mean {meant}? (expected {kinds})"
                if meant else f"unknown database kind {scheme!r}; expected {kinds}")
    if isinstance(exc, ImportError):
        module = (exc.name or "").split(".")[0]
        package = _DRIVER_PACKAGES.get(module, module or "its driver")
        if module == "psycopg2" and meant:
            return (f"its database driver {module!r} is not installed; did you mean {meant}? "
                    f"(the driver costsched[postgres] installs; else pip install {package})")
        return (f"its database driver {module!r} is not installed; install it "
                f"(pip install {package})")
    return ("not a database URL; expected a SQLite file path or a URL like "
            "postgresql+psycopg://user:password@host/db")


# How PostgreSQL URLs are written elsewhere (libpq, Heroku: postgres://; SQLAlchemy's
# default driver, psycopg2), for the psycopg driver costsched[postgres] installs.
_POSTGRESQL_SCHEMES = ("postgres", "postgresql", "postgresql+psycopg2", "postgres+psycopg",
                       "postgres+psycopg2")


def _meant(url: str) -> str:
    """The URL (its password masked) a PostgreSQL URL written with a scheme or driver
    costsched cannot open here means for the psycopg driver; '' for any other."""
    scheme, _, rest = url.partition("://")
    return (redact_url("postgresql+psycopg://" + rest)
            if scheme.lower() in _POSTGRESQL_SCHEMES else "")


_BUSY_SECONDS: weakref.WeakKeyDictionary[Engine, float] = weakref.WeakKeyDictionary()


class _FileWatch:
    """The SQLite file a store opened: each transaction checks first that it is still there,
    still the same file, and (when it was opened for writing) still writable, so that a
    store deleted, replaced or made read-only while in use fails the work instead of writing
    into a file nobody will read."""

    def __init__(self, path: Path, *, writable: bool) -> None:
        self.path = path
        self.writable = writable
        self.identity: tuple[int, int] | None = None

    def check(self) -> None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            if self.identity is None:
                return  # not created yet: the first connection creates it
            raise StoreError(f"store {self.path}: the file was deleted or moved while in use; "
                             "work since then is not recorded: restore it or run again") from None
        identity = (st.st_dev, st.st_ino)
        if self.identity is None:  # as first seen: a file read-only from the start may be read
            self.identity = identity
            self.writable = self.writable and os.access(self.path, os.W_OK)
        elif identity != self.identity:
            raise StoreError(f"store {self.path}: the file was replaced while in use; work "
                             "since then is not recorded: run again")
        if self.writable and not os.access(self.path, os.W_OK):
            raise StoreError(f"store {self.path}: the file turned read-only while in use; "
                             "work since then is not recorded: restore write permission")


def _read_only_sqlite(url: URL) -> URL:
    """A SQLite file that we may not write, in a directory we may not write, opened
    read-only. Its write-ahead log is read through the -shm file beside it (rows committed
    there are not in the file yet); without a log it is opened as immutable. A log without
    its -shm cannot be read here: a StoreError says so rather than show stale rows. Reads
    work; writes fail as read-only."""
    path = url.database
    if not path or path.startswith("file:") or path == ":memory:":
        return url
    file = Path(path)
    if not file.is_file() or os.access(file, os.W_OK) or os.access(file.parent, os.W_OK):
        return url
    wal, shm = Path(f"{file}-wal"), Path(f"{file}-shm")
    if wal.is_file() and wal.stat().st_size > 0:
        if not shm.is_file():
            raise StoreError(f"store {file}: read-only, and rows committed in its write-ahead "
                             f"log {wal.name} need {shm.name} beside it to be read: open it "
                             "once where its directory is writable")
        mode = "mode=ro"
    else:
        mode = "mode=ro&immutable=1"
    return url.set(database=f"file:{file}?{mode}").update_query_dict({"uri": "true"})


def _options(query: Mapping[str, str | tuple[str, ...]]) -> str:
    """The libpq `options` a URL's query sets ("" when none)."""
    options = query.get("options", "")
    return " ".join(options) if isinstance(options, tuple) else options


def _watched_connect(url: URL, limits: StoreLimits, where: str) -> Callable[..., object]:
    """A do_connect listener making psycopg 3 connections that stop waiting for a server
    that does not answer a statement within its statement timeout and a grace
    (`watchdog`): the server's own timeout cannot end a wait for a server that has stopped
    answering."""
    from costsched.store import watchdog

    if not watchdog.SUPPORTED:
        raise StoreError(f"store {where}: psycopg {watchdog.psycopg.__version__} is too old; "
                         "3.3.6 or newer is needed (pip install -U 'psycopg[binary]>=3.3.6')")
    within, why = watchdog.deadline(_options(url.query), limits.statement_timeout_seconds)

    def connect(_dialect, _record, cargs: tuple, cparams: dict) -> object:  # noqa: ANN001
        return watchdog.connect(within, why, *cargs, **cparams)

    return connect


def _postgresql_timeouts(query: Mapping[str, str | tuple[str, ...]],
                         limits: StoreLimits) -> dict:
    """Connect arguments adding the timeouts the URL does not set itself: connecting, a
    statement (`limits.statement_timeout_seconds`), waiting for a lock (`busy_seconds`)."""
    args: dict = {}
    if "connect_timeout" not in query:
        args["connect_timeout"] = CONNECT_TIMEOUT_S
    options = _options(query)
    if "statement_timeout" not in options:
        options += f" -c statement_timeout={round(limits.statement_timeout_seconds * 1000)}"
    if "lock_timeout" not in options:
        options += f" -c lock_timeout={round(limits.busy_seconds * 1000)}"
    args["options"] = options.strip()
    return args


def _sqlite_pragmas(busy_seconds: float, dbapi_connection, _record) -> None:  # noqa: ANN001
    # SQLAlchemy, not the driver, begins transactions (`_sqlite_begin`).
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    _enter_wal(cursor, busy_seconds)
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA cache_size=-65536")  # 64 MiB of pages instead of 2 MiB
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _enter_wal(cursor: sqlite3.Cursor, busy_seconds: float) -> None:
    """Switch a new file to WAL, waiting up to `busy_seconds` for the processes opening it
    too: SQLite answers "locked" at once, without its busy wait, to a connection that wants
    the switch while another holds the file's shared lock (a no-op once it is WAL)."""
    deadline = time.monotonic() + busy_seconds
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(random.uniform(0.005, 0.05))


def _sqlite_begin(watch: _FileWatch | None, conn: Connection) -> None:
    # A write transaction takes the write lock at BEGIN (waiting up to the busy timeout):
    # one that read first and wrote later could fail at once when another writer got in.
    if watch is not None:
        watch.check()
    mode = conn.get_execution_options().get("sqlite_begin", "DEFERRED")
    conn.exec_driver_sql(f"BEGIN {mode}")


# --- database errors as one line -------------------------------------------------------------

_SQLITE_MESSAGES = (  # (driver message contains, error type, what it means and what to do)
    ("locked", StoreBusy, "busy: another process holds its write lock; try again"),
    ("readonly", StoreError, "read-only: writing needs write permission on the file and "
                             "its directory (reading works)"),
    ("unable to open", StoreError, "cannot be opened: its directory must exist and be "
                                   "writable, and the path must be a file"),
    ("not a database", StoreError, "not a SQLite database; give the path of a store or "
                                   "of a new file"),
    ("malformed", StoreError, "damaged (database disk image is malformed); restore it "
                              "from a copy or an export"),
    ("disk is full", StoreError, "cannot be written: the disk is full"),
    ("disk i/o", StoreError, "cannot be read or written: disk I/O error"),
)
_PG_STATES = {  # SQLSTATE (or its class) -> (error type, what it means and what to do)
    "40001": (StoreBusy, "a write conflicted with another writer (serialization failure); "
                         "try again"),
    "40P01": (StoreBusy, "a write deadlocked with another writer; try again"),
    "55P03": (StoreBusy, "a lock is held by another writer; try again"),
    "57014": (StoreUnavailable, "a statement ran past the statement timeout and was cancelled; "
                          "raise statement_timeout (options=-c statement_timeout=ms in the "
                          "URL) or try when the server is less busy"),
    "28P01": (StoreError, "authentication failed: check the user and password in the URL"),
    "28000": (StoreError, "authentication failed: check the user and password in the URL"),
    "3D000": (StoreError, "the database does not exist: create it (createdb) or fix the "
                          "URL"),
    "42501": (StoreError, "permission denied: grant the user access to the database"),
    "53": (StoreUnavailable, "the server is out of resources (disk, memory or connections)"),
    "57P": (StoreUnavailable, "the server shut down or ended the connection; try again when it "
                        "is back"),
    "08": (StoreUnavailable, "the connection to the server failed; try again when it is back"),
}


def _translate(where: str, context: ExceptionContext) -> BaseException | None:
    """A database error the user can act on as a one-line StoreError (handle_error event);
    None leaves others (constraint violations, programming errors) as they are."""
    if context.is_pre_ping:  # the pool reconnects by itself
        return None
    error = context.original_exception
    if isinstance(error, DBAPIError):
        error = error.orig
    failed_to_connect = (isinstance(context.sqlalchemy_exception, OperationalError)
                         or context.is_disconnect)
    return _store_error(where, error, failed_to_connect)


def _store_error(where: str, error: BaseException, failed_to_connect: bool
                 ) -> StoreError | None:
    """The StoreError a driver's error means, or None (a bug, or a constraint violated)."""
    message = _first_line(error)
    if meaning := getattr(error, "costsched_meaning", None):  # `watchdog.Unanswered`
        return StoreUnavailable(f"store {where}: {meaning}")
    state = getattr(error, "sqlstate", None) or ""
    for prefix in (state, state[:3], state[:2]):
        if prefix and prefix in _PG_STATES:
            kind, meaning = _PG_STATES[prefix]
            return kind(f"store {where}: {meaning}")
    # PEP 249's classes of errors in a statement or its values: a bug, or handled above.
    if {c.__name__ for c in type(error).__mro__} & {"IntegrityError", "ProgrammingError",
                                                    "DataError", "NotSupportedError"}:
        return None
    if isinstance(error, sqlite3.Error):
        lowered = message.lower()
        for needle, kind, meaning in _SQLITE_MESSAGES:
            if needle in lowered:
                return kind(f"store {where}: {meaning}")
        return StoreError(f"store {where}: {message}")
    if failed_to_connect:
        meaning, transient = _connect_failure(message)
        kind = StoreUnavailable if transient else StoreError
        return kind(f"store {where}: {meaning}")
    return None


def _connect_failure(message: str) -> tuple[str, bool]:
    """What a failed connection means and what to do; and whether it may pass by itself."""
    lowered = message.lower()
    if "connection refused" in lowered:
        return ("no database server answers there (connection refused): start it or fix "
                "the host and port", True)
    if "timeout" in lowered or "timed out" in lowered:
        return ("the server did not answer in time; check it, or raise connect_timeout "
                "(seconds) in the URL", True)
    if "password authentication failed" in lowered:
        return "authentication failed: check the user and password in the URL", False
    if "database" in lowered and "does not exist" in lowered:
        return "the database does not exist: create it (createdb) or fix the URL", False
    if "could not translate host name" in lowered or "name or service not known" in lowered:
        return "unknown host: fix the host name in the URL", False
    if "closed" in lowered or "terminat" in lowered or "lost" in lowered:
        return "the connection to the server was lost; try again when it is back", True
    return message, False


def _first_line(error: BaseException) -> str:
    """The driver's message, one line, without libpq's 'connection to server ... failed:'."""
    text = " ".join(str(error).split())
    if " failed: " in text and text.startswith(("connection failed", "connection to server")):
        text = text.rsplit(" failed: ", 1)[1]
    return text.removeprefix("FATAL: ").strip() or type(error).__name__


# --- write transactions ---------------------------------------------------------------------


INSERT_CHUNK = 5_000  # rows per INSERT of `insert_new`


def insert_new(conn: Connection, table: Table, rows: pd.DataFrame, key: Sequence[str],
               **constant: object) -> int:
    """Insert the `rows` whose `key` columns no stored row of the same sources has (rows
    have a `source` column; the key includes it), with the `constant` columns added. The
    number inserted. Stored key values take the rows' dtypes (SQLite gives booleans as
    0/1)."""
    rows = rows.drop_duplicates(list(key))
    stored = pd.DataFrame(
        conn.execute(select(*(table.c[c] for c in key)).where(
            table.c.source.in_(sorted(set(rows["source"]))))).fetchall(),
        columns=list(key))
    if not stored.empty:
        stored = stored.astype(rows[list(key)].dtypes.to_dict())
        merged = rows.merge(stored, on=list(key), how="left", indicator=True)
        rows = rows[(merged["_merge"] == "left_only").to_numpy()]
    records = rows.assign(**constant).to_dict("records")
    for first in range(0, len(records), INSERT_CHUNK):
        conn.execute(insert(table), records[first:first + INSERT_CHUNK])
    return len(records)


def write(engine: Engine, work: Callable[[Connection], T], *,
          attempts: int = WRITE_ATTEMPTS) -> T:
    """`work(conn)` in one write transaction, run again with backoff when it loses a race
    (StoreBusy: a lock, a deadlock, a serialization failure), for at most the store's busy
    seconds in all (and `attempts` times); the last loss is raised. On SQLite the
    transaction takes the write lock at its start, waiting only for the time left."""
    busy_seconds = _BUSY_SECONDS.get(engine, 10.0)
    deadline = time.monotonic() + busy_seconds
    for attempt in range(attempts):
        left = deadline - time.monotonic()
        try:
            with engine.connect() as conn:
                if engine.dialect.name == "sqlite":
                    _sqlite_busy_timeout(conn, max(left, 0.0))
                    conn.execution_options(sqlite_begin="IMMEDIATE")
                try:
                    with conn.begin():
                        return _translated(engine, work, conn)
                finally:
                    if engine.dialect.name == "sqlite" and not conn.invalidated:
                        _sqlite_busy_timeout(conn, busy_seconds)
        except StoreBusy:
            left = deadline - time.monotonic()
            if attempt == attempts - 1 or left <= 0:
                raise
            time.sleep(min(0.05 * 2 ** attempt, 2.0, left) * (0.5 + random.random()))
    raise AssertionError("unreachable")


def _translated(engine: Engine, work: Callable[[Connection], T], conn: Connection) -> T:
    """`work(conn)`, with the errors of the driver's own cursors (bulk copies) translated as
    SQLAlchemy's are by `_translate`."""
    try:
        return work(conn)
    except Exception as exc:
        if isinstance(exc, (InvalidInput, SQLAlchemyError)) or not _is_driver_error(exc):
            raise
        translated = _store_error(describe(engine.url.render_as_string(hide_password=False)),
                                  exc, failed_to_connect=False)
        if translated is None:
            raise
        raise translated from None


def _is_driver_error(error: BaseException) -> bool:
    return any(c.__name__ == "Error" and c.__module__.split(".")[0] in ("psycopg", "psycopg2",
                                                                       "sqlite3")
               for c in type(error).__mro__)


def _sqlite_busy_timeout(conn: Connection, seconds: float) -> None:
    """How long this SQLite connection waits for another writer's lock (outside any
    transaction: on the driver's connection)."""
    conn.connection.dbapi_connection.execute(f"PRAGMA busy_timeout = {round(seconds * 1000)}")


# --- schema revisions ---------------------------------------------------------------------


def _config():  # noqa: ANN202 - alembic.config.Config, imported lazily
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", _SCRIPTS)
    return cfg


def head() -> str:
    """The newest schema revision this code knows."""
    from alembic.script import ScriptDirectory

    return ScriptDirectory.from_config(_config()).get_current_head()


def _at_head(engine: Engine) -> bool:
    """Whether the database's schema is at the newest revision, read in one query (the
    version table holding that one revision); False when it cannot be told so."""
    newest = newest_revision()
    if newest is None:
        return False
    with engine.connect() as conn:
        if not inspect(conn).has_table(VERSION_TABLE):  # a new store
            return False
        rows = conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")).all()
    return [tuple(r) for r in rows] == [(newest,)]


def revision(engine: Engine) -> str | None:
    """The schema revision of the database (None for an empty one)."""
    return _revision_of(engine)


def _revision_of(engine: Engine) -> str | None:
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to `revision` in one transaction (a no-op when it is there).

    Safe when several processes open a new store at once: the upgrade runs under the
    database's write lock (SQLite) or an advisory lock (PostgreSQL), and the revision is
    read again under it."""
    if revision == "head" and _at_head(engine):  # every command's case: Alembic not loaded
        return
    from costsched.store.new_store import made_new

    if revision == "head" and write(engine, partial(made_new, lock_key=_UPGRADE_LOCK)):
        return  # a new store: neither
    from alembic import command
    from alembic.runtime.migration import MigrationContext

    cfg = _config()
    target = head() if revision == "head" else revision
    if _revision_of(engine) == target:  # the common case: no lock taken
        return

    def migrate(conn: Connection) -> None:
        if conn.dialect.name == "postgresql":
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _UPGRADE_LOCK})
        if MigrationContext.configure(conn).get_current_revision() == target:
            return
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, target)

    write(engine, migrate)


# --- times --------------------------------------------------------------------------------

_NONE: Mapping[str, str] = {}


@cache
def utc_times() -> pd.DatetimeTZDtype:
    """How pandas holds stored times: UTC, in microseconds (as `pd.to_datetime(unit="s",
    utc=True)` gives them)."""
    return pd.DatetimeTZDtype(unit="us", tz="UTC")


def from_epoch_seconds(seconds: pd.Series | np.ndarray | Sequence[int]) -> pd.Series:
    """Stored times (UTC epoch seconds) as a Series of UTC times (`utc_times`), keeping a
    Series' index and name: numpy reads the numbers as seconds, none is parsed alone."""
    if isinstance(seconds, np.ndarray) and seconds.dtype.kind in "iu":
        return _as_times(seconds.astype("int64", copy=False))
    whole = pd.Series(seconds, dtype="int64")
    return _as_times(whole.to_numpy(), index=whole.index, name=whole.name)


def _as_times(seconds: np.ndarray, **series: object) -> pd.Series:
    """Whole seconds (NaN: NaT) as a Series of `utc_times`."""
    return pd.Series(seconds.astype("datetime64[s]").astype("datetime64[us]"),
                     dtype=utc_times(), **series)


def rows_frame(result: Result, columns: Sequence[str], *, times: Mapping[str, str] = _NONE,
               types: Mapping[str, str] = _NONE) -> pd.DataFrame:
    """A query's rows as a frame (`frame_of_rows`)."""
    return frame_of_rows(list(result.keys()), result.all(), columns, times=times, types=types)


def frame_of_rows(keys: Sequence[str], rows: Sequence[Sequence], columns: Sequence[str], *,
                  times: Mapping[str, str] = _NONE, types: Mapping[str, str] = _NONE
                  ) -> pd.DataFrame:
    """Stored rows (their columns named `keys`) as a frame built in one go, its `columns` in
    their order: each stored time of `times` (the stored column -> the frame's) as UTC
    times (None: NaT), each column of `types` cast to its type (as `astype` does), the
    others as read (their types inferred as a frame of the rows infers them; no rows:
    objects)."""
    values = list(zip(*rows, strict=True)) if rows else [()] * len(keys)
    named: dict[str, object] = {}
    for key, column in zip(keys, values, strict=True):
        if key in times:
            named[times[key]] = _stored_times(column)
        elif key in types:
            named[key] = np.asarray(column, dtype=types[key])
        else:
            named[key] = list(column) if column else np.array([], dtype=object)
    return pd.DataFrame({c: named[c] for c in columns})


def _stored_times(seconds: Sequence[int | None]) -> pd.Series:
    """Stored times (UTC epoch seconds, None where there is none: NaT) as UTC times."""
    if any(s is None for s in seconds):  # NaN reads as NaT
        return _as_times(np.asarray(seconds, dtype="float64"))
    return _as_times(np.asarray(seconds, dtype="int64"))


def from_epoch_second(second: int) -> datetime:
    """One stored time (UTC epoch seconds) as an aware datetime, without pandas."""
    return datetime.fromtimestamp(int(second), timezone.utc)


def epoch_second(at: datetime, what: str = "time") -> int:
    """One time as UTC epoch seconds (naive times are taken as UTC)."""
    if not isinstance(at, datetime) or at != at:  # NaT is never equal to itself
        raise InvalidInput(f"{what} {at!r}: expected a datetime")
    return math.floor(utc(at).timestamp())


def dialect_insert(dialect: str):  # noqa: ANN201 - the dialect's Insert construct
    """The INSERT of `dialect` that takes ON CONFLICT clauses (SQLite's or PostgreSQL's),
    imported only when a store of that dialect writes: naming PostgreSQL's would load its
    dialect in every process."""
    if dialect == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as upsert
    else:
        from sqlalchemy.dialects.sqlite import insert as upsert
    return upsert

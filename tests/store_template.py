"""New stores of the suite's processes start as a copy of one store migrated once per process
(SQLite) or as the replay of the first one's migration (PostgreSQL), instead of running the
schema's revisions each time (a tenth of a second of CPU each, and the suite opens thousands
of new stores).

`install()` wraps `costsched.store.database.upgrade`: asked for the newest revision of a
new SQLite store, it first fills it with a copy of the template (made by the same code:
`PriceStore` on a new file, migrated from scratch); the real upgrade then finds the store at
the newest revision and returns. A new store is a file that does not exist yet (nothing has
opened it: the copy takes its place atomically, and only if no file got there meanwhile, so
a store another thread or process makes is left to them), or an in-memory store that holds
nothing (filled through SQLite's backup API). Every copy gets a scope of its own, as
revision 0016 gives each new store a random one.

A new PostgreSQL store of the test server (COSTSCHED_TEST_PG_URL: a schema of its own, with
no table yet) gets the statements that migrating the first one sent, replayed in one
transaction (what they wrote, the reads left out: every new schema answers them alike), and
a scope of its own.

Stores of other processes (the CLI run as a subprocess, daemons) migrate as before, and so
do the stores of the tests of the schema itself (FROM_SCRATCH: the running test's path
starts with one of these; tests/conftest.py sets `state.from_scratch`)."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import sqlite3
import threading
import uuid
from collections.abc import Callable
from pathlib import Path

from sqlalchemy import Connection, Engine, event, make_url

from costsched.store import database
from costsched.store.scope import SCOPE_BYTES

# Tests whose stores migrate from scratch: the store's own tests (its revisions and schema).
FROM_SCRATCH = ("tests/costsched/store/",)
_NEW_SCOPE = "UPDATE store_identity SET scope = ? WHERE id = 1"


class _State:
    from_scratch = False  # the running test's stores migrate from scratch
    template: Path | None = None
    # (statement, parameters) migrating a new PostgreSQL store sent, but its reads
    pg_script: list[tuple[str, object]] | None = None


state = _State()
_lock = threading.Lock()


def install(root: Path) -> None:
    """Have new stores of this process copy a template kept under `root` (SQLite) or replay
    the first one's migration (PostgreSQL)."""
    migrate = database.upgrade

    def upgrade(engine: Engine, revision: str = "head") -> None:
        if revision == "head" and not state.from_scratch:
            if engine.dialect.name == "sqlite":
                name = engine.url.database
                if name in (None, "", ":memory:"):
                    _fill_memory(_template(root, migrate), engine)
                elif _new_file(name):
                    _place_copy(_template(root, migrate), Path(name))
            elif _test_server_schema(engine) and _new_schema(engine):
                if state.pg_script is None:
                    with _lock:
                        if state.pg_script is None:
                            state.pg_script = _recorded(engine, migrate) or None
                else:
                    _replay(engine, state.pg_script)
        migrate(engine, revision)

    upgrade.__doc__ = migrate.__doc__
    database.upgrade = upgrade


def _new_file(name: str) -> bool:
    """Whether nothing is at the SQLite path `name` yet, in a folder that may be written."""
    if name.startswith("file:"):
        return False
    path = Path(name)
    return (not os.path.lexists(path) and not os.path.lexists(f"{path}-wal")
            and path.parent.is_dir() and os.access(path.parent, os.W_OK))


def _template(root: Path, migrate: Callable[[Engine], None]) -> Path:
    """The template of this process: a store migrated from scratch, its write-ahead log
    folded into the file (a rollback journal from then on: a copy is one file)."""
    with _lock:
        if state.template is None:
            from costsched.store import PriceStore

            made = root / "migrated-store.sqlite"
            store = PriceStore(str(made), migrate=False)
            try:
                migrate(store.engine)
            finally:
                store.dispose()
            conn = sqlite3.connect(made)
            try:
                conn.execute("PRAGMA journal_mode=DELETE")
            finally:
                conn.close()
            assert not Path(f"{made}-wal").exists(), made
            state.template = made
        return state.template


def _place_copy(template: Path, path: Path) -> None:
    """A copy of `template` with a new scope at `path`, unless a file got there first."""
    partial = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.template")
    try:
        shutil.copyfile(template, partial)
        conn = sqlite3.connect(partial)
        try:  # a file of our own until it takes its place: no journal, nothing synced
            conn.execute("PRAGMA journal_mode=OFF")
            conn.execute("PRAGMA synchronous=OFF")
            with conn:
                conn.execute(_NEW_SCOPE, (secrets.token_hex(SCOPE_BYTES),))
            conn.execute("PRAGMA journal_mode=WAL")  # as a store is kept: none to switch
        finally:
            conn.close()
        os.link(partial, path)
    except OSError:
        pass  # made meanwhile (the upgrade takes it as it is), or refused (it says why)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(partial)


def _fill_memory(template: Path, engine: Engine) -> None:
    """The template, with a new scope, in the in-memory store of `engine` if it holds
    nothing (its pool keeps the connection, and with it the database, per thread)."""
    pooled = engine.raw_connection()
    try:
        conn = pooled.driver_connection
        if conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
            return
        source = sqlite3.connect(template)
        try:
            source.backup(conn)
        finally:
            source.close()
        conn.execute(_NEW_SCOPE, (secrets.token_hex(SCOPE_BYTES),))
        if conn.in_transaction:
            conn.commit()
    finally:
        pooled.close()


def _test_server_schema(engine: Engine) -> bool:
    """Whether `engine` is the test server's (COSTSCHED_TEST_PG_URL), in a schema of its own
    (a search_path in its options): not a proxy or another server a test stands up."""
    server = os.environ.get("COSTSCHED_TEST_PG_URL")
    if engine.dialect.name != "postgresql" or not server:
        return False
    url, test = engine.url, make_url(server)
    if (url.host, url.port, url.database, url.username) != (
            test.host, test.port, test.database, test.username):
        return False
    return "search_path" in str(url.query.get("options", ""))


_NO_TABLES = ("SELECT current_schema() IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pg_class c "
              "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema())")


def _new_schema(engine: Engine) -> bool:
    """Whether the schema of `engine` holds nothing yet."""
    with engine.connect() as conn:
        return bool(conn.exec_driver_sql(_NO_TABLES).scalar())


def _recorded(engine: Engine, migrate: Callable[[Engine], None]) -> list[tuple[str, object]]:
    """Migrate the new store of `engine`; the statements that wrote, as they were sent (none
    when another process or thread migrated it meanwhile)."""
    sent: list[tuple[str, object]] = []

    def record(_conn, _cursor, statement, parameters, _context, _many) -> None:  # noqa: ANN001
        if not statement.lstrip().upper().startswith("SELECT"):
            sent.append((statement, parameters))

    def forget(_conn) -> None:  # noqa: ANN001 - a write that lost a race runs again
        sent.clear()

    event.listen(engine, "before_cursor_execute", record)
    event.listen(engine, "rollback", forget)
    try:
        migrate(engine)
    finally:
        event.remove(engine, "before_cursor_execute", record)
        event.remove(engine, "rollback", forget)
    return sent


def _replay(engine: Engine, script: list[tuple[str, object]]) -> None:
    """The statements of `script` in the new store of `engine`, in one transaction, then a
    scope of its own; if the schema got tables meanwhile, nothing."""
    with engine.begin() as conn:  # under the lock the store's own upgrade takes
        conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({database._UPGRADE_LOCK})")
        if not conn.exec_driver_sql(_NO_TABLES).scalar():
            return
        for statement, parameters in script:
            _send(conn, statement, parameters)
        conn.exec_driver_sql(_NEW_SCOPE.replace("?", "%(scope)s"),
                             {"scope": secrets.token_hex(SCOPE_BYTES)})


def _send(conn: Connection, statement: str, parameters: object) -> None:
    if parameters:
        conn.exec_driver_sql(statement, parameters)  # a list of them: executemany
    else:
        conn.exec_driver_sql(statement)

"""The copies of the migrated template the suite's new stores start from, and the migration
replayed in its new PostgreSQL stores (tests/store_template.py), are the stores the
revisions make: the same schema, the same rows, each its own scope."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

import pytest
from sqlalchemy import Engine, create_engine, text

from costsched.store import PriceStore, database
from tests import store_template
from tests.conftest import _pg_url, pytest_runtest_setup

PRAGMAS = ("journal_mode", "user_version", "application_id", "page_size", "auto_vacuum",
           "encoding")


def contents(engine: Engine) -> tuple[list[tuple], dict[str, list[tuple]]]:
    """The schema (sqlite_master) and every table's rows, the store's scope left out."""
    with engine.connect() as conn:
        schema = [tuple(r) for r in conn.execute(text(
            "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"))]
        rows = {name: [tuple(r) for r in conn.execute(text(f'SELECT * FROM "{name}"'))]
                for kind, name, *_ in schema
                if kind == "table" and name not in ("store_identity", "sqlite_sequence")}
    return schema, rows


def scope(engine: Engine) -> str:
    with engine.connect() as conn:
        return conn.execute(text("SELECT scope FROM store_identity")).scalar_one()


def test_a_copied_store_is_a_migrated_one_with_a_scope_of_its_own(tmp_path: Path) -> None:
    copied = [PriceStore(str(tmp_path / f"copy{i}.sqlite")) for i in range(2)]
    memory = PriceStore("sqlite://")
    store_template.state.from_scratch = True
    try:
        migrated = PriceStore(str(tmp_path / "migrated.sqlite"))
    finally:
        store_template.state.from_scratch = False
    assert store_template.state.template is not None
    for store in (*copied, memory):
        assert store.revision() == database.head()
        assert contents(store.engine) == contents(migrated.engine)
    scopes = {scope(s.engine) for s in (*copied, memory, migrated)}
    assert len(scopes) == 4 and all(len(s) == 10 for s in scopes)
    for store in copied:
        assert file_settings(store) == file_settings(migrated)
    assert sorted(p.name for p in tmp_path.iterdir() if "sqlite" in p.name
                  and not p.name.endswith(("-wal", "-shm"))) == [
        "copy0.sqlite", "copy1.sqlite", "migrated.sqlite"]  # no copy left behind
    for store in (*copied, memory, migrated):
        store.dispose()


def file_settings(store: PriceStore) -> dict[str, object]:
    """What the file's header and settings say (its journal, format and versions)."""
    with store.engine.connect() as conn:
        return {name: conn.exec_driver_sql(f"PRAGMA {name}").scalar() for name in PRAGMAS}


def test_stores_opened_at_once_on_one_new_file_share_one_copy(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite")
    with ThreadPoolExecutor(8) as pool:
        stores = list(pool.map(lambda _: PriceStore(path), range(8)))
    assert {s.revision() for s in stores} == {database.head()}
    assert len({scope(s.engine) for s in stores}) == 1
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".template")] == []
    for store in stores:
        store.dispose()


def test_a_file_already_there_is_left_to_the_store(tmp_path: Path) -> None:
    PriceStore(str(tmp_path / "first.sqlite")).dispose()  # the template made, if not yet
    assert store_template.state.template is not None
    path = tmp_path / "notes.sqlite"
    path.write_text("not a database\n")
    store_template._place_copy(store_template.state.template, path)
    assert path.read_text() == "not a database\n"
    made = tmp_path / "made.sqlite"
    sqlite3.connect(made).close()  # an empty file, as another process opening it leaves
    store = PriceStore(str(made))  # migrated by the revisions, not replaced
    assert store.revision() == database.head()
    store.dispose()


class _Item:
    def __init__(self, nodeid: str) -> None:
        self.nodeid = nodeid


def test_the_stores_own_tests_migrate_from_scratch() -> None:
    assert not store_template.state.from_scratch  # this test's stores are copies
    try:
        pytest_runtest_setup(_Item("tests/costsched/store/test_revisions.py::test_x"))
        assert store_template.state.from_scratch
        pytest_runtest_setup(_Item("tests/costsched/service/test_jobs.py::test_x"))
        assert not store_template.state.from_scratch
    finally:
        store_template.state.from_scratch = False


PG_SCHEMA = {  # what a PostgreSQL schema is made of, its own name left out
    "columns": "SELECT table_name, column_name, ordinal_position, data_type, is_nullable, "
               "column_default FROM information_schema.columns "
               "WHERE table_schema = current_schema() ORDER BY 1, 3",
    "constraints": "SELECT t.relname, c.conname, c.contype, pg_get_constraintdef(c.oid) "
                   "FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid "
                   "WHERE t.relnamespace = current_schema()::regnamespace ORDER BY 1, 2",
    "indexes": "SELECT tablename, indexname, replace(indexdef, current_schema() || '.', '') "
               "FROM pg_indexes WHERE schemaname = current_schema() ORDER BY 1, 2",
    "sequences": "SELECT sequence_name, start_value, increment FROM "
                 "information_schema.sequences WHERE sequence_schema = current_schema() "
                 "ORDER BY 1",
}


def pg_contents(engine: Engine) -> dict[str, list[tuple]]:
    """The schema's tables, columns, constraints, indexes, sequences and rows (its scope
    left out)."""
    with engine.connect() as conn:
        found = {what: [tuple(r) for r in conn.execute(text(query))]
                 for what, query in PG_SCHEMA.items()}
        for table in sorted({row[0] for row in found["columns"]} - {"store_identity"}):
            found[table] = sorted(tuple(r) for r in conn.execute(text(f'SELECT * FROM "{table}"')))
    return found


@pytest.fixture()
def pg_schemas() -> Iterator[Callable[[], str]]:
    """A URL of a new schema of the test server each call; dropped afterwards."""
    url = _pg_url()
    if not url:
        pytest.skip("no PostgreSQL server: set COSTSCHED_TEST_PG_URL (scripts/start-postgres.sh)")
    admin, made = create_engine(url), []

    def schema() -> str:
        name = f"t_{uuid.uuid4().hex[:12]}"
        with admin.begin() as conn:
            conn.execute(text(f"CREATE SCHEMA {name}"))
        made.append(name)
        return f"{url}{'&' if '?' in url else '?'}options={quote(f'-csearch_path={name}')}"

    yield schema
    with admin.begin() as conn:
        for name in made:
            conn.execute(text(f"DROP SCHEMA {name} CASCADE"))
    admin.dispose()


def test_a_replayed_postgresql_store_is_a_migrated_one_with_a_scope_of_its_own(
        pg_schemas: Callable[[], str]) -> None:
    first = PriceStore(pg_schemas())  # migrated, recorded (if no store was before it)
    replayed = PriceStore(pg_schemas())
    assert store_template.state.pg_script
    store_template.state.from_scratch = True
    try:
        migrated = PriceStore(pg_schemas())
    finally:
        store_template.state.from_scratch = False
    assert replayed.revision() == database.head()
    assert pg_contents(replayed.engine) == pg_contents(migrated.engine)
    assert len({scope(s.engine) for s in (first, replayed, migrated)}) == 3
    for store in (first, replayed, migrated):
        store.dispose()

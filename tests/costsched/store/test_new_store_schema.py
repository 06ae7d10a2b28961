"""A new store is made from the schema's tables and stamped with the newest revision, without
Alembic: the store it makes is the one Alembic's migrations make, table by table."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from sqlalchemy import Engine, inspect, select, text

from costsched.store import PriceStore, database
from costsched.store.schema import store_identity
from costsched.store_revision import VERSION_TABLE, newest_revision


def _schema(engine: Engine) -> dict[str, dict]:
    """Every table of the database as the database itself describes it: columns (type,
    nullability, default), primary key, foreign keys, indexes, unique and check
    constraints."""
    with engine.connect() as conn:
        seen = inspect(conn)
        out: dict[str, dict] = {}
        for table in sorted(seen.get_table_names()):
            out[table] = {
                "columns": [(c["name"], str(c["type"]), c["nullable"], c.get("default"))
                            for c in seen.get_columns(table)],
                "primary key": seen.get_pk_constraint(table)["constrained_columns"],
                "foreign keys": sorted(
                    (tuple(f["constrained_columns"]), f["referred_table"],
                     tuple(f["referred_columns"]), tuple(sorted(f["options"].items())))
                    for f in seen.get_foreign_keys(table)),
                "indexes": sorted(
                    (i["name"], tuple(i["column_names"]), bool(i["unique"]),
                     tuple(sorted((k, str(v)) for k, v in i.get("dialect_options", {}).items())))
                    for i in seen.get_indexes(table)),
                "unique": sorted((u["name"], tuple(u["column_names"]))
                                 for u in seen.get_unique_constraints(table)),
                "checks": sorted((c["name"], " ".join(c["sqltext"].split()))
                                 for c in seen.get_check_constraints(table)),
            }
        return out


def _statements(engine: Engine) -> dict[tuple[str, str], str]:
    """SQLite's CREATE statement of every table and index, spaces and quotes aside, and a
    default in parentheses (as a migration that copies a table writes it) as without."""
    with engine.connect() as conn:
        rows = conn.execute(text("SELECT type, name, sql FROM sqlite_master")).all()
    return {(kind, name): re.sub(r"DEFAULT \(('[^']*')\)", r"DEFAULT \1",
                                 " ".join((sql or "").replace('"', "").split()))
            for kind, name, sql in rows}


def test_a_new_store_has_the_schema_alembic_migrates_to(empty_url: str,
                                                       tmp_path: Path) -> None:
    if "://" in empty_url:  # PostgreSQL: the migrated store in a schema of its own too
        schema = re.search(r"search_path%3D(\w+)", empty_url)[1]
        twin_schema = f"{schema}_twin"
        made = PriceStore(empty_url, migrate=False)
        with made.engine.begin() as conn:
            conn.execute(text(f"CREATE SCHEMA {twin_schema}"))
        made.dispose()
        migrated_url = empty_url.replace(schema, twin_schema)
    else:
        migrated_url, twin_schema = str(tmp_path / "migrated.sqlite"), None
    migrated = PriceStore(migrated_url, migrate=False)
    stamped = PriceStore(empty_url, migrate=False)
    try:
        database.upgrade(migrated.engine, database.head())  # every revision, by Alembic
        database.upgrade(stamped.engine)  # a new store: made from the schema and stamped
        assert _schema(stamped.engine) == _schema(migrated.engine)
        if twin_schema is None:  # SQLite keeps each table's statement: the same ones
            assert _statements(stamped.engine) == _statements(migrated.engine)
        for store in (stamped, migrated):
            with store.engine.connect() as conn:
                assert conn.execute(text(f"SELECT version_num FROM {VERSION_TABLE}")
                                    ).all() == [(newest_revision(),)]
                identity = conn.execute(select(store_identity)).all()
            assert len(identity) == 1 and identity[0].id == 1 and len(identity[0].scope) == 10
    finally:
        migrated.dispose()
        stamped.dispose()
        if twin_schema is not None:
            cleanup = PriceStore(empty_url, migrate=False)
            with cleanup.engine.begin() as conn:
                conn.execute(text(f"DROP SCHEMA {twin_schema} CASCADE"))
            cleanup.dispose()


def test_a_store_with_tables_of_its_own_is_left_to_alembic(empty_url: str) -> None:
    old = PriceStore(empty_url, migrate=False)
    database.upgrade(old.engine, "0015")
    old.dispose()
    store = PriceStore(empty_url)  # brought to the newest revision by the migrations
    assert store.revision() == newest_revision()
    with store.engine.connect() as conn:
        assert len(conn.execute(select(store_identity)).all()) == 1
    store.dispose()


def test_a_new_store_is_made_without_loading_alembic(tmp_path: Path) -> None:
    code = ("import sys; from costsched.store import PriceStore;"
            " [PriceStore(u).dispose() for u in ('sqlite://', sys.argv[1])];"
            " print(sorted(m for m in sys.modules if m.split('.')[0] == 'alembic'))")
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "new.sqlite")],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
    store = PriceStore(str(tmp_path / "new.sqlite"))
    assert store.revision() == newest_revision()
    store.dispose()


def test_a_new_store_is_made_with_one_look_at_its_tables(tmp_path: Path) -> None:
    """The tables are made at once, under the write lock that found none of them there:
    not one look per table whether it exists (a new store, a plan's store in memory)."""
    from sqlalchemy import event

    from costsched.store.schema import metadata

    looks: list[str] = []

    def seen(conn: object, cursor: object, statement: str, *args: object) -> None:
        if "table_info" in statement or "sqlite_master" in statement:
            looks.append(statement)

    event.listen(Engine, "before_cursor_execute", seen)
    try:
        store = PriceStore(str(tmp_path / "new.sqlite"))
    finally:
        event.remove(Engine, "before_cursor_execute", seen)
    try:
        assert set(inspect(store.engine).get_table_names()) >= set(metadata.tables)
    finally:
        store.dispose()
    assert 0 < len(looks) <= 3, looks

"""An empty, migrated store for each test of the move machine, on SQLite and on PostgreSQL,
without running the schema's migrations once per test (dozens of cases each need one):
SQLite gets a copy of a file migrated once per session; PostgreSQL a schema of its own per
test module, migrated once and emptied before each test (every table but Alembic's, its
sequences restarted: ids from 1, as in a new schema). Either way each test starts from a store that
holds nothing but the newest schema, as `any_store`'s does."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from sqlalchemy import MetaData, create_engine, text

from costsched.store import PriceStore
from tests.conftest import _pg_url


@pytest.fixture(scope="session")
def _sqlite_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("migrated") / "template.sqlite"
    PriceStore(str(path)).dispose()
    return path


@pytest.fixture(scope="module")
def _pg_schema() -> Iterator[tuple[str, list[str], list[str]] | None]:
    """A migrated PostgreSQL schema for this module: its URL, its tables but Alembic's
    (those referenced after those that reference them) and its sequences (None: no
    server)."""
    url = _pg_url()
    if not url:
        yield None
        return
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    sep = "&" if "?" in url else "?"
    scoped = f"{url}{sep}options={quote(f'-csearch_path={schema}')}"
    PriceStore(scoped).dispose()
    engine = create_engine(scoped)
    reflected = MetaData()
    reflected.reflect(engine)
    with engine.connect() as conn:
        sequences = list(conn.execute(text(
            "SELECT sequence_name FROM information_schema.sequences "
            "WHERE sequence_schema = :schema"), {"schema": schema}).scalars())
    engine.dispose()
    tables = [t.name for t in reversed(reflected.sorted_tables) if t.name != "alembic_version"]
    yield scoped, tables, sequences
    with admin.begin() as conn:
        conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    admin.dispose()


@pytest.fixture(params=["sqlite", "postgresql"])
def migrated_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[PriceStore]:
    """A store with the newest schema and no rows, on SQLite and on PostgreSQL."""
    if request.param == "sqlite":
        path = tmp_path / "p.sqlite"
        shutil.copyfile(request.getfixturevalue("_sqlite_template"), path)
        url = str(path)
    else:
        schema = request.getfixturevalue("_pg_schema")
        if schema is None:
            pytest.skip("no PostgreSQL server: set COSTSCHED_TEST_PG_URL "
                        "(scripts/start-postgres.sh)")
        url, tables, sequences = schema
        engine = create_engine(url)
        try:  # (DELETE is quicker than TRUNCATE on tables of a few rows)
            with engine.begin() as conn:
                for table in tables:
                    conn.execute(text(f'DELETE FROM "{table}"'))
                for sequence in sequences:
                    conn.execute(text(f'ALTER SEQUENCE "{sequence}" RESTART'))
        finally:
            engine.dispose()
    store = PriceStore(url)
    yield store
    store.dispose()

"""The partial unique indexes keep their PostgreSQL WHERE (given once a PostgreSQL store
is opened), and a process that opens a SQLite store never loads SQLAlchemy's PostgreSQL dialect."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from sqlalchemy.dialects import postgresql
from sqlalchemy.schema import CreateIndex

from costsched.store import PriceStore, schema


def test_the_partial_indexes_say_their_rows_to_postgresql() -> None:
    schema.for_postgresql()
    made = {i.name: str(CreateIndex(i).compile(dialect=postgresql.dialect()))
            for t in (schema.jobs, schema.moves) for i in t.indexes if i.unique}
    assert made == {
        "uq_jobs_live_name": "CREATE UNIQUE INDEX uq_jobs_live_name ON jobs (name) "
                             "WHERE state NOT IN ('succeeded', 'failed', 'stopped')",
        "uq_moves_open_per_job": "CREATE UNIQUE INDEX uq_moves_open_per_job ON moves "
                                 "(job_id) WHERE state NOT IN ('done', 'failed', 'cancelled')"}


def test_a_sqlite_store_does_not_load_the_postgresql_dialect(tmp_path: Path) -> None:
    PriceStore(str(tmp_path / "s.sqlite")).dispose()  # made (its revisions run, with alembic's)
    code = ("import sys; from costsched.store import PriceStore;"
            " store = PriceStore(sys.argv[1]); store.jobs.records(None); store.dispose();"
            " print(sorted(m for m in sys.modules if 'postgresql' in m))")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "s.sqlite")],
                         capture_output=True, text=True, check=True, timeout=60).stdout
    assert out.strip() == "[]"

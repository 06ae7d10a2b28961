"""The deadline on each wait for a PostgreSQL server: the statement timeout the URL or the
config sets, plus a grace; none on SQLite. (A server that never answers:
tests/reliability/test_db_hang.py.)"""

from __future__ import annotations

import pytest
from sqlalchemy import make_url

from costsched.config import StoreConfig
from costsched.store import PriceStore, StoreError, database, watchdog
from tests.conftest import _pg_url


@pytest.mark.parametrize(("options", "seconds"), [
    ("-c statement_timeout=1500", 1.5),
    ("-csearch_path=s -cstatement_timeout=2s", 2.0),
    ("--statement_timeout=1min", 60.0),
    ("-c statement_timeout=250ms -c lock_timeout=10", 0.25),
    ("-c statement_timeout=0", 0.0),
    ("-c search_path=s", None),
    ("", None),
])
def test_the_urls_statement_timeout_is_read_in_seconds(options: str,
                                                        seconds: float | None) -> None:
    assert watchdog.statement_timeout(options) == seconds


def test_the_deadline_is_the_statement_timeout_and_a_grace() -> None:
    assert watchdog.deadline("", 60.0) == (62.0, "store.statement_timeout_seconds 60 s + 2 s")
    assert watchdog.deadline("-c statement_timeout=500", 60.0) == \
        (2.5, "statement_timeout 0.5 s in the URL + 2 s")
    assert watchdog.deadline("-c statement_timeout=0", 60.0)[0] is None  # the URL says none


def _answer_within(url: str, limits: StoreConfig) -> float | None:
    store = PriceStore(url, migrate=False, limits=limits)
    with store.engine.connect() as conn:
        within = conn.connection.dbapi_connection.answer_within
    store.dispose()
    return within


def test_postgresql_connections_wait_for_the_server_until_the_deadline() -> None:
    pg_url = _pg_url()
    if not pg_url:
        pytest.skip("no PostgreSQL server: set COSTSCHED_TEST_PG_URL")
    assert _answer_within(pg_url, StoreConfig(statement_timeout_seconds=7)) == 9.0
    own = make_url(pg_url).update_query_dict({"options": "-c statement_timeout=3000"})
    own = own.render_as_string(hide_password=False)
    assert _answer_within(own, StoreConfig(statement_timeout_seconds=7)) == 5.0


def test_sqlite_stores_have_no_watchdog(tmp_path) -> None:  # noqa: ANN001 - pytest's path
    sqlite = database.make_engine(f"sqlite:///{tmp_path / 's.sqlite'}", StoreConfig())
    postgresql = database.make_engine("postgresql+psycopg://me:pw@db/x", StoreConfig())
    assert not sqlite.dialect.dispatch.do_connect  # nothing added to SQLite's statements
    assert postgresql.dialect.dispatch.do_connect


def test_an_old_psycopg_is_one_line_naming_the_version_needed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watchdog, "SUPPORTED", False)
    with pytest.raises(StoreError, match=r"^store postgresql\+psycopg://me:\*\*\*@db/x: "
                                         r"psycopg .* is too old; 3\.3\.6 or newer"):
        database.make_engine("postgresql+psycopg://me:pw@db/x", StoreConfig())

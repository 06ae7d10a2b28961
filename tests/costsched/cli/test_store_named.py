"""A store that cannot be opened as given is refused in one line naming where it was given
(--db, the configuration's db, $COSTSCHED_DB), with the store meant where it is a likely
slip: a PostgreSQL URL written as libpq writes it (postgres://), a file name one letter
off from a store beside it. Each suggestion works as printed."""

from __future__ import annotations

import os
import re
import socket
from pathlib import Path

import pytest
from sqlalchemy import make_url
from typer.testing import CliRunner

from costsched.cli import app
from costsched.store import PriceStore
from costsched.store.database import url_refused

SECRET = "s3cr3t-pw"


def _run(argv: list[str], **env: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, argv, env={"COLUMNS": "400", **env})
    return result.exit_code, " ".join(result.output.split())


@pytest.fixture()
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No store named anywhere: no $COSTSCHED_DB, an empty configuration."""
    monkeypatch.delenv("COSTSCHED_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    config = tmp_path / "config.toml"
    config.write_text("")
    monkeypatch.setenv("COSTSCHED_CONFIG", str(config))
    return config


def _ways(tmp_path: Path, db: str) -> dict[str, tuple[list[str], dict[str, str]]]:
    """`status` told of the store `db` each way, by the name each way is said with."""
    config = tmp_path / "named.toml"
    config.write_text(f'db = "{db}"\n')
    return {"--db": (["status", "--db", db], {}),
            "the configuration's db": (["status"], {"COSTSCHED_CONFIG": str(config)}),
            "$COSTSCHED_DB": (["status"], {"COSTSCHED_DB": db})}


def test_a_postgres_url_names_where_it_was_given_and_the_url_meant(
        fresh: Path, tmp_path: Path) -> None:
    db = f"postgres://me:{SECRET}@localhost/team"
    for name, (argv, env) in _ways(tmp_path, db).items():
        code, said = _run(argv, **env)
        assert code == 2, (name, said)
        assert said == (f"error: {name} postgres://me:***@localhost/team: unknown database "
                        "kind 'postgres'; did you mean postgresql+psycopg://me:***@localhost/"
                        "team? (expected sqlite, postgresql+psycopg or another SQLAlchemy "
                        "dialect)"), (name, said)


def test_the_postgresql_url_meant_opens() -> None:
    """The URL a postgres:// one is told to be opens (its password masked when said)."""
    url = os.environ.get("COSTSCHED_TEST_PG_URL")
    if not url:
        pytest.skip("no PostgreSQL server: set COSTSCHED_TEST_PG_URL")
    parsed = make_url(url)
    written = f"postgres://{parsed.username}:{parsed.password}@{parsed.host}:{parsed.port}/" \
              f"{parsed.database}"
    code, said = _run(["status", "--db", written])
    meant = re.search(r"did you mean (\S+)\?", said)
    assert code == 2 and meant is not None, said
    given = meant[1].replace("***", str(parsed.password))
    assert url_refused(given) is None
    code, said = _run(["status", "--db", given, "--no-reconcile"])
    assert code == 0 or "no costsched store in this database yet" in said, said


def test_a_driver_not_installed_for_postgresql_is_told_the_one_costsched_installs() -> None:
    try:
        import psycopg2  # noqa: F401
        pytest.skip("psycopg2 is installed here")
    except ImportError:
        pass
    refused = url_refused("postgresql+psycopg2://me@localhost/team")
    assert refused is not None and "did you mean postgresql+psycopg://me@localhost/team?" \
        in refused, refused
    assert url_refused("postgresql+psycopg://me@localhost/team") is None


def test_a_server_that_refuses_names_where_its_url_was_given(fresh: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    db = f"postgresql+psycopg://me:{SECRET}@127.0.0.1:{port}/team"
    code, said = _run(["status"], COSTSCHED_DB=db)
    assert code == 75, said
    assert said.startswith(f"error: $COSTSCHED_DB postgresql+psycopg://me:***@127.0.0.1:"
                           f"{port}/team: no database server answers there (connection "
                           "refused)"), said
    assert SECRET not in said


def test_a_store_path_one_letter_off_names_the_store_beside_it(
        fresh: Path, tmp_path: Path) -> None:
    team = tmp_path / "stores" / "team.sqlite"
    team.parent.mkdir()
    PriceStore(str(team)).dispose()
    (tmp_path / "stores" / "notes.txt").write_text("not a store")
    typo = team.with_name("teem.sqlite")
    for name, (argv, env) in _ways(tmp_path, str(typo)).items():
        code, said = _run(argv, **env)
        assert code == 2, (name, said)
        assert said.startswith(f"error: {name} {typo}: no such store ({typo}); did you mean "
                               f"'{team}'? If not, `costsched launch JOB.yaml"), (name, said)
        assert not typo.exists()
    code, said = _run(["status", "--db", str(team)])  # the store meant, as said
    assert code == 0, said
    far = team.with_name("archive-2019.sqlite")  # no name close to it: none offered
    code, said = _run(["status", "--db", str(far)])
    assert code == 2 and "did you mean" not in said and "no such store" in said, said


def test_a_command_that_writes_names_the_store_beside_it_too(
        fresh: Path, tmp_path: Path) -> None:
    team = tmp_path / "team.sqlite"
    PriceStore(str(team)).dispose()
    typo = tmp_path / "teem.sqlite"
    prices = Path(__file__).resolve().parents[3] / "examples" / "demo" / "prices-before.csv"
    code, said = _run(["prices", "import", str(prices), "--db", str(typo)])
    assert code == 2 and said == (
        f"error: --db {typo}: no such store ({typo}); did you mean '{team}'? If not, add "
        "--new-store to make it (unasked, only the default store is made)"), said
    assert not typo.exists()


def test_the_python_api_names_the_store_beside_it(tmp_path: Path) -> None:
    from costsched.model import InvalidInput
    from costsched.service import api

    team = tmp_path / "team.sqlite"
    PriceStore(str(team)).dispose()
    with pytest.raises(InvalidInput, match=re.escape(f"did you mean '{team}'?")):
        api.prices(db=str(tmp_path / "teem.sqlite"))


PRICES = Path(__file__).resolve().parents[3] / "examples" / "demo" / "prices-before.csv"


@pytest.mark.parametrize("argv", [["gpus"], ["throughput", "show"], ["daemon", "--once"],
                                  ["prices", "import", str(PRICES)], ["check"]])
def test_every_command_names_costsched_db_as_where_a_postgres_url_came_from(
        fresh: Path, argv: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("costsched.cli.check.check_all", lambda: [])  # no cloud asked
    code, said = _run(argv, COSTSCHED_DB="postgres://me@localhost/team")
    assert code == 2, said
    assert said.endswith("error: $COSTSCHED_DB postgres://me@localhost/team: unknown database "
                         "kind 'postgres'; did you mean postgresql+psycopg://me@localhost/team? "
                         "(expected sqlite, postgresql+psycopg or another SQLAlchemy "
                         "dialect)"), said
    assert "Traceback" not in said

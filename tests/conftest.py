"""Shared fixtures: the recorded data beside the checkout, fresh stores, the CLI runner."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from sqlalchemy import create_engine, text
from typer.testing import CliRunner

from costsched.store import PriceStore
from costsched.throughput import ENV_USER_FILE
from tests.shared_data import shared_data

ROOT = Path(__file__).resolve().parent.parent
SHARED = shared_data()
DISPA = SHARED / "dispa2020"


@pytest.fixture(scope="session")
def dispa() -> Path:
    """../shared/data/dispa2020: CI has it beside the checkout; its absence is an error."""
    assert DISPA.is_dir(), f"recorded data not found at {DISPA} (set COSTSCHED_SHARED_DATA)"
    return DISPA


@pytest.fixture(scope="session")
def spot_traces() -> Path:
    path = SHARED / "spot-traces"
    assert path.is_dir(), f"spot traces not found at {path} (set COSTSCHED_SHARED_DATA)"
    return path


def hermetic_aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                     endpoints: tuple[str, ...] = ()) -> None:
    """Fake AWS credentials, and no profile, config, endpoint or instance metadata from the
    machine (for moto and botocore's Stubber)."""
    for name in ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_ENDPOINT_URL",
                 "AWS_SESSION_TOKEN", *endpoints):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-aws-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-aws-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture(autouse=True)
def _isolated_throughputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the user's own throughput measurements out of every test (plans and replays
    read them)."""
    monkeypatch.setenv(ENV_USER_FILE, str(tmp_path / "user-throughputs.csv"))
    # Nor the instance types a refresh discovered on this machine; and a refresh (the
    # daemon's weekly catalog task) reads no cloud unless a test hands it stubbed clients.
    monkeypatch.setenv("COSTSCHED_DISCOVERED_TYPES", str(tmp_path / "discovered-types.csv"))
    monkeypatch.setattr("price_collectors.discovery._aws_clients", _no_cloud)
    monkeypatch.setattr("price_collectors.discovery._gcp_client", _no_cloud)


def _no_cloud(*_args: object) -> None:
    from price_collectors.base import CollectorUnavailable

    raise CollectorUnavailable("tests read no cloud")


@pytest.fixture(autouse=True)
def wide_console(monkeypatch: pytest.MonkeyPatch) -> None:
    """CLI output width must not depend on the runner's terminal (xdist sets COLUMNS=80)."""
    from costsched.cli.common import console, err_console

    monkeypatch.setattr(console, "width", 200)
    monkeypatch.setattr(err_console, "width", 200)


def _pg_url() -> str | None:
    url = os.environ.get("COSTSCHED_TEST_PG_URL")
    if not url and os.environ.get("COSTSCHED_REQUIRE_PG"):
        pytest.fail("COSTSCHED_REQUIRE_PG is set but COSTSCHED_TEST_PG_URL is not")
    return url


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of an empty database: a SQLite file, and a PostgreSQL schema of its own."""
    if request.param == "sqlite":
        yield str(tmp_path / "p.sqlite")
        return
    url = _pg_url()
    if not url:
        pytest.skip("no PostgreSQL server: set COSTSCHED_TEST_PG_URL (scripts/start-postgres.sh)")
    schema = f"t_{uuid.uuid4().hex[:12]}"
    admin = create_engine(url)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    sep = "&" if "?" in url else "?"
    yield f"{url}{sep}options={quote(f'-csearch_path={schema}')}"
    with admin.begin() as conn:
        conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
    admin.dispose()


@pytest.fixture()
def any_store(empty_url: str) -> Iterator[PriceStore]:
    """A fresh store on SQLite, and on PostgreSQL in a schema of its own."""
    s = PriceStore(empty_url)
    yield s
    s.dispose()


@pytest.fixture()
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "prices.sqlite"


@pytest.fixture()
def store(db_path: Path) -> PriceStore:
    s = PriceStore(str(db_path))
    yield s
    s.dispose()


@pytest.fixture(scope="session")
def recorded_store(tmp_path_factory: pytest.TempPathFactory, dispa: Path) -> PriceStore:
    """A SQLite store holding all of dispa2020 (AWS and Azure), shared read-only by tests."""
    from price_collectors import recorded

    path = tmp_path_factory.mktemp("recorded") / "prices.sqlite"
    s = PriceStore(str(path))
    parsed = recorded.read_paths([dispa / "aws" / "cost", dispa / "azure"])
    assert not parsed.errors, parsed.errors
    s.ingest(parsed.observations())
    return s


@pytest.fixture()
def cli(monkeypatch: pytest.MonkeyPatch, db_path: Path):
    """Invoke the CLI with COSTSCHED_DB pointing at a fresh SQLite store (made here:
    reading commands refuse a store that does not exist)."""
    from costsched.cli import app

    monkeypatch.setenv("COSTSCHED_DB", str(db_path))
    PriceStore(str(db_path)).dispose()
    runner = CliRunner()

    def invoke(*args: str):
        return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)

    return invoke

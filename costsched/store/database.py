"""The database under every store: where it is, its engine, its schema revision, its times.

The price store and the job store share one database and one Alembic history
(`revisions/`). Times are stored as whole UTC epoch seconds.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import numpy as np
import pandas as pd
import platformdirs
from sqlalchemy import Engine, create_engine, event

from costsched.model import InvalidInput, utc

ENV_DB = "COSTSCHED_DB"
_SCRIPTS = "costsched.store:revisions"
_EPOCH = pd.Timestamp(0, tz="UTC")


def default_url() -> str:
    """COSTSCHED_DB if set, else a SQLite file in the platform's user data directory."""
    if os.environ.get(ENV_DB):
        return resolve_url(os.environ[ENV_DB])
    data_dir = Path(platformdirs.user_data_dir("costsched"))
    return resolve_url(str(data_dir / "prices.sqlite"))


def resolve_url(db: str) -> str:
    """A SQLAlchemy URL as is; a plain path becomes a SQLite file URL."""
    if "://" in db:
        return db
    path = Path(db).expanduser().resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"


def make_engine(url: str) -> Engine:
    """An engine for `url`; SQLite connections get WAL, a larger cache and foreign keys."""
    engine = create_engine(url)
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    return engine


def _sqlite_pragmas(dbapi_connection, _record) -> None:  # noqa: ANN001 - DB-API objects
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA cache_size=-65536")  # 64 MiB of pages instead of 2 MiB
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


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


def revision(engine: Engine) -> str | None:
    """The schema revision of the database (None for an empty one)."""
    from alembic.runtime.migration import MigrationContext

    with engine.connect() as conn:
        return MigrationContext.configure(conn).get_current_revision()


def upgrade(engine: Engine, revision: str = "head") -> None:
    """Bring the schema to `revision` in one transaction (a no-op when it is there)."""
    from alembic import command
    from alembic.runtime.migration import MigrationContext

    cfg = _config()
    target = head() if revision == "head" else revision
    with engine.begin() as conn:
        if MigrationContext.configure(conn).get_current_revision() == target:
            return
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, target)


# --- times --------------------------------------------------------------------------------


def to_epoch_seconds(times: pd.Series | Sequence[datetime]) -> np.ndarray:
    """UTC epoch seconds of aware times (naive ones are taken as UTC)."""
    ts = pd.to_datetime(pd.Series(times), utc=True)
    return ((ts - _EPOCH) // pd.Timedelta(seconds=1)).to_numpy(dtype="int64")


def from_epoch_seconds(seconds: pd.Series | np.ndarray) -> pd.Series:
    return pd.to_datetime(pd.Series(seconds, dtype="int64"), unit="s", utc=True)


def epoch_second(at: datetime, what: str = "time") -> int:
    """One time as UTC epoch seconds (naive times are taken as UTC)."""
    if not isinstance(at, datetime) or pd.isna(at):
        raise InvalidInput(f"{what} {at!r}: expected a datetime")
    return math.floor(utc(at).timestamp())

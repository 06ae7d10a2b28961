"""Where a store's SQLite file is, found without opening the store (the standard library
only: commands check their store before they import the database layer)."""

from __future__ import annotations

import os
from pathlib import Path

# The environment variable naming the default store (costsched.store.ENV_DB; a test keeps
# them equal: importing the store here would load SQLAlchemy and pandas).
ENV_DB = "COSTSCHED_DB"


def default_store_path() -> Path | None:
    """The SQLite file of the default store ($COSTSCHED_DB, else the user data directory's
    prices.sqlite); None when $COSTSCHED_DB is a server's URL."""
    import platformdirs

    db = os.environ.get(ENV_DB) or str(Path(platformdirs.user_data_dir("costsched"))
                                       / "prices.sqlite")
    return sqlite_path(db)


def sqlite_path(db: str) -> Path | None:
    """The file a SQLite path or sqlite:/// URL names; None for a server's URL or an
    in-memory database."""
    if "://" not in db:
        return Path(db).expanduser()
    if not db.startswith("sqlite:///"):
        return None
    return Path(db[len("sqlite:///"):].split("?")[0]) or None


def store_file(db: str | None) -> Path | None:
    """The SQLite file of the store `db` names (None: the default store); None for a
    server's URL or an in-memory database."""
    path = default_store_path() if db is None else sqlite_path(db)
    return None if path is None or path == Path() else path


def missing_store(db: str | None) -> Path | None:
    """The SQLite file of the store `db` names (None: the default store) if it does not
    exist yet, else None. Nothing is created."""
    path = store_file(db)
    return path if path is not None and not path.exists() else None


SQLITE_HEADER = b"SQLite format 3\x00"  # the first bytes of every SQLite database file


def not_sqlite(db: str | None) -> str | None:
    """Why the existing file the store `db` names is no SQLite database (a job file given
    as the store), in the words the store uses when it opens one; None for a store file
    (or an empty one, which a store fills), a server's URL or a file not there."""
    path = store_file(db)
    if path is None or not path.is_file():
        return None
    try:
        with path.open("rb") as f:
            head = f.read(len(SQLITE_HEADER))
    except OSError:
        return None  # (said as the store says it, once opened)
    if not head or head == SQLITE_HEADER:
        return None
    return "not a SQLite database; give the path of a store or of a new file"

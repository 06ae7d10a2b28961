"""Opening the price store for a call: a store given is used as is, a URL or path opened."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from costsched.config import StoreConfig
from costsched.store import PriceStore
from costsched.store.database import ENV_DB

# What the service functions take as their store: a store, a SQLAlchemy URL or SQLite file
# path to open for the call, or None for the default store.
StoreLike = PriceStore | str | None


def open_store(db: str | None = None, limits: StoreConfig | None = None) -> PriceStore:
    """The price store at `db` (a SQLAlchemy URL or a SQLite file path; default
    $COSTSCHED_DB, else a file in the user data directory), upgraded to the newest schema.
    `limits`: how long to wait for it (a config's [store] section; default: the
    configuration in effect). A store that cannot be opened raises StoreError: one line
    saying what, where (the URL's password masked) and what to do."""
    return PriceStore(db, limits=limits)


@contextmanager
def using(db: StoreLike) -> Iterator[PriceStore]:
    """`db` itself when it is a store; else a store opened on it and disposed afterwards."""
    if isinstance(db, PriceStore):
        yield db
        return
    store = open_store(db)
    try:
        yield store
    finally:
        store.dispose()


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


def missing_store(db: str | None) -> Path | None:
    """The SQLite file of the store `db` names (None: the default store) if it does not
    exist yet, else None. Nothing is created."""
    path = default_store_path() if db is None else sqlite_path(db)
    return path if path is not None and path != Path() and not path.exists() else None

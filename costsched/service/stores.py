"""Opening the price store for a call: a store given is used as is, a URL or path opened."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from costsched.config import StoreConfig, effective
from costsched.store import PriceStore

# What the service functions take as their store: a store, a SQLAlchemy URL or SQLite file
# path to open for the call, or None for the default store.
StoreLike = PriceStore | str | None


def open_store(db: str | None = None, limits: StoreConfig | None = None) -> PriceStore:
    """The price store at `db` (a SQLAlchemy URL or a SQLite file path; default
    $COSTSCHED_DB, else a file in the user data directory), upgraded to the newest schema.
    `limits`: how long to wait for it (a config's [store] section; default: the
    configuration in effect). A store that cannot be opened raises StoreError: one line
    saying what, where (the URL's password masked) and what to do."""
    return PriceStore(db, limits=limits if limits is not None else effective().store)


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


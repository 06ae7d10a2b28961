"""Whether a database server holds a costsched store, told without creating one: a command
that only reads never creates a store, on a server as with a SQLite file."""

from __future__ import annotations

from sqlalchemy import inspect

from costsched.store.database import StoreError, make_engine
from costsched.store_limits import StoreLimits
from costsched.store_revision import VERSION_TABLE


def holds_store(url: str, limits: StoreLimits | None = None) -> bool | None:
    """Whether the database at `url` holds a costsched store (its schema's version table,
    in the schema the URL's search_path names); None when that cannot be told otherwise:
    opening the store then says why. What opening it would refuse (a server down or that
    does not answer within `limits`, a host unknown, a login refused) raises its
    StoreError now, for the caller to say where the URL was given. `limits`: how long
    to wait (the configuration's [store] section, as the store's own opening waits)."""
    try:
        engine = make_engine(url, limits)
    except StoreError:
        raise
    except Exception:  # noqa: BLE001 - said by the command's own opening of the store
        return None
    try:
        with engine.connect() as conn:
            return inspect(conn).has_table(VERSION_TABLE)
    except StoreError:  # said now, where the URL was given (and a wait not waited twice)
        raise
    except Exception:  # noqa: BLE001 - as above
        return None
    finally:
        engine.dispose()

"""The store: price history (offerings and observations) and job state, in one database.

SQLite by default, any SQLAlchemy URL for teams (PostgreSQL). The schema is upgraded in
place by the Alembic revisions in `revisions/` when a store is opened.
"""

from costsched.store.prices import (
    ENV_DB,
    OBSERVATION_COLUMNS,
    OFFERING_ATTRS,
    OFFERING_KEY,
    IngestResult,
    PriceStore,
    default_url,
    from_epoch_seconds,
    observations_frame,
    resolve_url,
    to_epoch_seconds,
)

__all__ = ["ENV_DB", "OBSERVATION_COLUMNS", "OFFERING_ATTRS", "OFFERING_KEY", "IngestResult",
           "PriceStore", "default_url", "from_epoch_seconds", "observations_frame",
           "resolve_url", "to_epoch_seconds"]

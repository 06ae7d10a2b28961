"""The store: price history (offerings and observations) and job state, in one database.

SQLite by default, any SQLAlchemy URL for teams (PostgreSQL). The schema is upgraded in
place by the Alembic revisions in `revisions/` when a store is opened. A store that cannot
be opened or used raises StoreError, one line saying what, where and what to do.
"""

from costsched.store.database import (
    ENV_DB,
    StoreBusy,
    StoreError,
    StoreUnavailable,
    default_url,
    from_epoch_seconds,
    resolve_url,
    to_epoch_seconds,
)
from costsched.store.jobs import JobRecord, JobStore, StaleState
from costsched.store.prices import (
    OBSERVATION_COLUMNS,
    OFFERING_ATTRS,
    OFFERING_KEY,
    IngestResult,
    PriceStore,
    observations_frame,
)
from costsched.store.spot_availability import SpotAvailabilityStore

__all__ = ["ENV_DB", "OBSERVATION_COLUMNS", "OFFERING_ATTRS", "OFFERING_KEY", "IngestResult",
           "JobRecord", "JobStore", "PriceStore", "SpotAvailabilityStore",
           "StaleState", "StoreBusy", "StoreError", "StoreUnavailable", "default_url",
           "from_epoch_seconds", "observations_frame", "resolve_url", "to_epoch_seconds"]

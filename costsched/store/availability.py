"""What launching taught about offerings: capacity errors, preemptions, launches that ran.

Observations are appended as they happen (by the job-move state machine and the
reconciler); the launch ranking skips offerings that just had no capacity, and the
preemption rates of the decision model count the preemptions seen per hour of spot time.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Engine, insert, select

from costsched.lazy import pandas as pd
from costsched.model import InvalidInput, Offering
from costsched.store.database import epoch_second, from_epoch_seconds
from costsched.store.schema import availability

EVENTS = ("capacity", "preempted", "launched")
COLUMNS = ["cloud", "region", "zone", "instance_type", "market", "gpu_model", "gpu_count",
           "at", "event", "detail"]


class AvailabilityStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def record(self, offering: Offering, event: str, *, at: datetime, detail: str = "") -> None:
        if event not in EVENTS:
            raise InvalidInput(f"availability event {event!r}: expected one of "
                               f"{', '.join(EVENTS)}")
        with self.engine.begin() as conn:
            conn.execute(insert(availability).values(
                cloud=offering.cloud, region=offering.region, zone=offering.zone,
                instance_type=offering.instance_type, market=offering.market,
                gpu_model=offering.gpu_model, gpu_count=offering.gpu_count,
                ts=epoch_second(at), event=event, detail=detail[:2000]))

    def since(self, start: datetime | None = None, event: str | None = None) -> pd.DataFrame:
        """Every observation at or after `start` (all by default; only those of `event`
        when given), oldest first."""
        query = select(availability).order_by(availability.c.ts, availability.c.id)
        if start is not None:
            query = query.where(availability.c.ts >= epoch_second(start))
        if event is not None:
            query = query.where(availability.c.event == event)
        with self.engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
        frame = pd.DataFrame([dict(r) for r in rows],
                             columns=[c.name for c in availability.columns])
        frame["at"] = from_epoch_seconds(frame.pop("ts")) if len(frame) else pd.Series(
            dtype="datetime64[ns, UTC]")
        return frame[COLUMNS]

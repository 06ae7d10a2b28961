"""What launching taught about offerings: capacity errors, preemptions, launches that ran.

Observations are appended as they happen (by the job-move state machine and the
reconciler); the launch ranking skips offerings that just had no capacity, and the
preemption rates of the decision model count the preemptions seen per hour of spot time.
Each says who saw it (`source`): a cloud's own instance (''), or one the local launcher ran
on this machine standing in for the offering (LOCAL): what a simulated instance met is kept
for its job's story and for the local launches' ranking, never counted as the cloud's.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Engine, insert, select

from costsched.lazy import pandas as pd
from costsched.model import InvalidInput, Offering
from costsched.store.database import epoch_second, rows_frame
from costsched.store.schema import availability

EVENTS = ("capacity", "preempted", "launched")
LOCAL = "local"  # the source of what an instance of the local launcher met
SOURCES = ("", LOCAL)
COLUMNS = ["cloud", "region", "zone", "instance_type", "market", "gpu_model", "gpu_count",
           "at", "event", "detail", "source"]


def check_observation(event: str, source: str) -> None:
    """InvalidInput unless `event` and `source` are ones the store keeps."""
    if event not in EVENTS:
        raise InvalidInput(f"availability event {event!r}: expected one of "
                           f"{', '.join(EVENTS)}")
    if source not in SOURCES:
        raise InvalidInput(f"availability source {source!r}: expected '' (a cloud's own) "
                           f"or {LOCAL!r}")


class AvailabilityStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def record(self, offering: Offering, event: str, *, at: datetime, detail: str = "",
               source: str = "") -> None:
        """Store one observation; `source`: LOCAL for an instance of the local launcher."""
        check_observation(event, source)
        with self.engine.begin() as conn:
            conn.execute(insert(availability).values(
                cloud=offering.cloud, region=offering.region, zone=offering.zone,
                instance_type=offering.instance_type, market=offering.market,
                gpu_model=offering.gpu_model, gpu_count=offering.gpu_count,
                ts=epoch_second(at), event=event, detail=detail[:2000], source=source))

    def since(self, start: datetime | None = None, event: str | None = None, *,
              clouds_only: bool = False) -> pd.DataFrame:
        """Every observation at or after `start` (all by default; only those of `event`
        when given; only the clouds' own, none of the local launcher's, `clouds_only`),
        oldest first."""
        query = select(availability).order_by(availability.c.ts, availability.c.id)
        if clouds_only:
            query = query.where(availability.c.source == "")
        if start is not None:
            query = query.where(availability.c.ts >= epoch_second(start))
        if event is not None:
            query = query.where(availability.c.event == event)
        with self.engine.connect() as conn:
            frame = rows_frame(conn.execute(query), COLUMNS, times={"ts": "at"})
        if frame.empty:  # no observation: its times' type as it has always been
            frame["at"] = pd.Series(dtype="datetime64[ns, UTC]")
        return frame

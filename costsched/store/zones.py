"""Zone coverage: which zones offer an offering whose price holds for the whole region.

GCP prices accelerators per region but offers them in some zones only; its collector
lists those zones, and launchers read them here.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Engine, and_, bindparam, insert, select, update

from costsched.lazy import pandas as pd
from costsched.model import ALL_MARKETS, CLOUDS, InvalidInput
from costsched.store.database import epoch_second, from_epoch_seconds
from costsched.store.schema import zone_coverage

ZONE_KEY = ["cloud", "region", "zone", "instance_type", "market"]
ZONE_COLUMNS = [*ZONE_KEY, "first_seen", "last_seen"]


def record_zones(engine: Engine, frame: pd.DataFrame, at: datetime) -> int:
    """Record that each row's zone offered its offering at `at`, in one transaction.

    New keys are first and last seen at `at`; known ones widen their seen interval to
    include `at`. Returns the number of distinct keys recorded.
    """
    missing = [c for c in ZONE_KEY if c not in frame.columns]
    if missing:
        raise InvalidInput(f"zone frame lacks columns: {', '.join(missing)}")
    ts = epoch_second(at)
    blank = frame[ZONE_KEY].isna().any()
    if blank.any():
        raise InvalidInput(f"{blank[blank].index[0]} None: expected a name")
    rows = frame[ZONE_KEY].astype(str).drop_duplicates()
    _check(rows)
    if rows.empty:
        return 0
    key_params = {f"k_{c}": bindparam(f"k_{c}") for c in ZONE_KEY}
    same_key = and_(*(zone_coverage.c[c] == key_params[f"k_{c}"] for c in ZONE_KEY))
    with engine.begin() as conn:
        stored = pd.DataFrame(
            conn.execute(select(*(zone_coverage.c[c] for c in ZONE_KEY))).fetchall(),
            columns=ZONE_KEY,
        )
        merged = rows.merge(stored, on=ZONE_KEY, how="left", indicator=True)
        new = merged[merged["_merge"] == "left_only"][ZONE_KEY]
        known = merged[merged["_merge"] == "both"][ZONE_KEY]
        if not new.empty:
            records = new.assign(first_seen_ts=ts, last_seen_ts=ts).to_dict("records")
            conn.execute(insert(zone_coverage), records)
        if not known.empty:
            params = [{f"k_{c}": r[c] for c in ZONE_KEY} | {"ts": ts}
                      for r in known.to_dict("records")]
            seen = bindparam("ts")
            conn.execute(update(zone_coverage).where(same_key, zone_coverage.c.last_seen_ts
                                                     < seen).values(last_seen_ts=seen), params)
            conn.execute(update(zone_coverage).where(same_key, zone_coverage.c.first_seen_ts
                                                     > seen).values(first_seen_ts=seen), params)
    return len(rows)


def zones(
    engine: Engine,
    *,
    cloud: str | Sequence[str] | None = None,
    region: str | Sequence[str] | None = None,
    instance_type: str | Sequence[str] | None = None,
    market: str | Sequence[str] | None = None,
    seen_since: datetime | None = None,
) -> pd.DataFrame:
    """The recorded zones matching the filters, with when each was first and last seen."""
    conditions = []
    filters = {"cloud": cloud, "region": region, "instance_type": instance_type,
               "market": market}
    for name, value in filters.items():
        if value is None:
            continue
        values = [value] if isinstance(value, str) else list(value)
        conditions.append(zone_coverage.c[name].in_(values))
    if seen_since is not None:
        conditions.append(zone_coverage.c.last_seen_ts >= epoch_second(seen_since, "seen_since"))
    query = (
        select(zone_coverage)
        .where(*conditions)
        .order_by(*(zone_coverage.c[c] for c in ZONE_KEY))
    )
    with engine.connect() as conn:
        result = conn.execute(query)
        frame = pd.DataFrame([tuple(r) for r in result], columns=list(result.keys()))
    frame["first_seen"] = from_epoch_seconds(frame.pop("first_seen_ts"))
    frame["last_seen"] = from_epoch_seconds(frame.pop("last_seen_ts"))
    return frame[ZONE_COLUMNS]


def _check(rows: pd.DataFrame) -> None:
    for column, accepted in (("cloud", CLOUDS), ("market", ALL_MARKETS)):
        bad = rows[~rows[column].isin(accepted)]
        if not bad.empty:
            raise InvalidInput(
                f"{column} {bad[column].iloc[0]!r}: expected one of {', '.join(accepted)}"
            )
    for column in ("region", "zone", "instance_type"):
        if (rows[column].str.strip() == "").any():
            raise InvalidInput(f"{column} '': expected a non-empty name")

"""Spot availability over time: could a spot instance be obtained, did a probed one keep
running, stored as intervals of one state per offering (run-length encoded).

Three kinds of observation:
- `availability`: an availability trace (was spot capacity there, tick by tick);
- `preemption`: a preemption trace (was an instance kept on spot running);
- `probe`: a probe log (an instance's life from creation to preemption or its last poll,
  and creation failures as unavailable).

Running -> not running within a `preemption` or `probe` source is a preemption; the
preemption rates derived here take the shape the decision model's measured rates take.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import Engine, case, func, select

from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.model import CLOUDS, InvalidInput, utc
from costsched.passes import frozen, memo
from costsched.store.database import (
    epoch_second,
    frame_of_rows,
    from_epoch_seconds,
    insert_new,
    rows_frame,
    to_epoch_seconds,
)
from costsched.store.schema import spot_availability as table

KINDS = ("availability", "preemption", "probe")
RUNNING_KINDS = ("preemption", "probe")  # the kinds whose intervals are instance lifetimes
OFFERING = ["cloud", "region", "zone", "instance_type", "gpu_model", "gpu_count"]
COLUMNS = [*OFFERING, "start", "end", "available", "kind", "source"]
SUMMARY_COLUMNS = ["cloud", "region", "zone", "instance_type", "gpu_model", "gpu_count",
                   "kind", "source", "intervals", "first", "last", "hours", "available_share"]
LATEST_COLUMNS = [*OFFERING, "available", "since", "until", "current"]
_KEY = ["cloud", "region", "zone", "instance_type", "kind", "source", "start_ts", "available"]
_MARKET = "spot"
# How an interval's stored columns read in its frame (`rows_frame`).
_TIMES = {"start_ts": "start", "end_ts": "end"}
_TYPES = {"available": "bool", "gpu_count": "int64"}


class SpotAvailabilityStore:
    """Spot availability intervals per offering, in the store's database."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    # --- writes ---------------------------------------------------------------------

    def add(self, frame: pd.DataFrame) -> int:
        """Store intervals (columns COLUMNS) in one transaction; an interval already stored
        (same offering, kind, source, start and state) is left as it is. The number added."""
        rows = _rows(frame)
        if rows.empty:
            return 0
        with self.engine.begin() as conn:
            return insert_new(conn, table, rows, _KEY, market=_MARKET)

    # --- reads ----------------------------------------------------------------------

    def intervals(self, *, cloud: str | None = None, zones: Sequence[str] | None = None,
                  instance_type: str | None = None, kind: str | None = "availability",
                  start: datetime | None = None, end: datetime | None = None,
                  source: str | None = None) -> pd.DataFrame:
        """The stored intervals overlapping [start, end) (all by default) of the matching
        offerings and kind (None: every kind), ordered by zone, then start."""
        conditions = _conditions(cloud, zones, instance_type, kind, source)
        if start is not None:
            conditions.append(table.c.end_ts > epoch_second(start, "start"))
        if end is not None:
            conditions.append(table.c.start_ts < epoch_second(end, "end"))
        query = (select(*(table.c[c] for c in [*OFFERING, "start_ts", "end_ts", "available",
                                              "kind", "source"]))
                 .where(*conditions)
                 .order_by(table.c.zone, table.c.start_ts, table.c.instance_type,
                           table.c.kind, table.c.source, table.c.available))
        with self.engine.connect() as conn:
            return rows_frame(conn.execute(query), COLUMNS, times=_TIMES, types=_TYPES)

    def summary(self) -> pd.DataFrame:
        """One row per (offering, kind, source): intervals, first and last time observed,
        hours observed and the share of them available."""
        hours = (table.c.end_ts - table.c.start_ts)
        group = [table.c[c] for c in [*OFFERING, "kind", "source"]]
        query = (select(*group, func.count().label("intervals"),
                        func.min(table.c.start_ts).label("first_ts"),
                        func.max(table.c.end_ts).label("last_ts"),
                        func.sum(hours).label("seconds"),
                        func.sum(case((table.c.available, hours), else_=0)).label("up"))
                 .group_by(*group)
                 .order_by(table.c.cloud, table.c.zone, table.c.instance_type, table.c.kind,
                           table.c.source))
        with self.engine.connect() as conn:
            result = conn.execute(query)
            frame = pd.DataFrame([tuple(r) for r in result], columns=list(result.keys()))
        seconds = frame.pop("seconds").astype(float)
        up = frame.pop("up").astype(float)
        frame["first"] = from_epoch_seconds(frame.pop("first_ts"))
        frame["last"] = from_epoch_seconds(frame.pop("last_ts"))
        frame["hours"] = seconds / 3600
        frame["available_share"] = np.where(seconds > 0, up / seconds.where(seconds > 0, 1),
                                            np.nan)
        return frame[SUMMARY_COLUMNS]

    def available_share(self, *, start: datetime | None = None, end: datetime | None = None,
                        cloud: str | None = None, zones: Sequence[str] | None = None,
                        instance_type: str | None = None,
                        kind: str = "availability") -> pd.DataFrame:
        """Per offering: hours observed within [start, end), hours available, and their
        share (intervals clipped to the window)."""
        frame = self.intervals(cloud=cloud, zones=zones, instance_type=instance_type,
                               kind=kind, start=start, end=end)
        lo = frame["start"] if start is None else frame["start"].clip(lower=_ts(start))
        hi = frame["end"] if end is None else frame["end"].clip(upper=_ts(end))
        hours = (hi - lo).dt.total_seconds() / 3600
        frame = frame.assign(hours=hours, available_hours=hours.where(frame["available"], 0.0))
        out = frame.groupby(OFFERING, as_index=False)[["hours", "available_hours"]].sum()
        out["available_share"] = out["available_hours"] / out["hours"].where(out["hours"] > 0)
        return out

    def spells(self, *, cloud: str | None = None, zones: Sequence[str] | None = None,
               instance_type: str | None = None, kinds: Sequence[str] = RUNNING_KINDS,
               start: datetime | None = None, end: datetime | None = None) -> pd.DataFrame:
        """The running spells of the `preemption` and `probe` kinds as instance lifetimes
        (columns of `optimize.availability.lifetimes`, plus instance_type) within
        [start, end): a running interval ended by a not-running one of the same offering
        and source at its end was preempted, any other was still running when last seen
        (censored)."""
        key = ("spells", str(self.engine.url), frozen(dict(
            cloud=cloud, zones=zones, instance_type=instance_type, kinds=kinds,
            start=str(start), end=str(end))))
        return memo(key, lambda: self._spells(cloud, zones, instance_type, kinds, start, end))

    def _spells(self, cloud: str | None, zones: Sequence[str] | None,
                instance_type: str | None, kinds: Sequence[str], start: datetime | None,
                end: datetime | None) -> pd.DataFrame:
        frames = [self.intervals(cloud=cloud, zones=zones, instance_type=instance_type,
                                 kind=k, start=start, end=end) for k in _kinds(kinds)]
        if all(f.empty for f in frames):  # most stores: no lifetimes to read
            return _spells_frame(frames[0], np.zeros(0, dtype=bool))
        frame = pd.concat([f for f in frames if not f.empty], ignore_index=True)
        group = [*OFFERING, "kind", "source"]
        down = frame.loc[~frame["available"], [*group, "start"]].drop_duplicates()
        up = frame[frame["available"]]
        ended = (up[[*group, "end"]].merge(down.rename(columns={"start": "end"}), on=[
            *group, "end"], how="left", indicator=True)["_merge"] == "both").to_numpy()
        # Only the time within [start, end) counts; a life cut at `end` was not seen to end.
        if start is not None:
            up = up.assign(start=up["start"].clip(lower=_ts(start)))
        if end is not None:
            cut = (up["end"] > _ts(end)).to_numpy()
            up = up.assign(end=up["end"].clip(upper=_ts(end)))
            ended = ended & ~cut
        return _spells_frame(up, ended)

    def latest(self, at: datetime, *, zones: Sequence[str] | None = None,
               instance_type: str | None = None, cloud: str | None = None,
               kind: str = "availability") -> pd.DataFrame:
        """Per offering: its last observed state at or before `at` (the interval that
        started last by then): available, since (its start), until (its end), and current
        (True when `at` falls inside it, False when the observations stopped before)."""
        t = epoch_second(at, "at")
        conditions = [*_conditions(cloud, zones, instance_type, kind, None),
                      table.c.start_ts <= t]
        key = [table.c[c] for c in ["cloud", "region", "zone", "instance_type"]]
        newest = (select(*key, func.max(table.c.start_ts).label("newest"))
                  .where(*conditions).group_by(*key).subquery())
        query = (select(*(table.c[c] for c in [*OFFERING, "start_ts", "end_ts", "available"]))
                 .join(newest, (table.c.cloud == newest.c.cloud)
                       & (table.c.region == newest.c.region)
                       & (table.c.zone == newest.c.zone)
                       & (table.c.instance_type == newest.c.instance_type)
                       & (table.c.start_ts == newest.c.newest))
                 .where(*conditions)
                 .order_by(table.c.zone, table.c.instance_type, table.c.end_ts.desc()))
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        # Overlapping probe lifetimes may start together: the longest one speaks.
        newest, seen = [], set()
        for row in rows:
            if tuple(row[:4]) not in seen:  # (cloud, region, zone, instance_type)
                seen.add(tuple(row[:4]))
                newest.append(row)
        frame = frame_of_rows([*OFFERING, "start_ts", "end_ts", "available"], newest,
                              LATEST_COLUMNS[:-1], times={"start_ts": "since",
                                                          "end_ts": "until"}, types=_TYPES)
        frame["current"] = np.array([row[-2] > t for row in newest], dtype=bool)
        return frame

    def count(self) -> int:
        with self.engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(table)).scalar_one()


def _spells_frame(up: pd.DataFrame, ended: np.ndarray) -> pd.DataFrame:
    """The running intervals `up` as lifetimes, `ended` marking those preempted."""
    return pd.DataFrame({
        "cloud": up["cloud"].to_numpy(), "region": up["region"].to_numpy(),
        "zone": up["zone"].to_numpy(), "instance_type": up["instance_type"].to_numpy(),
        "gpu_model": up["gpu_model"].to_numpy(),
        "gpu_count": up["gpu_count"].to_numpy(dtype="int64"),
        "instance": (up["source"] + "@" + up["start"].astype(str)).to_numpy()
        if len(up) else np.array([], dtype=object),
        "start": up["start"].dt.as_unit("ns").array, "end": up["end"].dt.as_unit("ns").array,
        "preempted": ended.astype(bool),
    })


def _ts(at: datetime) -> pd.Timestamp:
    return pd.Timestamp(utc(at))


def _kinds(kinds: Sequence[str]) -> list[str]:
    for kind in kinds:
        _check_kind(kind)
    return list(kinds)


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise InvalidInput(f"availability kind {kind!r}: expected one of {', '.join(KINDS)}")


def _conditions(cloud: str | None, zones: Sequence[str] | None, instance_type: str | None,
                kind: str | None, source: str | None) -> list:
    conditions = [table.c.market == _MARKET]
    if kind is not None:
        _check_kind(kind)
        conditions.append(table.c.kind == kind)
    if cloud is not None:
        conditions.append(table.c.cloud == cloud)
    if zones is not None:
        conditions.append(table.c.zone.in_([zones] if isinstance(zones, str) else list(zones)))
    if instance_type is not None:
        conditions.append(table.c.instance_type == instance_type)
    if source is not None:
        conditions.append(table.c.source == source)
    return conditions


def _rows(frame: pd.DataFrame) -> pd.DataFrame:
    """An interval frame checked and turned into table rows (start_ts, end_ts)."""
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise InvalidInput(f"availability frame lacks columns: {', '.join(missing)}")
    rows = frame[COLUMNS].copy()
    if rows.empty:
        return rows.rename(columns={"start": "start_ts", "end": "end_ts"})
    if rows[COLUMNS].isna().any().any():
        column = rows.columns[rows.isna().any()][0]
        raise InvalidInput(f"availability {column} missing: expected a value in every row")
    for column, accepted in (("cloud", CLOUDS), ("kind", KINDS)):
        bad = rows[~rows[column].isin(accepted)]
        if not bad.empty:
            raise InvalidInput(f"availability {column} {bad[column].iloc[0]!r}: expected one "
                               f"of {', '.join(accepted)}")
    for column in ("region", "zone", "instance_type", "gpu_model", "source"):
        rows[column] = rows[column].astype(str)
        if (rows[column].str.strip() == "").any():
            raise InvalidInput(f"availability {column} '': expected a non-empty name")
    rows["start_ts"] = to_epoch_seconds(rows.pop("start"))
    rows["end_ts"] = to_epoch_seconds(rows.pop("end"))
    short = rows[rows["end_ts"] <= rows["start_ts"]]
    if not short.empty:
        first = short.iloc[0]
        raise InvalidInput(f"availability interval {first['zone']} from "
                           f"{pd.Timestamp(first['start_ts'], unit='s', tz='UTC')}: expected "
                           "an end after its start")
    rows["gpu_count"] = rows["gpu_count"].astype("int64")
    rows["available"] = rows["available"].astype(bool)
    return rows

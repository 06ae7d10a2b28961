"""Signals in the store: published spot risk observations (Spot Instance Advisor buckets,
spot placement scores, Azure eviction-rate buckets) and the throughputs costsched measured
from its own jobs' progress. Both keep their history; the decision model reads them
through `costsched.optimize.hazard` and `costsched.throughput`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta

from sqlalchemy import Engine, delete, func, insert, select, update

from costsched.lazy import pandas as pd
from costsched.model import CLOUDS, InvalidInput
from costsched.store.database import (
    epoch_second,
    insert_new,
    rows_frame,
    to_epoch_seconds,
)
from costsched.store.schema import measured_throughputs, risk_signals

# What a signal observation is: its kind and the values it takes.
SIGNAL_KINDS = {
    "advisor": "AWS Spot Instance Advisor interruption bucket (index 0-4: <5% .. >20%)",
    "placement": "EC2 spot placement score (1-10)",
    "eviction": "Azure spot eviction-rate bucket (index 0-4: 0-5% .. 20%+)",
}
SIGNAL_COLUMNS = ["cloud", "region", "zone", "instance_type", "os", "kind", "value", "label",
                  "observed_at", "source"]
THROUGHPUT_COLUMNS = ["id", "model", "gpu_model", "gpu_count", "precision",
                      "steps_per_second", "steps", "seconds", "measured_at", "instance",
                      "job_id", "placement_id"]
_SIGNAL_KEY = ["cloud", "region", "zone", "instance_type", "os", "kind", "observed_ts",
               "source"]


class SignalStore:
    """Published spot risk signals, one row per observation, history kept."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def add(self, frame: pd.DataFrame) -> int:
        """Store observations (columns SIGNAL_COLUMNS) in one transaction; one already
        stored (same offering, kind, time and source) is left as it is. The number added."""
        rows = _signal_rows(frame)
        if rows.empty:
            return 0
        with self.engine.begin() as conn:
            return insert_new(conn, risk_signals, rows, _SIGNAL_KEY)

    def history(self, *, cloud: str | None = None, kind: str | None = None) -> pd.DataFrame:
        """Every stored observation, oldest first."""
        query = select(risk_signals).order_by(risk_signals.c.observed_ts, risk_signals.c.id)
        if cloud is not None:
            query = query.where(risk_signals.c.cloud == cloud)
        if kind is not None:
            query = query.where(risk_signals.c.kind == kind)
        return _signals_frame(self.engine, query)

    def latest(self, at: datetime, max_age: timedelta = timedelta(days=30)) -> pd.DataFrame:
        """Per (offering, kind): the newest observation at or before `at` and no older than
        `max_age` (a stale signal says nothing about today)."""
        t = epoch_second(at, "at")
        window = [risk_signals.c.observed_ts <= t,
                  risk_signals.c.observed_ts >= t - int(max_age.total_seconds())]
        key = [risk_signals.c[c] for c in ("cloud", "region", "zone", "instance_type", "os",
                                           "kind")]
        newest = (select(*key, func.max(risk_signals.c.observed_ts).label("newest"))
                  .where(*window).group_by(*key).subquery())
        query = (select(risk_signals)
                 .join(newest, (risk_signals.c.cloud == newest.c.cloud)
                       & (risk_signals.c.region == newest.c.region)
                       & (risk_signals.c.zone == newest.c.zone)
                       & (risk_signals.c.instance_type == newest.c.instance_type)
                       & (risk_signals.c.os == newest.c.os)
                       & (risk_signals.c.kind == newest.c.kind)
                       & (risk_signals.c.observed_ts == newest.c.newest))
                 .order_by(risk_signals.c.id))
        frame = _signals_frame(self.engine, query)
        return frame.drop_duplicates(["cloud", "region", "zone", "instance_type", "os",
                                      "kind"], keep="last").reset_index(drop=True)

    def count(self) -> int:
        with self.engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(risk_signals)).scalar_one()


class MeasuredThroughputStore:
    """Steps per second measured on each placement of costsched's jobs."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def add(self, frame: pd.DataFrame) -> int:
        """`add_rows` of a frame's rows."""
        return 0 if frame.empty else self.add_rows(frame.to_dict("records"))

    def add_rows(self, records: Iterable[Mapping]) -> int:
        """Store measurements (THROUGHPUT_COLUMNS; an id is ignored) in one transaction:
        one of a placement measured before replaces it (a running placement is measured
        again as it goes on); one of a forgotten placement is dropped. The number
        stored."""
        rows = [{"model": str(r["model"]), "gpu_model": str(r["gpu_model"]),
                 "gpu_count": int(r["gpu_count"]), "precision": str(r["precision"]),
                 "steps_per_second": float(r["steps_per_second"]),
                 "steps": float(r["steps"]), "seconds": float(r["seconds"]),
                 "measured_ts": epoch_second(r["measured_at"]), "instance": str(r["instance"]),
                 "job_id": int(r["job_id"]), "placement_id": int(r["placement_id"])}
                for r in records]
        if not rows:
            return 0
        table = measured_throughputs
        with self.engine.begin() as conn:
            forgotten = {r[0] for r in conn.execute(
                select(table.c.placement_id).where(table.c.forgotten.is_(True)))}
            rows = [r for r in rows if r["placement_id"] not in forgotten]
            if rows:
                conn.execute(delete(table).where(
                    table.c.placement_id.in_([r["placement_id"] for r in rows])))
                conn.execute(insert(table), rows)
        return len(rows)

    def placements_measured(self) -> set[int]:
        """Placements measured or forgotten: not to be measured again."""
        with self.engine.connect() as conn:
            return {r[0] for r in conn.execute(select(measured_throughputs.c.placement_id))}

    def rows(self, model: str | None = None) -> pd.DataFrame:
        """The measurements not forgotten, newest first."""
        query = (select(*(measured_throughputs.c[c] for c in THROUGHPUT_COLUMNS
                          if c != "measured_at"), measured_throughputs.c.measured_ts)
                 .where(measured_throughputs.c.forgotten.is_(False))
                 .order_by(measured_throughputs.c.measured_ts.desc(),
                           measured_throughputs.c.id.desc()))
        if model is not None:
            query = query.where(measured_throughputs.c.model == model)
        with self.engine.connect() as conn:
            return rows_frame(conn.execute(query), THROUGHPUT_COLUMNS,
                              times={"measured_ts": "measured_at"}, types={"gpu_count": "int64"})

    def forget(self, *, model: str | None = None, gpu_model: str | None = None,
               gpu_count: int | None = None) -> int:
        """Forget the matching measurements (all when nothing is named): plans stop using
        them and their placements are not measured again. The number forgotten."""
        conditions = [measured_throughputs.c.forgotten.is_(False)]
        for column, value in (("model", model), ("gpu_model", gpu_model),
                              ("gpu_count", gpu_count)):
            if value is not None:
                conditions.append(measured_throughputs.c[column] == value)
        with self.engine.begin() as conn:
            return conn.execute(update(measured_throughputs).where(*conditions)
                                .values(forgotten=True)).rowcount

    def purge(self) -> int:
        """Delete every row, forgotten ones too (placements may then be measured again)."""
        with self.engine.begin() as conn:
            return conn.execute(delete(measured_throughputs)).rowcount


def _signals_frame(engine: Engine, query) -> pd.DataFrame:  # noqa: ANN001 - a Select
    with engine.connect() as conn:
        return rows_frame(conn.execute(query), SIGNAL_COLUMNS,
                          times={"observed_ts": "observed_at"}, types={"value": "float"})


def _signal_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """An observation frame checked and turned into table rows (observed_ts)."""
    missing = [c for c in SIGNAL_COLUMNS if c not in frame.columns]
    if missing:
        raise InvalidInput(f"risk signals lack columns: {', '.join(missing)}")
    rows = frame[SIGNAL_COLUMNS].copy()
    if rows.empty:
        return rows.rename(columns={"observed_at": "observed_ts"})
    bad = rows[~rows["cloud"].isin(CLOUDS)]
    if not bad.empty:
        raise InvalidInput(f"risk signal cloud {bad['cloud'].iloc[0]!r}: expected one of "
                           f"{', '.join(CLOUDS)}")
    bad = rows[~rows["kind"].isin(SIGNAL_KINDS)]
    if not bad.empty:
        raise InvalidInput(f"risk signal kind {bad['kind'].iloc[0]!r}: expected one of "
                           f"{', '.join(SIGNAL_KINDS)}")
    for column in ("region", "instance_type", "source"):
        if (rows[column].astype(str).str.strip() == "").any():
            raise InvalidInput(f"risk signal {column} '': expected a non-empty name")
    rows["value"] = pd.to_numeric(rows["value"], errors="coerce")
    if rows["value"].isna().any():
        raise InvalidInput("risk signal value: expected a number in every row")
    rows["zone"] = rows["zone"].fillna("").astype(str)
    rows["observed_ts"] = to_epoch_seconds(rows.pop("observed_at"))
    return rows

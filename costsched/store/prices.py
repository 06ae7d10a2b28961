"""Price history store: offerings and their price observations in any SQLAlchemy database.

Writes are idempotent (keyed on offering and effective time) and transactional (a batch
lands whole or not at all). Reads return pandas DataFrames.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, NamedTuple

from sqlalchemy import (
    Connection,
    Engine,
    Insert,
    Row,
    Table,
    bindparam,
    func,
    insert,
    select,
    text,
)

from costsched.frames import OFFERING_ATTRS, OFFERING_KEY
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.model import InvalidInput, PriceObservation
from costsched.passes import frozen, memo
from costsched.spot_market import NEWEST_SPOT_SQL, PARTIAL, stored_spot_markets
from costsched.store import database, zones
from costsched.store.database import (  # noqa: F401 - re-exported: the store's public names
    ENV_DB,
    default_url,
    dialect_insert,
    epoch_second,
    frame_of_rows,
    from_epoch_seconds,
    resolve_url,
    to_epoch_seconds,
)
from costsched.store.jobs import JobStore
from costsched.store.schema import offerings, prices
from costsched.store.signals import MeasuredThroughputStore, SignalStore
from costsched.store.spot_availability import SpotAvailabilityStore

if TYPE_CHECKING:
    from costsched.store.availability import AvailabilityStore
    from costsched.store.booked import BookedStore
    from costsched.store.daemons import DaemonRecords
    from costsched.store.decisions import DecisionStore
    from costsched.store.leases import Leases, TaskRuns
    from costsched.store.moves import MoveStore
    from costsched.store.quotas import QuotaStore
    from costsched.store_limits import StoreLimits

# The columns of an observation frame: what importers and collectors hand to `ingest`.
OBSERVATION_COLUMNS = [*OFFERING_KEY, *OFFERING_ATTRS, "usd_per_hour", "effective_at", "source"]
_INSERT_CHUNK = 50_000


@dataclass(frozen=True)
class IngestResult:
    inserted: int
    unchanged: int

    @property
    def total(self) -> int:
        return self.inserted + self.unchanged


class PriceStore:
    """The price history of every offering, in the database at `url`; the zones that offer
    regionally priced offerings (`record_zones`, `zones`); the job store (`jobs`)."""

    def __init__(self, url: str | None = None, *, migrate: bool = True,
                 limits: StoreLimits | None = None) -> None:
        self.url = resolve_url(url) if url else default_url()
        # limits: how long to wait for it (the configuration's [store] section; default:
        # `costsched.store_limits.DEFAULT_LIMITS`, reading no configuration).
        self.engine: Engine = database.make_engine(self.url, limits)
        if migrate:
            try:
                self.upgrade()
            except BaseException:
                self.engine.dispose()
                raise

    @property
    def where(self) -> str:
        """Where the store is, for output: a SQLite file's path, else its URL with the
        password masked (`url` holds the password)."""
        return database.describe(self.url)

    @cached_property
    def jobs(self) -> JobStore:
        """The job store in the same database."""
        return JobStore(self.engine)

    @cached_property
    def availability(self) -> AvailabilityStore:
        """Capacity errors, preemptions and launches seen by the launchers."""
        from costsched.store.availability import AvailabilityStore

        return AvailabilityStore(self.engine)

    @cached_property
    def booked(self) -> BookedStore:
        """Capacity booked ahead: offerings seen (capacity blocks, reservations) and the
        bookings made for jobs."""
        from costsched.store.booked import BookedStore

        return BookedStore(self.engine)

    @cached_property
    def spot_availability(self) -> SpotAvailabilityStore:
        """Spot availability over time (traces and probe logs), as intervals per offering."""
        return SpotAvailabilityStore(self.engine)

    @cached_property
    def signals(self) -> SignalStore:
        """Published spot risk signals (advisor buckets, placement scores, eviction rates)."""
        return SignalStore(self.engine)

    @cached_property
    def quotas(self) -> QuotaStore:
        """The accounts' quotas as last read, and the launches they refused."""
        from costsched.store.quotas import QuotaStore

        return QuotaStore(self.engine)

    @cached_property
    def measured_throughputs(self) -> MeasuredThroughputStore:
        """Steps per second costsched measured on its jobs' placements."""
        return MeasuredThroughputStore(self.engine)

    @cached_property
    def decisions(self) -> DecisionStore:
        """The decider's latest decision on each job (what `status` shows as next)."""
        from costsched.store.decisions import DecisionStore

        return DecisionStore(self.engine)

    @cached_property
    def moves(self) -> MoveStore:
        """The job moves in progress or done (launches, migrations, recoveries)."""
        from costsched.store.moves import MoveStore

        return MoveStore(self.engine)

    @cached_property
    def leases(self) -> Leases:
        """Named leases that keep two daemons from running the same task or move at once."""
        from costsched.store.leases import Leases

        return Leases(self.engine)

    @cached_property
    def daemons(self) -> DaemonRecords:
        """The daemons running now: their process, log, heartbeat and last look at jobs."""
        from costsched.store.daemons import DaemonRecords

        return DaemonRecords(self.engine)

    @cached_property
    def task_runs(self) -> TaskRuns:
        """The scheduled optimizer's record of its task runs."""
        from costsched.store.leases import TaskRuns

        return TaskRuns(self.engine)

    # --- schema ---------------------------------------------------------------------

    def upgrade(self) -> None:
        """Bring the schema to the newest Alembic revision (a no-op when it is there)."""
        database.upgrade(self.engine)

    def revision(self) -> str | None:
        return database.revision(self.engine)

    # --- writes ---------------------------------------------------------------------

    def ingest(self, observations: pd.DataFrame | Iterable[PriceObservation]) -> IngestResult:
        """Store observations in one transaction; rows already stored are left as they are."""
        frame = (
            observations
            if isinstance(observations, pd.DataFrame)
            else observations_frame(observations)
        )
        missing = [c for c in OBSERVATION_COLUMNS if c not in frame.columns]
        if missing:
            raise InvalidInput(f"observation frame lacks columns: {', '.join(missing)}")
        if frame.empty:
            return IngestResult(0, 0)
        _check_prices(frame["usd_per_hour"])
        # One row per (offering, time) within the batch too: the first one wins, as in the store.
        frame = frame.assign(effective_ts=to_epoch_seconds(frame["effective_at"]))
        frame = frame.drop_duplicates([*OFFERING_KEY, "effective_ts"])
        inserted = database.write(self.engine, lambda conn: self._ingest(conn, frame))
        return IngestResult(inserted=inserted, unchanged=len(frame) - inserted)

    def mark_partial(self, observations: pd.DataFrame, partial: bool = True) -> int:
        """Mark the stored prices that `observations` (an observation frame) repeat, the same
        price at the same offering and time, as a partial update's (`spot_market.PARTIAL`),
        in one transaction; the number marked. Only the source's mark changes: a price and
        its time are never rewritten, and a row stored with another price (the first one
        stored wins) is left as it is. Prices marked so stand for no cloud's whole spot
        market, which is how a file imported whole is taken back. `partial` False takes the
        mark off instead (`prices import --whole`): the prices then stand for the market."""
        if observations.empty:
            return 0
        frame = observations.assign(effective_ts=to_epoch_seconds(observations["effective_at"]))
        if partial:
            marked = (text(f"substr('{PARTIAL}' || source, 1, :width)")
                      .bindparams(width=prices.c.source.type.length))
            changes = prices.c.source.not_like(f"{PARTIAL}%")
        else:
            marked = func.substr(prices.c.source, len(PARTIAL) + 1)
            changes = prices.c.source.like(f"{PARTIAL}%")
        statement = (
            prices.update()
            .where(prices.c.offering_id == bindparam("id"),
                   prices.c.effective_ts == bindparam("ts"),
                   func.abs(prices.c.usd_per_hour - bindparam("usd")) < 1e-9, changes)
            .values(source=marked)
        )

        def update(conn: Connection) -> int:
            known = frame.merge(self._offering_index(conn), on=OFFERING_KEY, how="inner")
            rows = [{"id": int(i), "ts": int(t), "usd": float(u)} for i, t, u in
                    zip(known["id"], known["effective_ts"], known["usd_per_hour"],
                        strict=True)]
            if not rows:
                return 0
            if not conn.dialect.supports_sane_multi_rowcount:  # a row at a time: counted
                return sum(conn.execute(statement, row).rowcount for row in rows)
            return sum(conn.execute(statement, rows[start:start + _INSERT_CHUNK]).rowcount
                       for start in range(0, len(rows), _INSERT_CHUNK))

        return database.write(self.engine, update)

    def _ingest(self, conn: Connection, frame: pd.DataFrame) -> int:
        """Store a checked, deduplicated frame inside the caller's write transaction; the
        number of rows inserted."""
        ids = self._offering_ids(conn, frame)
        rows = pd.DataFrame(
            {
                "offering_id": ids,
                "effective_ts": frame["effective_ts"].to_numpy(),
                "usd_per_hour": frame["usd_per_hour"].to_numpy(dtype=float),
                "source": frame["source"].astype(str).to_numpy(),
            }
        )
        return self._insert_prices(conn, rows)

    def record_zones(self, frame: pd.DataFrame, at: datetime) -> int:
        """Record the zones that offer regionally priced offerings (frame columns cloud,
        region, zone, instance_type, market) as seen at `at`; the number of zones recorded.
        See `zones.record_zones`."""
        return zones.record_zones(self.engine, frame, at)

    def _offering_ids(self, conn: Connection, frame: pd.DataFrame) -> np.ndarray:
        """The id of each row's offering, creating the offerings not stored yet.

        Insert-if-absent: an offering another writer created meanwhile is left as it is
        (ON CONFLICT DO NOTHING), then every id is read back. Sorted by key, so that
        concurrent writers lock new offerings in one order (no deadlock)."""
        wanted = frame[OFFERING_KEY + OFFERING_ATTRS].drop_duplicates(OFFERING_KEY)
        known = self._offering_index(conn)
        merged = wanted.merge(known, on=OFFERING_KEY, how="left")
        new = merged[merged["id"].isna()][OFFERING_KEY + OFFERING_ATTRS]
        if not new.empty:
            records = new.astype({"gpu_count": int, "vcpus": int, "memory_gb": float})
            records = records.sort_values(OFFERING_KEY)
            conn.execute(_insert_if_absent(conn, offerings, OFFERING_KEY),
                         records.to_dict("records"))
            known = self._offering_index(conn)
        ids = frame[OFFERING_KEY].merge(known, on=OFFERING_KEY, how="left")["id"]
        return ids.to_numpy(dtype="int64")

    @staticmethod
    def _offering_index(conn: Connection) -> pd.DataFrame:
        cols = [offerings.c.id, *(offerings.c[k] for k in OFFERING_KEY)]
        result = conn.execute(select(*cols))
        return pd.DataFrame(result.fetchall(), columns=["id", *OFFERING_KEY])

    def _insert_prices(self, conn: Connection, rows: pd.DataFrame) -> int:
        """Insert rows whose (offering, time) is not stored yet; the number inserted."""
        columns = ["offering_id", "effective_ts", "usd_per_hour", "source"]
        rows = rows.sort_values(["offering_id", "effective_ts"])  # B-tree order: local writes
        records = list(zip(*(rows[c].tolist() for c in columns), strict=True))
        if (self.engine.dialect.name, self.engine.dialect.driver) == ("postgresql", "psycopg"):
            return _copy_insert_postgresql(conn, columns, records)
        if self.engine.dialect.name in ("sqlite", "postgresql"):
            # Straight to the DB-API cursor inside the same transaction: SQLAlchemy's
            # per-row parameter handling would cost more than the insert itself.
            marker = "?" if self.engine.dialect.paramstyle in ("qmark", "numeric") else "%s"
            sql = (
                f"INSERT INTO prices ({', '.join(columns)}) VALUES "
                f"({', '.join([marker] * len(columns))}) "
                "ON CONFLICT (offering_id, effective_ts) DO NOTHING"
            )
            cursor = conn.connection.cursor()
            inserted = 0
            for start in range(0, len(records), _INSERT_CHUNK):
                cursor.executemany(sql, records[start : start + _INSERT_CHUNK])
                inserted += cursor.rowcount
            cursor.close()
            return inserted
        # Any other database: insert only the keys that are not there yet.
        fresh = self._drop_stored(conn, rows)
        if fresh.empty:
            return 0
        conn.execute(insert(prices), fresh[columns].to_dict("records"))
        return len(fresh)

    @staticmethod
    def _drop_stored(conn: Connection, rows: pd.DataFrame) -> pd.DataFrame:
        ids = [int(i) for i in rows["offering_id"].unique()]
        stored = pd.DataFrame(
            conn.execute(
                select(prices.c.offering_id, prices.c.effective_ts).where(
                    prices.c.offering_id.in_(ids)
                )
            ).fetchall(),
            columns=["offering_id", "effective_ts"],
        )
        merged = rows.merge(stored, how="left", indicator=True)
        return rows[(merged["_merge"] == "left_only").to_numpy()]

    # --- reads ----------------------------------------------------------------------

    def count(self) -> int:
        with self.engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(prices)).scalar_one()

    def offerings(self, **filters: str | Sequence[str] | None) -> pd.DataFrame:
        """Stored offerings matching the filters (see `_where`)."""
        return pd.DataFrame([tuple(r) for r in self.offering_rows(**filters)],
                            columns=list(offerings.c.keys()))

    def offering_rows(self, **filters: str | Sequence[str] | None) -> list[Row]:
        """`offerings` as rows (the table's columns, by name), for a caller that needs no
        frame."""
        query = select(offerings).where(*_where(filters))
        with self.engine.connect() as conn:
            return list(conn.execute(query))

    def zones(
        self,
        *,
        cloud: str | Sequence[str] | None = None,
        region: str | Sequence[str] | None = None,
        instance_type: str | Sequence[str] | None = None,
        market: str | Sequence[str] | None = None,
        seen_since: datetime | None = None,
    ) -> pd.DataFrame:
        """Recorded zones: cloud, region, zone, instance_type, market, first_seen, last_seen."""
        return zones.zones(self.engine, cloud=cloud, region=region,
                           instance_type=instance_type, market=market, seen_since=seen_since)

    def as_of(self, at: datetime, **filters: str | Sequence[str] | None) -> pd.DataFrame:
        """The price of every matching offering at `at`: its last observation at or before it."""
        return _price_frame(self.as_of_rows(at, **filters))

    def as_of_rows(self, at: datetime, **filters: str | Sequence[str] | None) -> PriceRows:
        """`as_of` as rows (PriceRows), for a caller that needs no frame."""
        t = _second(at)
        # The newest time at or before t of each offering: one index seek each.
        latest_ts = (
            select(func.max(prices.c.effective_ts))
            .where(prices.c.offering_id == offerings.c.id, prices.c.effective_ts <= t)
            .correlate(offerings)
            .scalar_subquery()
        )
        columns = (prices.c.usd_per_hour, prices.c.effective_ts, prices.c.source)
        # Then the price row at that key. The planners need different shapes to stay on
        # index seeks (measured on 1,000 offerings x 1,000,000 rows): SQLite flattens a
        # subquery that carries the offering columns and scans all prices (650 ms vs 4 ms);
        # PostgreSQL misestimates a second join back to offerings (40 ms vs 11 ms).
        if self.engine.dialect.name == "sqlite":
            latest = select(offerings.c.id.label("oid"), latest_ts.label("ts")).where(
                *_where(filters)).subquery()
            query = (
                select(offerings, *columns)
                .select_from(latest)
                .join(prices, (prices.c.offering_id == latest.c.oid)
                      & (prices.c.effective_ts == latest.c.ts))
                .join(offerings, offerings.c.id == latest.c.oid)
            )
        else:
            latest = select(offerings, latest_ts.label("ts")).where(*_where(filters)).subquery()
            query = (
                select(*(latest.c[column.name] for column in offerings.c), *columns)
                .select_from(latest)
                .join(prices, (prices.c.offering_id == latest.c.id)
                      & (prices.c.effective_ts == latest.c.ts))
            )
        return memo(("as_of", self.url, t, frozen(filters)), lambda: self._price_rows(query),
                    shared=True)

    def spot_markets(self, at: datetime) -> dict[str, datetime]:
        """The clouds whose spot market the store holds at `at`, each with its newest spot
        price at or before it, over every spot offering (`costsched.spot_market`)."""
        t = _second(at)

        def read() -> dict[str, datetime]:
            with self.engine.connect() as conn:
                return stored_spot_markets(conn.execute(text(NEWEST_SPOT_SQL), {"at": t}))

        return memo(("spot_markets", self.url, t), read, shared=True)

    def span(self, **filters: str | Sequence[str] | None) -> tuple[int, int] | None:
        """Epoch seconds of the first and the last observation of the matching offerings
        (None when there is none): one indexed aggregate, no rows read out."""
        query = (select(func.min(prices.c.effective_ts), func.max(prices.c.effective_ts))
                 .join(offerings, prices.c.offering_id == offerings.c.id)
                 .where(*_where(filters)))
        with self.engine.connect() as conn:
            first, last = conn.execute(query).one()
        return None if first is None else (int(first), int(last))

    def history(
        self,
        start: datetime | None = None,
        end: datetime | None = None,
        **filters: str | Sequence[str] | None,
    ) -> pd.DataFrame:
        """Every observation of the matching offerings in [start, end], oldest first."""
        return _price_frame(self.history_rows(start, end, **filters))

    def history_rows(self, start: datetime | None = None, end: datetime | None = None,
                     **filters: str | Sequence[str] | None) -> PriceRows:
        """`history` as rows (PriceRows), for a caller that needs no frame."""
        conditions = list(_where(filters))
        if start is not None:
            conditions.append(prices.c.effective_ts >= _second(start))
        if end is not None:
            conditions.append(prices.c.effective_ts <= _second(end))
        query = (
            select(offerings, prices.c.usd_per_hour, prices.c.effective_ts, prices.c.source)
            .join(prices, prices.c.offering_id == offerings.c.id)
            .where(*conditions)
            .order_by(offerings.c.id, prices.c.effective_ts)
        )
        key = ("history", self.url, str(start), str(end), frozen(filters))
        return memo(key, lambda: self._price_rows(query), shared=True)

    def _price_rows(self, query) -> PriceRows:  # noqa: ANN001 - a SQLAlchemy Select
        with self.engine.connect() as conn:
            result = conn.execute(query)
            # Plain tuples: pandas probes each SQLAlchemy Row for attributes, slowly.
            return PriceRows(tuple(result.keys()), tuple(tuple(r) for r in result))

    def observations(self) -> pd.DataFrame:
        """The whole store as an observation frame (the export format)."""
        frame = self.history()
        return frame[OBSERVATION_COLUMNS]

    def dispose(self) -> None:
        self.engine.dispose()


def _copy_insert_postgresql(conn: Connection, columns: list[str], records: list[tuple]) -> int:
    """PostgreSQL: COPY the batch into a temporary table, then one INSERT ... SELECT."""
    names = ", ".join(columns)
    cursor = conn.connection.cursor()
    # DDL is transactional here: a failed batch rolls this table back with the rest; the
    # DROP below lets a second batch of the same transaction create it again.
    cursor.execute(
        f"CREATE TEMPORARY TABLE prices_batch AS SELECT {names} FROM prices WITH NO DATA"
    )
    with cursor.copy(f"COPY prices_batch ({names}) FROM STDIN") as copy:
        for record in records:
            copy.write_row(record)
    cursor.execute(
        f"INSERT INTO prices ({names}) SELECT {names} FROM prices_batch "
        "ON CONFLICT (offering_id, effective_ts) DO NOTHING"
    )
    inserted = cursor.rowcount
    cursor.execute("DROP TABLE prices_batch")
    cursor.close()
    return inserted


def _insert_if_absent(conn: Connection, table: Table, key: list[str]) -> Insert:
    """An INSERT that skips rows whose `key` is stored (SQLite, PostgreSQL); a plain
    INSERT elsewhere."""
    if conn.dialect.name not in ("sqlite", "postgresql"):
        return insert(table)
    return dialect_insert(conn.dialect.name)(table).on_conflict_do_nothing(index_elements=key)


class PriceRows(NamedTuple):
    """Price reads as rows: `columns` (the offering's, then usd_per_hour, effective_ts in
    epoch seconds, source) and a tuple per observation."""

    columns: tuple[str, ...]
    rows: tuple[tuple, ...]


def _second(at: object) -> int:
    """A time as epoch seconds: a datetime without pandas, anything else through it."""
    if isinstance(at, datetime) and at == at:  # not NaT
        return epoch_second(at)
    return int(to_epoch_seconds([at])[0])


def _price_frame(read: PriceRows) -> pd.DataFrame:
    """A price read as the frame the store's readers return (offering_id, effective_at)."""
    keys = ["offering_id" if c == "id" else c for c in read.columns]
    return frame_of_rows(keys, read.rows, [*(k for k in keys if k != "effective_ts"),
                                           "effective_at"], times={"effective_ts": "effective_at"})


def _where(filters: dict[str, str | Sequence[str] | None]) -> list:
    """Conditions on offering columns; a value may be one string or a list of them."""
    conditions = []
    for name, value in filters.items():
        if value is None or (not isinstance(value, str) and len(value) == 0):
            continue
        if name not in offerings.c:
            known = ", ".join(offerings.c.keys())
            raise InvalidInput(f"unknown filter {name!r}: expected one of {known}")
        column = offerings.c[name]
        values = [value] if isinstance(value, (str, int)) else list(value)
        conditions.append(column.in_(values))
    return conditions


def _check_prices(values: pd.Series) -> None:
    numbers = pd.to_numeric(values, errors="coerce")
    bad = ~np.isfinite(numbers.to_numpy(dtype=float)) | (numbers.to_numpy(dtype=float) <= 0)
    if bad.any():
        first = values[bad].iloc[0]
        raise InvalidInput(f"price {first!r}: expected a positive, finite USD/hour")


def observations_frame(observations: Iterable[PriceObservation]) -> pd.DataFrame:
    """An observation frame from PriceObservation objects."""
    rows = []
    for obs in observations:
        o = obs.offering
        rows.append(
            (o.cloud, o.region, o.zone, o.instance_type, o.market, o.os, o.gpu_model,
             o.gpu_count, o.vcpus, o.memory_gb, obs.usd_per_hour, obs.effective_at, obs.source)
        )
    frame = pd.DataFrame(rows, columns=OBSERVATION_COLUMNS)
    frame["effective_at"] = pd.to_datetime(frame["effective_at"], utc=True)
    return frame

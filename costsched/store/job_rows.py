"""A job as stored, and the pieces every job-store write shares: the rows' columns, the
checks of what is written, and the reads and writes made inside a caller's transaction."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import NamedTuple

from sqlalchemy import (
    BigInteger,
    Boolean,
    ColumnElement,
    Connection,
    Engine,
    Row,
    Select,
    Table,
    any_,
    bindparam,
    insert,
    select,
    true,
    update,
)
from sqlalchemy.ext.compiler import compiles

from costsched.lazy import pandas as pd
from costsched.model import FINAL_STATES, JOB_STATES, InvalidInput, TryAgain
from costsched.passes import memo
from costsched.store.database import frame_of_rows, from_epoch_second
from costsched.store.schema import job_events, jobs, placements
from costsched.work import steps_total

PLACEMENT_COLUMNS = [
    "id", "job_id", "cloud", "region", "zone", "instance_type", "market", "os", "gpu_model",
    "gpu_count", "start_at", "end_at", "usd_per_hour", "reason", "instance", "waiting",
]
EVENT_COLUMNS = ["id", "job_id", "at", "kind", "from_state", "to_state", "detail"]


class EventRow(NamedTuple):
    """One event of a job's log (EVENT_COLUMNS), `at` a UTC datetime."""

    id: int
    job_id: int
    at: datetime
    kind: str
    from_state: str | None
    to_state: str | None
    detail: str | None

class PlacementRow(NamedTuple):
    """One placement (PLACEMENT_COLUMNS): `start_at` a UTC datetime, `end_at` one or None
    while it is open; `waiting` while its instance waits for capacity (not yet billed)."""

    id: int
    job_id: int
    cloud: str
    region: str
    zone: str
    instance_type: str
    market: str
    os: str
    gpu_model: str
    gpu_count: int
    start_at: datetime
    end_at: datetime | None
    usd_per_hour: float
    reason: str
    instance: str
    waiting: bool

    @property
    def offering_key(self) -> tuple[str, str, str, str, str, str]:
        """(cloud, region, zone, instance_type, market, os), as `Offering.key`."""
        return (self.cloud, self.region, self.zone, self.instance_type, self.market, self.os)


def placement_frame(rows: Iterable[tuple], extra: Iterable[str] = ()) -> pd.DataFrame:
    """Rows that start as PlacementRow (then `extra` columns) as a frame: times as UTC
    timestamps, end_at NaT while open (the store's placement frames)."""
    columns = [*PLACEMENT_COLUMNS, *extra]
    start, end = columns.index("start_at"), columns.index("end_at")
    return frame_of_rows(columns, [(*r[:start], _epoch(r[start]),
                                    None if r[end] is None else _epoch(r[end]), *r[end + 1:])
                                   for r in rows], columns,
                         times={"start_at": "start_at", "end_at": "end_at"},
                         types={"waiting": "bool"})


def _epoch(at: datetime) -> int:
    return int(at.timestamp())


# A placement's step readings (`JobStore.readings`): `id` is the placement's.
READING_COLUMNS = ["id", "job_id", "first_step", "first_at", "last_step", "last_at"]
PREDICTION_COLUMNS = [
    "job_id", "predicted_at", "model", "cloud", "region", "zone", "instance_type", "market",
    "gpu_model", "gpu_count", "usd_per_hour", "steps", "steps_per_second",
    "throughput_source", "expected_hours", "expected_usd", "expected_preemptions",
    "flagged_at",
]
JOB_COLUMNS = [
    "id", "name", "state", "policy", "steps_total", "steps_done", "checkpoint_location",
    "checkpoint_step", "created_at", "updated_at", "spec",
]
# Ids per IN (...) list of a set-based read: well under SQLite's bound on query parameters.
ID_CHUNK = 5000


class StaleState(TryAgain):  # noqa: N818 - the name says what happened
    """The job was not in the expected state: another writer moved it first (a command
    that meets it says so in the job's words: `service.jobs.busy`)."""


class NameTaken(InvalidInput):  # noqa: N818 - the name says what happened
    """A live (not yet ended) job has this name already: one live job per name."""

    def __init__(self, name: str, job_id: int | None, state: str) -> None:
        which = f"job {job_id} of that name is {state}" if job_id is not None else \
            "a job of that name is live"
        super().__init__(f"job name {name!r}: {which}; stop it first or choose another name")
        self.job_id = job_id


@dataclass(frozen=True)
class JobRecord:
    """One job as stored."""

    id: int
    name: str
    spec: dict
    state: str
    policy: str
    steps_total: float | None  # None: its work is not given (`work.steps_total`)
    steps_done: float  # the step the job last reported (0: none reported yet)
    checkpoint_location: str
    checkpoint_step: float | None  # the newest verified checkpoint's step
    created_at: datetime
    updated_at: datetime

    @property
    def final(self) -> bool:
        return self.state in FINAL_STATES


def id_chunks(ids: Iterable[int] | None, column) -> Iterator:  # noqa: ANN001 - a Column
    """WHERE clauses that together select `ids` of `column` (every row when None)."""
    if ids is None:
        yield true()
        return
    wanted = sorted({int(i) for i in ids})
    for start in range(0, len(wanted), ID_CHUNK):
        yield _Among(column, wanted[start:start + ID_CHUNK])


class _Among(ColumnElement):
    """`column IN (ids)`; on PostgreSQL `column = ANY(ids)`, the ids as one array: an IN
    list of thousands of ids is parsed by the driver and planned by the server id by id."""

    type = Boolean()
    inherit_cache = False  # its ids are not part of a cached statement's key

    def __init__(self, column, ids: list[int]) -> None:  # noqa: ANN001 - a Column
        self.column, self.ids = column, ids


@compiles(_Among)
def _in_list(element: _Among, compiler, **kw) -> str:  # noqa: ANN001 - a SQL compiler
    return compiler.process(element.column.in_(element.ids), **kw)


@compiles(_Among, "postgresql")
def _any_of(element: _Among, compiler, **kw) -> str:  # noqa: ANN001 - a SQL compiler
    from sqlalchemy.dialects.postgresql import ARRAY  # PostgreSQL's own: loaded when used

    ids = bindparam(None, element.ids, type_=ARRAY(BigInteger), unique=True)
    return compiler.process(element.column == any_(ids), **kw)


def read_rows(engine: Engine, query: Select, table: Table, job_ids: Iterable[int] | None
              ) -> list[Row]:
    """`query`'s rows of `table` for `job_ids` (every job's when None), read in IN lists
    of at most ID_CHUNK ids."""
    with engine.connect() as conn:
        return [r for chunk in id_chunks(job_ids, table.c.job_id)
                for r in conn.execute(query.where(chunk))]




# --- helpers (inside the caller's transaction) ----------------------------------------------


def _state(conn: Connection, job_id: int, *, lock: bool = False) -> str:
    """The job's state; with `lock`, its row stays locked until the transaction ends
    (PostgreSQL; SQLite's write transactions hold the whole database already)."""
    query = select(jobs.c.state).where(jobs.c.id == int(job_id))
    state = conn.execute(query.with_for_update() if lock else query).scalar()
    if state is None:
        raise InvalidInput(f"job {job_id}: no such job in the store")
    return state


def _touch(conn: Connection, job_id: int, ts: int, **values: object) -> str:
    """Set `values` and updated_ts on the job; its state. Being an UPDATE, it also locks
    the job's row (PostgreSQL) or the database (SQLite) until the transaction ends, so
    the writes that follow see no concurrent change of the job."""
    moved = conn.execute(
        update(jobs).where(jobs.c.id == int(job_id)).values(updated_ts=ts, **values)
    ).rowcount
    if moved != 1:
        raise InvalidInput(f"job {job_id}: no such job in the store")
    return _state(conn, job_id)


def _close(conn: Connection, job_id: int, ts: int, instance: str | None = None) -> int | None:
    """End the job's open placement (on `instance`, if given; else the oldest open) at
    `ts`; its id, or None when none is open."""
    query = (select(placements.c.id, placements.c.start_ts)
             .where(placements.c.job_id == int(job_id), placements.c.end_ts.is_(None))
             .order_by(placements.c.start_ts, placements.c.id))
    if instance is not None:
        query = query.where(placements.c.instance == instance)
    open_ = conn.execute(query).first()
    if open_ is None:
        return None
    if ts < open_.start_ts:
        raise InvalidInput(
            f"time {from_epoch_second(ts)}: expected at or after the start of"
            f" placement {open_.id} ({from_epoch_second(open_.start_ts)})"
        )
    conn.execute(update(placements).where(placements.c.id == open_.id).values(end_ts=ts))
    return int(open_.id)


def _event(conn: Connection, job_id: int, ts: int, kind: str, from_state: str | None,
           to_state: str | None, detail: str) -> None:
    conn.execute(insert(job_events).values(job_id=int(job_id), ts=ts, kind=kind,
                                           from_state=from_state, to_state=to_state,
                                           detail=detail))


def _record(conn: Connection, job_id: int) -> JobRecord:
    row = conn.execute(select(jobs).where(jobs.c.id == int(job_id))).mappings().first()
    if row is None:
        raise InvalidInput(f"job {job_id}: no such job in the store")
    return _to_record(row)


def _to_record(row) -> JobRecord:  # noqa: ANN001 - a SQLAlchemy RowMapping
    spec = _spec(row["spec"])
    return JobRecord(
        id=int(row["id"]), name=row["name"], spec=spec, state=row["state"],
        policy=row["policy"], steps_total=steps_total(spec, row["steps_total"]),
        steps_done=float(row["steps_done"]), checkpoint_location=row["checkpoint_location"],
        checkpoint_step=(None if row["checkpoint_step"] is None
                         else float(row["checkpoint_step"])),
        created_at=_utc(row["created_ts"]), updated_at=_utc(row["updated_ts"]),
    )


def _spec(stored: str) -> dict:
    """A stored spec parsed: in a pass, once per text however often its job is read (its
    records share it; nothing changes a record's spec)."""
    return memo(("stored spec", stored), lambda: json.loads(stored), shared=True)


def _utc(epoch_second: int) -> datetime:
    # The standard library's conversion: pandas' costs ~0.3 ms a call, paid per job listed.
    return datetime.fromtimestamp(int(epoch_second), timezone.utc)


def _check_states(what: str, states: str | Iterable[str]) -> tuple[str, ...]:
    states = (states,) if isinstance(states, str) else tuple(states)
    for state in states:
        if state not in JOB_STATES:
            stopped = "; a job its user stopped is 'stopped'" if state == "cancelled" else ""
            raise InvalidInput(f"{what} {state!r}: expected one of {', '.join(JOB_STATES)}"
                               f"{stopped}")
    return states


def _check_text(what: str, value: object, limit: int | None, *, required: bool = False) -> None:
    if not isinstance(value, str) or (required and not value.strip()):
        raise InvalidInput(f"{what} {value!r}: expected a non-empty text" if required
                           else f"{what} {value!r}: expected a text")
    if limit is not None and len(value) > limit:
        raise InvalidInput(f"{what} {value[:40]!r}...: expected at most {limit} characters")


def _number(what: str, value: object, *, positive: bool = False) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        number = math.nan
    if not math.isfinite(number) or number < 0 or (positive and number == 0):
        accepted = "a positive, finite number" if positive else "a finite number >= 0"
        raise InvalidInput(f"{what} {value!r}: expected {accepted}")
    return number

"""Job store: jobs, their placements on offerings, and an append-only log of what happened.

Every write is one transaction together with its event row, so the log and the state
never disagree. A state change reads the job's state under a lock (SELECT ... FOR UPDATE on
PostgreSQL; the database's write lock, taken at BEGIN, on SQLite) and then sets it, so two
writers cannot both move a job from the same state; the UPDATE is also a compare-and-set
(WHERE state = the state read). Writes that lose a race to a lock are run again
(`database.write`).
"""

from __future__ import annotations

import json
import math
import numbers
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone

import pandas as pd
from sqlalchemy import (
    Connection,
    Engine,
    Select,
    Table,
    bindparam,
    func,
    insert,
    select,
    true,
    update,
)
from sqlalchemy.exc import IntegrityError

from costsched.model import (
    FINAL_STATES,
    JOB_STATES,
    PLACEMENT_REASONS,
    InvalidInput,
    Offering,
)
from costsched.store.database import epoch_second, from_epoch_seconds, write
from costsched.store.schema import job_events, job_predictions, jobs, placements

PLACEMENT_COLUMNS = [
    "id", "job_id", "cloud", "region", "zone", "instance_type", "market", "os", "gpu_model",
    "gpu_count", "start_at", "end_at", "usd_per_hour", "reason", "instance",
]
EVENT_COLUMNS = ["id", "job_id", "at", "kind", "from_state", "to_state", "detail"]
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
_CAS_ATTEMPTS = 20  # a state that keeps changing under a writer this often is a bug
# Ids per IN (...) list of a set-based read: well under SQLite's bound on query parameters.
ID_CHUNK = 5000


class StaleState(InvalidInput):  # noqa: N818 - the name says what happened
    """The job was not in the expected state: another writer moved it first."""


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
    steps_total: float
    steps_done: float  # the step the job last reported (0: none reported yet)
    checkpoint_location: str
    checkpoint_step: float | None  # the newest verified checkpoint's step
    created_at: datetime
    updated_at: datetime

    @property
    def final(self) -> bool:
        return self.state in FINAL_STATES


class JobStore:
    """Jobs, placements and job events in the database of `engine` (schema at head)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    # --- jobs -----------------------------------------------------------------------

    def create(
        self,
        name: str,
        spec: dict,
        steps_total: float,
        *,
        checkpoint_location: str = "",
        policy: str = "",
        at: datetime,
    ) -> int:
        """A new job in state "pending"; its id."""
        _check_text("name", name, 128, required=True)
        _check_text("policy", policy, 32)
        _check_text("checkpoint_location", checkpoint_location, 1024)
        steps = _number("steps_total", steps_total, positive=True)
        if not isinstance(spec, dict):
            raise InvalidInput(f"spec {type(spec).__name__}: expected a mapping")
        try:
            spec_text = json.dumps(spec)
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"spec: expected JSON values ({exc})") from None
        ts = epoch_second(at)
        row = {"name": name, "spec": spec_text, "state": "pending", "policy": policy,
               "steps_total": steps, "steps_done": 0.0,
               "checkpoint_location": checkpoint_location, "created_ts": ts, "updated_ts": ts}
        def create_job(conn: Connection) -> int:
            live = conn.execute(select(jobs.c.id, jobs.c.state).where(
                jobs.c.name == name, jobs.c.state.not_in(FINAL_STATES))).first()
            if live is not None:
                raise NameTaken(name, int(live.id), live.state)
            job_id = conn.execute(insert(jobs).values(row)).inserted_primary_key[0]
            _event(conn, job_id, ts, "state", None, "pending", "created")
            return int(job_id)

        try:
            return write(self.engine, create_job)
        except IntegrityError:  # another writer created a live job of that name meanwhile
            live = [r for r in self.find(name) if not r.final]
            raise NameTaken(name, live[0].id if live else None,
                            live[0].state if live else "live") from None

    def get(self, job_id: int) -> JobRecord:
        with self.engine.connect() as conn:
            return _record(conn, job_id)

    def state(self, job_id: int) -> str:
        """The job's state, in one small read (its record's spec is not parsed)."""
        with self.engine.connect() as conn:
            return _state(conn, job_id)

    def find(self, name: str) -> list[JobRecord]:
        """Every job called `name`, oldest first."""
        with self.engine.connect() as conn:
            rows = conn.execute(select(jobs).where(jobs.c.name == name).order_by(jobs.c.id))
            return [_to_record(row) for row in rows.mappings()]

    def list(self, states: Iterable[str] = ()) -> pd.DataFrame:
        """The jobs in any of `states` (every job when empty), oldest first."""
        return pd.DataFrame([r.__dict__ for r in self.records(states=states)],
                            columns=JOB_COLUMNS)

    def records(self, job_ids: Iterable[int] | None = None, *,
                states: Iterable[str] = ()) -> list[JobRecord]:
        """The jobs of `job_ids` (every job when None) in any of `states` (any state when
        empty), oldest first, in one read (a query per ID_CHUNK ids)."""
        states = _check_states("state", states)
        query = select(jobs).order_by(jobs.c.id)
        if states:
            query = query.where(jobs.c.state.in_(states))
        with self.engine.connect() as conn:
            return [_to_record(row) for chunk in id_chunks(job_ids, jobs.c.id)
                    for row in conn.execute(query.where(chunk)).mappings()]

    def transition(
        self,
        job_id: int,
        to_state: str,
        *,
        at: datetime,
        expect: str | Iterable[str] | None = None,
        detail: str = "",
    ) -> JobRecord:
        """Move the job to `to_state` and log it, in one transaction.

        With `expect`, the move happens only from that state (or one of those states);
        otherwise StaleState is raised and nothing is written.
        """
        _check_states("state", [to_state])
        expected = None if expect is None else _check_states("expected state", expect)
        _check_text("detail", detail, None)
        ts = epoch_second(at)

        def move(conn: Connection) -> JobRecord | None:
            current = _state(conn, job_id, lock=True)
            if expected is not None and current not in expected:
                raise StaleState(
                    f"job {job_id} is {current!r}: expected {' or '.join(expected)}"
                    f" to move it to {to_state!r}"
                )
            moved = conn.execute(
                update(jobs)
                .where(jobs.c.id == int(job_id), jobs.c.state == current)
                .values(state=to_state, updated_ts=ts)
            ).rowcount
            if moved != 1:
                return None
            _event(conn, job_id, ts, "state", current, to_state, detail)
            return _record(conn, job_id)

        for _ in range(_CAS_ATTEMPTS):
            record = write(self.engine, move)
            if record is not None:
                return record
        raise StaleState(f"job {job_id}: its state kept changing; try again")

    def record_progress(
        self,
        job_id: int,
        steps_done: float,
        *,
        at: datetime,
        checkpoint_location: str | None = None,
        checkpoint_step: float | None = None,
    ) -> JobRecord:
        """Store the steps done (and a newly verified checkpoint), and log it."""
        values: dict = {"steps_done": _number("steps_done", steps_done)}
        if checkpoint_location is not None:
            _check_text("checkpoint_location", checkpoint_location, 1024)
            values["checkpoint_location"] = checkpoint_location
        if checkpoint_step is not None:
            values["checkpoint_step"] = _number("checkpoint_step", checkpoint_step)
        ts = epoch_second(at)
        detail = " ".join(f"{k}={v}" for k, v in values.items())

        def progress(conn: Connection) -> JobRecord:
            _touch(conn, job_id, ts, **values)
            _event(conn, job_id, ts, "progress", None, None, detail)
            return _record(conn, job_id)

        return write(self.engine, progress)

    def record_step(self, job_id: int, steps_done: float, *, at: datetime) -> None:
        """Store the step the job itself reported: a reading, taken every few seconds, so
        no event is logged for it (the job's events log what was decided)."""
        steps = _number("steps_done", steps_done)
        ts = epoch_second(at)
        write(self.engine, lambda conn: _touch(conn, job_id, ts, steps_done=steps))

    # --- placements -----------------------------------------------------------------

    def place(
        self,
        job_id: int,
        offering_key: tuple[str, str, str, str, str, str],
        *,
        gpu_model: str,
        gpu_count: int,
        at: datetime,
        usd_per_hour: float,
        reason: str,
        instance: str = "",
        keep_open: bool = False,
    ) -> int:
        """End the job's open placement at `at` and open one on `offering_key`; its id.

        `offering_key` is (cloud, region, zone, instance_type, market, os), as
        `Offering.key`; `usd_per_hour` is the stored price at `at`. `keep_open` leaves the
        open placement running beside the new one (a migration's source is billed until
        it is terminated: `end_placement(..., instance=...)` closes it then).
        """
        if not isinstance(offering_key, tuple) or len(offering_key) != 6:
            raise InvalidInput(
                f"offering key {offering_key!r}: expected (cloud, region, zone,"
                " instance_type, market, os)"
            )
        cloud, region, zone, instance_type, market, os_name = offering_key
        _check_text("gpu_model", gpu_model, 32, required=True)
        if isinstance(gpu_count, bool) or not isinstance(gpu_count, numbers.Integral):
            raise InvalidInput(f"gpu_count {gpu_count!r}: expected a whole number >= 1")
        Offering(cloud, region, zone, instance_type, market, gpu_model, int(gpu_count),
                 os=os_name)  # validates the vocabulary
        if reason not in PLACEMENT_REASONS:
            raise InvalidInput(
                f"reason {reason!r}: expected one of {', '.join(PLACEMENT_REASONS)}"
            )
        price = _number("usd_per_hour", usd_per_hour, positive=True)
        _check_text("instance", instance, 256)
        ts = epoch_second(at)
        return write(self.engine, lambda conn: self._place(
            conn, job_id, offering_key, ts, gpu_model=gpu_model, gpu_count=int(gpu_count),
            price=price, reason=reason, instance=instance, keep_open=keep_open))

    @staticmethod
    def _place(conn: Connection, job_id: int, offering_key: tuple[str, ...], ts: int, *,
               gpu_model: str, gpu_count: int, price: float, reason: str, instance: str,
               keep_open: bool) -> int:
        state = _touch(conn, job_id, ts)
        if state in FINAL_STATES:
            raise InvalidInput(
                f"job {job_id} is {state!r}: expected a job that has not ended"
            )
        closed = None if keep_open else _close(conn, job_id, ts)
        row = dict(zip(PLACEMENT_COLUMNS[2:8], offering_key, strict=True))
        row.update(job_id=int(job_id), gpu_model=gpu_model, gpu_count=int(gpu_count),
                   start_ts=ts, end_ts=None, usd_per_hour=price, reason=reason,
                   instance=instance)
        placement_id = int(conn.execute(insert(placements).values(row))
                           .inserted_primary_key[0])
        ended = f" (ended placement {closed})" if closed is not None else ""
        detail = (f"placement {placement_id}: {reason} on {'/'.join(offering_key)}"
                  f" at {price:g} USD/h{ended}")
        _event(conn, job_id, ts, "placement", None, None, detail)
        return placement_id

    def end_placement(self, job_id: int, at: datetime, *, instance: str | None = None
                      ) -> int | None:
        """End the job's open placement (the one on `instance`, if given) at `at`; its id,
        or None when none was open."""
        ts = epoch_second(at)

        def end(conn: Connection) -> int | None:
            _touch(conn, job_id, ts)
            closed = _close(conn, job_id, ts, instance)
            if closed is None:
                conn.rollback()  # nothing happened: not even updated_ts moves
                return None
            _event(conn, job_id, ts, "placement_end", None, None, f"placement {closed} ended")
            return closed

        return write(self.engine, end)

    def note(self, job_id: int, kind: str, detail: str, *, at: datetime) -> None:
        """Append an event of `kind` to the job's log (e.g. a budget alarm)."""
        _check_text("kind", kind, 32, required=True)
        ts = epoch_second(at)

        def log(conn: Connection) -> None:
            _touch(conn, job_id, ts)
            _event(conn, job_id, ts, kind, None, None, detail)

        write(self.engine, log)

    def record_steps(self, steps: Mapping[int, float], *, at: datetime) -> None:
        """`record_step` for many jobs ({job id: step}) in one transaction."""
        values = {int(job_id): _number("steps_done", step) for job_id, step in steps.items()}
        if not values:
            return
        ts = epoch_second(at)

        rows = [{"job": job_id, "step": step} for job_id, step in values.items()]
        query = (update(jobs).where(jobs.c.id == bindparam("job"))
                 .values(steps_done=bindparam("step"), updated_ts=ts))
        write(self.engine, lambda conn: conn.execute(query, rows))  # one statement, many rows

    def placements(self, job_id: int | None = None) -> pd.DataFrame:
        """Placements (of one job, or all), by job and start; end_at is NaT while open."""
        return self.placements_of(None if job_id is None else [job_id])

    def placements_of(self, job_ids: Iterable[int] | None, *,
                      open_only: bool = False) -> pd.DataFrame:
        """The placements of `job_ids` (every job's when None; only those still open with
        `open_only`), by job and start, in one read; end_at is NaT while open."""
        query = select(placements).order_by(placements.c.job_id, placements.c.start_ts,
                                            placements.c.id)
        if open_only:
            query = query.where(placements.c.end_ts.is_(None))
        frame = self._chunked(query, placements, job_ids)
        frame["start_at"] = from_epoch_seconds(frame.pop("start_ts"))
        end = frame.pop("end_ts")
        frame["end_at"] = pd.to_datetime(end.astype("Float64"), unit="s", utc=True)
        return frame[PLACEMENT_COLUMNS]

    def newest_open_placement(self, job_id: int) -> int | None:
        """The id of the job's newest open placement (a move has two open for a while, the
        newest being where it goes), or None: `placements_of`'s rule, in one small read."""
        query = (select(placements.c.id)
                 .where(placements.c.job_id == int(job_id), placements.c.end_ts.is_(None))
                 .order_by(placements.c.start_ts.desc(), placements.c.id.desc()).limit(1))
        with self.engine.connect() as conn:
            found = conn.execute(query).scalar()
        return None if found is None else int(found)

    def _chunked(self, query: Select, table: Table, job_ids: Iterable[int] | None
                 ) -> pd.DataFrame:
        """`query`'s rows of `table` for `job_ids` (every job's when None), read in IN lists
        of at most ID_CHUNK ids, as a frame of the table's columns."""
        with self.engine.connect() as conn:
            rows = [tuple(r) for chunk in id_chunks(job_ids, table.c.job_id)
                    for r in conn.execute(query.where(chunk))]
        return pd.DataFrame(rows, columns=list(table.c.keys()))

    def events(self, job_id: int) -> pd.DataFrame:
        """The job's log, in the order it was written."""
        with self.engine.connect() as conn:
            _state(conn, job_id)
        return self.events_of([job_id])

    def events_of(self, job_ids: Iterable[int] | None, kinds: Iterable[str] = ()
                  ) -> pd.DataFrame:
        """The logs of `job_ids` (every job's when None), only events of `kinds` when
        given, in the order they were written, in one read."""
        query = select(job_events).order_by(job_events.c.id)
        kinds = tuple(kinds)
        if kinds:
            query = query.where(job_events.c.kind.in_(kinds))
        frame = self._chunked(query, job_events, job_ids).sort_values("id", kind="stable")
        frame["at"] = from_epoch_seconds(frame.pop("ts"))
        return frame[EVENT_COLUMNS].reset_index(drop=True)

    def last_details(self, job_ids: Iterable[int], kind: str) -> dict[int, str]:
        """{job id: the detail of its newest event of `kind`}, for those of `job_ids`
        that have one, in one read."""
        newest = select(func.max(job_events.c.id)).where(job_events.c.kind == kind)
        out: dict[int, str] = {}
        with self.engine.connect() as conn:
            for chunk in id_chunks(job_ids, job_events.c.job_id):
                ids = newest.where(chunk).group_by(job_events.c.job_id)
                query = select(job_events.c.job_id, job_events.c.detail).where(
                    job_events.c.id.in_(ids.scalar_subquery()))
                out.update({int(j): d for j, d in conn.execute(query)})
        return out


    # --- what each job's plan predicted at launch ------------------------------------

    def predict(self, job_id: int, prediction: Mapping[str, object], *, at: datetime) -> bool:
        """Keep what the job's plan predicted at its launch (PREDICTION_COLUMNS but
        job_id, predicted_at and flagged_at); the first prediction of a job is kept, a
        later one is not stored (False)."""
        row = {c: prediction[c] for c in PREDICTION_COLUMNS[2:-1]}
        for c in ("usd_per_hour", "steps", "steps_per_second", "expected_hours",
                  "expected_usd", "expected_preemptions"):
            row[c] = _number(c, row[c])
        row["gpu_count"] = int(row["gpu_count"])  # type: ignore[call-overload]
        row["throughput_source"] = str(row["throughput_source"])[:2000]
        row.update(job_id=int(job_id), predicted_ts=epoch_second(at))

        def keep(conn: Connection) -> bool:
            _state(conn, job_id)
            found = conn.execute(select(job_predictions.c.job_id).where(
                job_predictions.c.job_id == int(job_id))).first()
            if found is not None:
                return False
            conn.execute(insert(job_predictions).values(row))
            return True

        return write(self.engine, keep)

    def predictions(self, job_ids: Iterable[int] | None = None) -> pd.DataFrame:
        """The predictions of `job_ids` (every job's when None), by job id, in one read."""
        query = select(job_predictions).order_by(job_predictions.c.job_id)
        with self.engine.connect() as conn:
            rows = [tuple(r) for chunk in id_chunks(job_ids, job_predictions.c.job_id)
                    for r in conn.execute(query.where(chunk))]
        frame = pd.DataFrame(rows, columns=list(job_predictions.c.keys()))
        if frame.empty:
            return pd.DataFrame({c: pd.Series(dtype="datetime64[ns, UTC]" if c.endswith(
                "_at") else float if c.startswith(("expected", "steps", "usd")) else object)
                for c in PREDICTION_COLUMNS})
        frame["predicted_at"] = from_epoch_seconds(frame.pop("predicted_ts"))
        flagged = frame.pop("flagged_ts")
        frame["flagged_at"] = pd.to_datetime(flagged.astype("Float64"), unit="s", utc=True)
        return frame[PREDICTION_COLUMNS]

    def flag_predictions(self, job_ids: Iterable[int], *, at: datetime) -> set[int]:
        """Mark the predictions of `job_ids` as contradicted by their runs, once, in one
        transaction: the ids marked now (not those marked before or without one)."""
        ts = epoch_second(at)
        wanted = sorted({int(j) for j in job_ids})
        if not wanted:
            return set()

        def flag(conn: Connection) -> set[int]:
            found: set[int] = set()
            for chunk in id_chunks(wanted, job_predictions.c.job_id):
                found |= {int(r[0]) for r in conn.execute(
                    select(job_predictions.c.job_id).where(
                        chunk, job_predictions.c.flagged_ts.is_(None)))}
            for chunk in id_chunks(found, job_predictions.c.job_id):
                conn.execute(update(job_predictions).where(chunk).values(flagged_ts=ts))
            return found

        return write(self.engine, flag)

    def note_many(self, details: Mapping[int, str], kind: str, *, at: datetime) -> None:
        """`note` of many jobs ({job id: detail}) in one transaction; the jobs' records are
        not touched (their last write stays when their step was read)."""
        _check_text("kind", kind, 32, required=True)
        rows = [{"job_id": int(j), "ts": epoch_second(at), "kind": kind, "from_state": None,
                 "to_state": None, "detail": str(d)} for j, d in details.items()]
        if rows:
            write(self.engine, lambda conn: conn.execute(insert(job_events), rows))


def id_chunks(ids: Iterable[int] | None, column) -> Iterator:  # noqa: ANN001 - a Column
    """WHERE clauses that together select `ids` of `column` (every row when None)."""
    if ids is None:
        yield true()
        return
    wanted = sorted({int(i) for i in ids})
    for start in range(0, len(wanted), ID_CHUNK):
        yield column.in_(wanted[start:start + ID_CHUNK])


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
            f"time {from_epoch_seconds([ts])[0]}: expected at or after the start of"
            f" placement {open_.id} ({from_epoch_seconds([open_.start_ts])[0]})"
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
    return JobRecord(
        id=int(row["id"]), name=row["name"], spec=json.loads(row["spec"]), state=row["state"],
        policy=row["policy"], steps_total=float(row["steps_total"]),
        steps_done=float(row["steps_done"]), checkpoint_location=row["checkpoint_location"],
        checkpoint_step=(None if row["checkpoint_step"] is None
                         else float(row["checkpoint_step"])),
        created_at=_utc(row["created_ts"]), updated_at=_utc(row["updated_ts"]),
    )


def _utc(epoch_second: int) -> datetime:
    # The standard library's conversion: pandas' costs ~0.3 ms a call, paid per job listed.
    return datetime.fromtimestamp(int(epoch_second), timezone.utc)


def _check_states(what: str, states: str | Iterable[str]) -> tuple[str, ...]:
    states = (states,) if isinstance(states, str) else tuple(states)
    for state in states:
        if state not in JOB_STATES:
            raise InvalidInput(f"{what} {state!r}: expected one of {', '.join(JOB_STATES)}")
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

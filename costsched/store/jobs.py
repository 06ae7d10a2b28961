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
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone

from sqlalchemy import (
    BigInteger,
    Connection,
    Engine,
    Float,
    bindparam,
    case,
    delete,
    func,
    insert,
    select,
    update,
)
from sqlalchemy.exc import IntegrityError

from costsched.lazy import pandas as pd
from costsched.model import FINAL_STATES, InvalidInput, utc
from costsched.store.database import epoch_second, from_epoch_seconds, write
from costsched.store.job_log import JobLog
from costsched.store.job_placements import JobPlacements
from costsched.store.job_rows import (  # noqa: F401 - the job store's names, used from here
    EVENT_COLUMNS,
    ID_CHUNK,
    JOB_COLUMNS,
    PLACEMENT_COLUMNS,
    PREDICTION_COLUMNS,
    READING_COLUMNS,
    JobRecord,
    NameTaken,
    StaleState,
    _check_states,
    _check_text,
    _event,
    _number,
    _record,
    _state,
    _to_record,
    _touch,
    id_chunks,
)
from costsched.store.node_gaps import NodeGaps
from costsched.store.schema import jobs, leases, placements

_CAS_ATTEMPTS = 20  # a state that keeps changing under a writer this often is a bug


def _reading(extend: bool = True):  # noqa: ANN202 - an UPDATE statement
    """The step reading (parameters `job`, `step`, its time `ts`, `last_ts`:
    `_reading_times`, and `setup`: how long the placement's setup took, as its instance
    says, None where it does not; kept once known) kept on the job's newest open
    placement (a move's target while its source is still open): its first reading kept,
    its last replaced, its time only when the step moved on (a job that writes its step
    every minute, read every few seconds, trained up to when it wrote it, not to the
    latest look at an unchanged step). Not `extend`ed (a step read off an instance found
    gone: it got there some time before this look), a placement's first reading is kept
    and its last only made when it had none: the wait until the end was seen is no
    training."""
    newest = (select(placements.c.id)
              .where(placements.c.job_id == bindparam("job"), placements.c.end_ts.is_(None))
              .order_by(placements.c.start_ts.desc(), placements.c.id.desc()).limit(1)
              .scalar_subquery())
    ts, last_ts = bindparam("ts", type_=BigInteger), bindparam("last_ts", type_=BigInteger)
    return (update(placements).where(placements.c.id == newest).values(
        first_step=func.coalesce(placements.c.first_step, bindparam("step")),
        first_step_ts=func.coalesce(placements.c.first_step_ts, ts),
        last_step=bindparam("step") if extend else
        func.coalesce(placements.c.last_step, bindparam("step")),
        last_step_ts=case((placements.c.last_step == bindparam("step"),
                           placements.c.last_step_ts), else_=last_ts) if extend else
        func.coalesce(placements.c.last_step_ts, last_ts),
        setup_seconds=func.coalesce(placements.c.setup_seconds,
                                    bindparam("setup", type_=Float))))


def _reading_times(at: datetime) -> dict[str, int]:
    """A reading's time in whole seconds, rounded outward: down as a placement's first,
    up as its last, so that the seconds between two readings are never fewer than
    passed (a pace read off them is never faster than the job made)."""
    first = epoch_second(at)
    return {"ts": first, "last_ts": first + (utc(at).timestamp() > first)}


class JobStore(JobPlacements, NodeGaps, JobLog):
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
        lease: tuple[str, str, float] | None = None,
    ) -> int:
        """A new job in state "pending"; its id. `lease`: (name with '{id}' for the job's
        id, holder, seconds): a lease its creator holds from the moment the job exists, in
        the same write, so that no other process takes the new job up before its creator
        starts it (a creator that died leaves the lease free, `Leases.acquire`)."""
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
            if lease is not None:  # a row left by another job of this id is no one's now
                name_of, holder, seconds = lease
                held = name_of.format(id=job_id)
                conn.execute(delete(leases).where(leases.c.name == held))
                conn.execute(insert(leases).values(
                    name=held, holder=holder,  # leases run by the wall clock
                    expires_ts=epoch_second(datetime.now(timezone.utc)) + max(int(seconds), 1)))
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

    def ids(self, states: Iterable[str] = ()) -> list[int]:
        """The ids of the jobs in any of `states` (every job's when empty), oldest first,
        without reading their records."""
        states = _check_states("state", states)
        query = select(jobs.c.id).order_by(jobs.c.id)
        if states:
            query = query.where(jobs.c.state.in_(states))
        with self.engine.connect() as conn:
            return [int(i) for i in conn.execute(query).scalars()]

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
        # Read back as data (`throughput_learned.progress_steps`): NAME=VALUE pairs.
        detail = " ".join(f"{k}={v}" for k, v in values.items())

        def progress(conn: Connection) -> JobRecord:
            _touch(conn, job_id, ts, **values)
            _event(conn, job_id, ts, "progress", None, None, detail)
            return _record(conn, job_id)

        return write(self.engine, progress)

    def repack(self, job_id: int, code: dict, *, at: datetime, detail: str) -> None:
        """The job's code from now on (`code`, as its stored spec keeps it: packed again at
        a start), logged with `detail`."""
        ts = epoch_second(at)

        def repacked(conn: Connection) -> None:
            spec = _record(conn, job_id).spec
            _touch(conn, job_id, ts, spec=json.dumps({**spec, "code": code}))
            _event(conn, job_id, ts, "code", None, None, detail)

        write(self.engine, repacked)

    def relocate(self, job_id: int, checkpoint_location: str, *, at: datetime,
                 detail: str) -> None:
        """The job's checkpoints are at `checkpoint_location` from now on (copied there for
        its next instance), logged with `detail`."""
        _check_text("checkpoint_location", checkpoint_location, 1024)
        ts = epoch_second(at)

        def relocated(conn: Connection) -> None:
            _touch(conn, job_id, ts, checkpoint_location=checkpoint_location)
            _event(conn, job_id, ts, "checkpoints", None, None, detail)

        write(self.engine, relocated)

    def record_step(self, job_id: int, steps_done: float, *, at: datetime,
                    extend: bool = True) -> None:
        """Store the step the job itself reported: a reading, taken every few seconds, so
        no event is logged for it (the job's events log what was decided). The reading is
        also kept on its newest open placement (`readings`; not `extend`ed for a step read
        off an instance found gone, see `_reading`)."""
        steps = _number("steps_done", steps_done)
        ts = epoch_second(at)

        def store(conn: Connection) -> None:
            _touch(conn, job_id, ts, steps_done=steps)  # InvalidInput: no such job
            conn.execute(_reading(extend), [{"job": int(job_id), "step": steps,
                                             "setup": None, **_reading_times(at)}])

        write(self.engine, store)

    def record_steps(self, steps: Mapping[int, float], *, at: datetime,
                     extend: bool = True,
                     reported: Mapping[int, datetime] | None = None,
                     setups: Mapping[int, float | None] | None = None) -> None:
        """`record_step` for many jobs ({job id: step}) in one transaction. `reported`:
        when a job reported its step, where its instance says (its reading's time; else
        `at`, when it was read). `setups`: how long the setup of the instance each was
        read off took, where it says (`Instance.setup_seconds`), kept with its placement's
        readings once (`setups`)."""
        values = {int(job_id): _number("steps_done", step) for job_id, step in steps.items()}
        if not values:
            return
        ts = epoch_second(at)
        told = {int(j): t for j, t in (reported or {}).items()}
        rows = [{"job": job_id, "step": step} for job_id, step in values.items()]
        query = (update(jobs).where(jobs.c.id == bindparam("job"))
                 .values(steps_done=bindparam("step"), updated_ts=ts))

        def store(conn: Connection) -> None:
            conn.execute(query, rows)  # one statement, many rows
            conn.execute(_reading(extend), [
                {**row, "setup": _seconds((setups or {}).get(row["job"])),
                 **_reading_times(told.get(row["job"], at))} for row in rows])

        write(self.engine, store)

    def setups(self, job_ids: Iterable[int] | None) -> dict[int, list[float | None]]:
        """{job id: how long the setup of each of its placements with step readings took,
        as its instance said (None where it did not)}, by placement, in one read."""
        query = (select(placements.c.job_id, placements.c.setup_seconds)
                 .where(placements.c.first_step_ts.is_not(None))
                 .order_by(placements.c.job_id, placements.c.id))
        out: dict[int, list[float | None]] = {}
        with self.engine.connect() as conn:
            for chunk in id_chunks(job_ids, placements.c.job_id):
                for job_id, seconds in conn.execute(query.where(chunk)):
                    out.setdefault(int(job_id), []).append(
                        None if seconds is None else float(seconds))
        return out

    def readings(self, job_ids: Iterable[int] | None) -> pd.DataFrame:
        """The step readings of the placements of `job_ids` (every job's when None) that
        have any (READING_COLUMNS): the first and the last step the job reported on each,
        and when; the time between them is training, its setup left out."""
        return readings_frame(self.reading_rows(job_ids))

    def reading_rows(self, job_ids: Iterable[int] | None) -> list[tuple]:
        """`readings` as rows (id, job_id, first_step, first_step_ts, last_step,
        last_step_ts: times as epoch seconds), for a caller that needs no frame
        (`readings_frame` makes the frame)."""
        columns = [placements.c[c] for c in ("id", "job_id", "first_step", "first_step_ts",
                                             "last_step", "last_step_ts")]
        query = (select(*columns).where(placements.c.first_step_ts.is_not(None))
                 .order_by(placements.c.job_id, placements.c.id))
        with self.engine.connect() as conn:
            return [tuple(r) for chunk in id_chunks(job_ids, placements.c.job_id)
                    for r in conn.execute(query.where(chunk))]


def _seconds(value: float | None) -> float | None:
    """A setup's seconds as stored: None where not known (or not a duration)."""
    if value is None:
        return None
    seconds = float(value)
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def readings_frame(rows: Iterable[tuple]) -> pd.DataFrame:
    """`JobStore.reading_rows` as the frame `JobStore.readings` returns."""
    frame = pd.DataFrame(list(rows), columns=["id", "job_id", "first_step", "first_step_ts",
                                              "last_step", "last_step_ts"])
    frame["first_at"] = from_epoch_seconds(frame.pop("first_step_ts"))
    frame["last_at"] = from_epoch_seconds(frame.pop("last_step_ts"))
    return frame.astype({"first_step": float, "last_step": float})[READING_COLUMNS]

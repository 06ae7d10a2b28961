"""Leases and task runs: what lets several daemons share one store.

A lease is a named row held by one holder until it expires. Taking one is a single
conditional write (an UPDATE of an expired or own row, else an INSERT of a new one), so two
processes on two hosts never both hold it, on SQLite or PostgreSQL. Task runs are the
daemon's record of each scheduled task: started, finished ok or failed, or skipped.

Holders are named "host:pid:tag" (`holder_name`): a lease whose holder was a process of this
host that has since died is free at once, so a costsched killed mid-step does not block the
next one until the lease expires.
"""

from __future__ import annotations

import os
import socket
import sqlite3
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from sqlalchemy import Engine, delete, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from costsched.model import InvalidInput
from costsched.store.database import dialect_insert, epoch_second, from_epoch_second
from costsched.store.schema import leases, task_runs

LEASE_CHUNK = 500  # leases per statement of the bulk operations (3 parameters each)
RUN_STATUSES = ("running", "ok", "failed", "skipped")
RunStatus = Literal["running", "ok", "failed", "skipped"]


@dataclass(frozen=True)
class Lease:
    name: str
    holder: str
    expires_at: datetime


class Leases:
    """Named leases in the database of `engine`."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def acquire(self, name: str, holder: str, ttl_seconds: float, at: datetime) -> bool:
        """Take (or extend) the lease `name` for `holder` until `at` + `ttl_seconds`: True
        when `holder` holds it now; False when another holder's lease has not expired."""
        now = epoch_second(at)
        expires = now + max(int(ttl_seconds), 1)
        claimed = self._claim(name, holder, now, expires)
        if claimed is not None:
            return claimed or self._take_from_dead(name, holder, expires)
        if self._take(name, holder, now, expires):
            return True
        try:
            with self.engine.begin() as conn:
                conn.execute(insert(leases).values(name=name, holder=holder,
                                                   expires_ts=expires))
            return True
        except IntegrityError:
            # Another holder inserted it first; it may have expired since (or be ours).
            if self._take(name, holder, now, expires):
                return True
        return self._take_from_dead(name, holder, expires)

    @contextmanager
    def holding(self, name: str, ttl_seconds: float, holder: str | None = None
                ) -> Iterator[bool]:
        """Hold the lease `name` (by the wall clock, for `holder`, by default a new holder of
        this process) for the block, and give it up after; yields whether it was taken."""
        holder = holder or holder_name()
        taken = self.acquire(name, holder, ttl_seconds, datetime.now(timezone.utc))
        try:
            yield taken
        finally:
            if taken:
                self.release(name, holder)

    def acquire_many(self, names: Iterable[str], holder: str, ttl_seconds: float,
                     at: datetime) -> set[str]:
        """`acquire` of many leases for `holder`, in one statement per LEASE_CHUNK names
        (each row taken as `acquire` takes it: inserted, or taken over when it expired or
        is the holder's own): the names `holder` holds now."""
        wanted = sorted(set(names))
        now = epoch_second(at)
        expires = now + max(int(ttl_seconds), 1)
        dialect = self.engine.dialect.name
        if not wanted:
            return set()
        if not (dialect == "postgresql" or
                (dialect == "sqlite" and sqlite3.sqlite_version_info >= (3, 35))):
            return {n for n in wanted if self.acquire(n, holder, ttl_seconds, at)}
        upsert = dialect_insert(dialect)
        taken: set[str] = set()
        with self.engine.begin() as conn:
            for start in range(0, len(wanted), LEASE_CHUNK):
                rows = upsert(leases).values([
                    {"name": n, "holder": holder, "expires_ts": expires}
                    for n in wanted[start:start + LEASE_CHUNK]])
                claim = rows.on_conflict_do_update(
                    index_elements=[leases.c.name],
                    set_={"holder": rows.excluded.holder,
                          "expires_ts": rows.excluded.expires_ts},
                    where=or_(leases.c.expires_ts <= now, leases.c.holder == holder)
                ).returning(leases.c.name)
                taken |= {str(n) for n in conn.execute(claim).scalars()}
        # Those held by a process of this host that has died are free at once, as `acquire`.
        left = [n for n in wanted if n not in taken]
        with self.engine.connect() as conn:
            dead = {str(r.name): str(r.holder) for start in range(0, len(left), LEASE_CHUNK)
                    for r in conn.execute(select(leases.c.name, leases.c.holder).where(
                        leases.c.name.in_(left[start:start + LEASE_CHUNK])))
                    if _died_here(str(r.holder))}
        return taken | {n for n in dead if self._take_from_dead(n, holder, expires)}

    def renew_many(self, names: Iterable[str], holder: str, ttl_seconds: float,
                   at: datetime) -> set[str]:
        """`renew` of many leases in one transaction: the names still `holder`'s."""
        wanted = sorted(set(names))
        expires = epoch_second(at) + max(int(ttl_seconds), 1)
        kept: set[str] = set()
        with self.engine.begin() as conn:
            for start in range(0, len(wanted), LEASE_CHUNK):
                chunk = wanted[start:start + LEASE_CHUNK]
                conn.execute(update(leases).where(leases.c.name.in_(chunk),
                                                  leases.c.holder == holder)
                             .values(expires_ts=expires))
                kept |= {str(n) for n in conn.execute(select(leases.c.name).where(
                    leases.c.name.in_(chunk), leases.c.holder == holder)).scalars()}
        return kept

    def release_many(self, names: Iterable[str], holder: str) -> int:
        """`release` of many leases in one transaction; how many `holder` gave up."""
        wanted = sorted(set(names))
        gone = 0
        with self.engine.begin() as conn:
            for start in range(0, len(wanted), LEASE_CHUNK):
                gone += int(conn.execute(delete(leases).where(
                    leases.c.name.in_(wanted[start:start + LEASE_CHUNK]),
                    leases.c.holder == holder)).rowcount)
        return gone

    @contextmanager
    def holding_many(self, names: Iterable[str], ttl_seconds: float
                     ) -> Iterator[tuple[str, set[str]]]:
        """`holding` of many leases at once: yields (the holder, the names it took); those
        it took are given up after the block."""
        holder = holder_name()
        taken = self.acquire_many(names, holder, ttl_seconds, datetime.now(timezone.utc))
        try:
            yield holder, taken
        finally:
            if taken:
                self.release_many(taken, holder)

    def renew(self, name: str, holder: str, ttl_seconds: float, at: datetime) -> bool:
        """Extend a lease `holder` holds; False when it is not (or no longer) theirs."""
        expires = epoch_second(at) + max(int(ttl_seconds), 1)
        with self.engine.begin() as conn:
            changed = conn.execute(
                update(leases).where(leases.c.name == name, leases.c.holder == holder)
                .values(expires_ts=expires)).rowcount
        return changed == 1

    def release(self, name: str, holder: str) -> bool:
        """Give the lease up, if `holder` holds it; whether it did."""
        with self.engine.begin() as conn:
            gone = conn.execute(delete(leases).where(leases.c.name == name,
                                                     leases.c.holder == holder)).rowcount
        return gone == 1

    def hand_over(self, name: str, holder: str, to: str) -> bool:
        """Give the lease `holder` holds to `to` (its expiry kept); whether it did."""
        with self.engine.begin() as conn:
            changed = conn.execute(update(leases).where(leases.c.name == name,
                                                        leases.c.holder == holder)
                                   .values(holder=to)).rowcount
        return changed == 1

    def holder_of(self, name: str, at: datetime) -> str | None:
        """Who holds the lease `name` at `at`: None when nobody does (it is not stored, it
        expired, or its holder was a process of this host that has died)."""
        with self.engine.connect() as conn:
            row = conn.execute(select(leases.c.holder, leases.c.expires_ts)
                               .where(leases.c.name == name)).first()
        if row is None or row.expires_ts <= epoch_second(at) or _died_here(str(row.holder)):
            return None
        return str(row.holder)

    def release_all(self, holder: str) -> int:
        """Give up every lease of `holder`; how many."""
        with self.engine.begin() as conn:
            return int(conn.execute(delete(leases).where(leases.c.holder == holder)).rowcount)

    def held(self, at: datetime | None = None) -> list[Lease]:
        """The leases stored (those unexpired at `at`, when given), by name."""
        query = select(leases).order_by(leases.c.name)
        if at is not None:
            query = query.where(leases.c.expires_ts > epoch_second(at))
        with self.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [Lease(r.name, r.holder, _time(r.expires_ts)) for r in rows]

    def _claim(self, name: str, holder: str, now: int, expires: int) -> bool | None:
        """Insert the lease, or take it over when it expired or is the holder's own, in one
        statement (an upsert whose update is conditional): whether `holder` holds it now;
        None on a database without upserts (the caller updates, then inserts)."""
        dialect = self.engine.dialect.name
        if not (dialect == "postgresql" or
                (dialect == "sqlite" and sqlite3.sqlite_version_info >= (3, 35))):  # RETURNING
            return None
        row = dialect_insert(dialect)(leases).values(name=name, holder=holder, expires_ts=expires)
        # PostgreSQL waits for a concurrent claim of the row, then checks the condition on
        # the row it committed; SQLite runs one writer at a time: never two holders.
        claim = row.on_conflict_do_update(
            index_elements=[leases.c.name],
            set_={"holder": row.excluded.holder, "expires_ts": row.excluded.expires_ts},
            where=or_(leases.c.expires_ts <= now, leases.c.holder == holder)
        ).returning(leases.c.name)  # a row back when it was inserted or taken over
        with self.engine.begin() as conn:
            return conn.execute(claim).first() is not None

    def _take(self, name: str, holder: str, now: int, expires: int) -> bool:
        # PostgreSQL re-checks the WHERE on the row a concurrent UPDATE committed, and
        # SQLite runs one writer at a time: a single UPDATE cannot hand it to two holders.
        with self.engine.begin() as conn:
            changed = conn.execute(
                update(leases).where(leases.c.name == name,
                                     or_(leases.c.expires_ts <= now, leases.c.holder == holder))
                .values(holder=holder, expires_ts=expires)).rowcount
        return changed == 1

    def _take_from_dead(self, name: str, holder: str, expires: int) -> bool:
        with self.engine.connect() as conn:
            current = conn.execute(select(leases.c.holder).where(leases.c.name == name)).scalar()
        if current is None or not _died_here(str(current)):
            return False
        with self.engine.begin() as conn:  # only if that dead holder still has it
            changed = conn.execute(
                update(leases).where(leases.c.name == name, leases.c.holder == current)
                .values(holder=holder, expires_ts=expires)).rowcount
        return changed == 1


def holder_name() -> str:
    """A new holder name of this process: "host:pid:tag"."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


def _died_here(holder: str) -> bool:
    """True when `holder` names a process of this host that no longer runs."""
    host, _, rest = holder.partition(":")
    pid = rest.partition(":")[0]
    if host != socket.gethostname() or not pid.isdigit() or int(pid) == os.getpid():
        return False
    return process_gone(int(pid))


def holder_pid(holder: str) -> tuple[str, int | None]:
    """The host and process id a holder name ("host:pid:tag") names (None: not a pid)."""
    host, _, rest = holder.partition(":")
    pid = rest.partition(":")[0]
    return host, int(pid) if pid.isdigit() else None


def process_gone(pid: int) -> bool:
    """True when process `pid` of this host no longer runs (or only its exit status is
    left, a zombie its parent has not collected yet)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # alive, owned by another user
    try:  # Linux: the state after the command's closing parenthesis
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2:][:1] == b"Z"


@dataclass(frozen=True)
class TaskRun:
    id: int
    task: str
    holder: str
    started_at: datetime
    finished_at: datetime | None
    status: str
    detail: str


class TaskRuns:
    """The record of scheduled task runs in the database of `engine`."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def start(self, task: str, holder: str, at: datetime) -> TaskRun:
        """Record that `holder` started `task` at `at` (status running)."""
        return self._insert(task, holder, at, None, "running", "")

    def skipped(self, task: str, holder: str, at: datetime, detail: str) -> TaskRun:
        """Record that `holder` did not run `task` (its lease was held elsewhere, or it had
        run for this trigger already)."""
        return self._insert(task, holder, at, at, "skipped", detail)

    def finish(self, run: TaskRun, status: RunStatus, at: datetime,
               detail: str = "") -> TaskRun:
        """End a started run as ok or failed, with a one-line detail."""
        if status not in ("ok", "failed"):
            raise InvalidInput(f"task run status {status!r}: expected ok or failed")
        with self.engine.begin() as conn:
            conn.execute(update(task_runs).where(task_runs.c.id == run.id)
                         .values(status=status, finished_ts=epoch_second(at), detail=detail))
        return self.get(run.id)

    def get(self, run_id: int) -> TaskRun:
        with self.engine.connect() as conn:
            row = conn.execute(select(task_runs).where(task_runs.c.id == int(run_id))).first()
        if row is None:
            raise InvalidInput(f"task run {run_id}: no such run in the store")
        return _run(row)

    def last(self, task: str, statuses: tuple[str, ...] = RUN_STATUSES) -> TaskRun | None:
        """The newest run of `task` with one of `statuses`."""
        with self.engine.connect() as conn:
            row = conn.execute(
                select(task_runs).where(task_runs.c.task == task,
                                        task_runs.c.status.in_(statuses))
                .order_by(task_runs.c.id.desc()).limit(1)).first()
        return None if row is None else _run(row)

    def recent(self, task: str | None = None, *, statuses: tuple[str, ...] = RUN_STATUSES,
               limit: int = 20) -> list[TaskRun]:
        """The newest runs (of `task`, or of every task) with one of `statuses`, newest
        first."""
        query = select(task_runs).where(task_runs.c.status.in_(statuses))
        if task is not None:
            query = query.where(task_runs.c.task == task)
        with self.engine.connect() as conn:
            rows = conn.execute(query.order_by(task_runs.c.id.desc()).limit(limit)).all()
        return [_run(r) for r in rows]

    def _insert(self, task: str, holder: str, started: datetime, finished: datetime | None,
                status: str, detail: str) -> TaskRun:
        with self.engine.begin() as conn:
            run_id = conn.execute(insert(task_runs).values(
                task=task, holder=holder, started_ts=epoch_second(started),
                finished_ts=None if finished is None else epoch_second(finished),
                status=status, detail=detail)).inserted_primary_key[0]
        return self.get(int(run_id))


def _time(ts: int) -> datetime:
    return from_epoch_second(ts)


def _run(row) -> TaskRun:  # noqa: ANN001 - a SQLAlchemy Row
    return TaskRun(id=int(row.id), task=row.task, holder=row.holder,
                   started_at=_time(row.started_ts),
                   finished_at=None if row.finished_ts is None else _time(row.finished_ts),
                   status=row.status, detail=row.detail)

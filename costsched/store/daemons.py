"""The daemons running now: one row per daemon process, written by the daemon itself.

A daemon registers when it starts, beats every few seconds, records each look at the
running jobs (its "pass") and removes its row when it stops. A row whose process is gone
(this host: the pid no longer runs; another host: no beat for `STALE_SECONDS`) is not
running, whatever it says: `running` leaves it out, and `prune` removes it.
"""

from __future__ import annotations

import socket
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Engine, case, delete, insert, literal, select, update

from costsched.model import InvalidInput
from costsched.store.database import epoch_second, from_epoch_second
from costsched.store.leases import holder_pid, process_gone
from costsched.store.schema import daemons

KINDS = ("auto", "installed", "service")  # started by a launch, by what `install` wrote, else
STALE_SECONDS = 60  # a daemon of another host not heard from for this long is not running
PRUNE_SECONDS = 86_400  # rows of gone daemons older than this are removed


@dataclass(frozen=True)
class DaemonRow:
    holder: str
    host: str
    pid: int
    kind: str
    tasks: tuple[str, ...]
    watch_seconds: float
    log: str
    started_at: datetime
    seen_at: datetime
    pass_at: datetime | None
    pass_status: str  # "" before its first pass, else ok | failed
    pass_detail: str
    pass_every: float | None = None  # seconds between its last two passes

    @property
    def here(self) -> bool:
        """Whether it runs on this host."""
        return self.host == socket.gethostname()

    def alive(self, at: datetime) -> bool:
        """Whether its process runs at `at`: this host's process table says so; another
        host's daemon, its heartbeat."""
        if self.here:
            return not process_gone(self.pid)
        return (at - self.seen_at).total_seconds() <= STALE_SECONDS


class DaemonRecords:
    """The daemons' rows in the database of `engine`."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def register(self, holder: str, *, kind: str, tasks: tuple[str, ...],
                 watch_seconds: float, log: str, at: datetime) -> None:
        """Record that the daemon `holder` ("host:pid:tag") started at `at`."""
        if kind not in KINDS:
            raise InvalidInput(f"daemon kind {kind!r}: expected one of {', '.join(KINDS)}")
        host, pid = holder_pid(holder)
        now = epoch_second(at)
        with self.engine.begin() as conn:
            conn.execute(delete(daemons).where(daemons.c.holder == holder))
            conn.execute(insert(daemons).values(
                holder=holder, host=host, pid=pid or 0, kind=kind, tasks=",".join(tasks),
                watch_seconds=float(watch_seconds), log=log, started_ts=now, seen_ts=now,
                pass_ts=None, pass_status="", pass_detail=""))

    def beat(self, holder: str, at: datetime) -> bool:
        """The daemon's heartbeat; False when it has no row (it was pruned: register)."""
        with self.engine.begin() as conn:
            return conn.execute(update(daemons).where(daemons.c.holder == holder)
                                .values(seen_ts=epoch_second(at))).rowcount == 1

    def passed(self, holder: str, status: str, detail: str, at: datetime) -> None:
        """Record the daemon's look at the running jobs that ended at `at` (ok or failed),
        and the seconds since its previous one (`pass_every`)."""
        now = epoch_second(at)
        since = case((daemons.c.pass_ts.is_(None), None),
                     else_=literal(now) - daemons.c.pass_ts)
        with self.engine.begin() as conn:
            conn.execute(update(daemons).where(daemons.c.holder == holder).values(
                pass_every=since, pass_ts=now, seen_ts=now, pass_status=status,
                pass_detail=detail[:2000]))

    def unregister(self, holder: str) -> None:
        with self.engine.begin() as conn:
            conn.execute(delete(daemons).where(daemons.c.holder == holder))

    def get(self, holder: str) -> DaemonRow | None:
        with self.engine.connect() as conn:
            row = conn.execute(select(daemons).where(daemons.c.holder == holder)).first()
        return None if row is None else _row(row)

    def rows(self) -> list[DaemonRow]:
        """Every row stored, running or not, oldest first."""
        with self.engine.connect() as conn:
            found = conn.execute(select(daemons).order_by(daemons.c.started_ts,
                                                          daemons.c.holder)).all()
        return [_row(r) for r in found]

    def running(self, at: datetime) -> list[DaemonRow]:
        """The daemons whose process runs at `at`, oldest first."""
        return [r for r in self.rows() if r.alive(at)]

    def prune(self, at: datetime) -> int:
        """Remove the rows of this host's daemons that are gone, and of any daemon not
        heard from for a day; how many."""
        gone = [r.holder for r in self.rows()
                if (r.here and not r.alive(at))
                or (at - r.seen_at).total_seconds() > PRUNE_SECONDS]
        if not gone:
            return 0
        with self.engine.begin() as conn:
            return int(conn.execute(delete(daemons).where(daemons.c.holder.in_(gone)))
                       .rowcount)


def _time(ts: int | None) -> datetime | None:
    return None if ts is None else from_epoch_second(ts)


def _row(r) -> DaemonRow:  # noqa: ANN001 - a SQLAlchemy Row
    return DaemonRow(holder=r.holder, host=r.host, pid=int(r.pid), kind=r.kind,
                     tasks=tuple(t for t in r.tasks.split(",") if t),
                     watch_seconds=float(r.watch_seconds), log=r.log,
                     started_at=_time(r.started_ts), seen_at=_time(r.seen_ts),
                     pass_at=_time(r.pass_ts), pass_status=r.pass_status,
                     pass_detail=r.pass_detail,
                     pass_every=None if r.pass_every is None else float(r.pass_every))

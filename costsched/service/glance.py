"""Quick answers read from a SQLite store file with the standard library (no SQLAlchemy,
pandas or schema upgrade), for the commands that must start at once: `status` of a store
with nothing to show, `logs` of a job, `status` and `logs` of a job the store does not
hold, the stored prices `gpus` shows. Each answers only
when the answer is plain; None means "open the store" (a server's URL, a file busy or
unreadable now, an ambiguous name, a schema older or newer than this code's).
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone

from costsched.service.store_files import store_file
from costsched.spot_market import NEWEST_SPOT_SQL
from costsched.spot_market import stored_spot_markets as stored_spot_markets_of
from costsched.store_revision import VERSION_TABLE, newest_revision
from costsched.vocabulary import did_you_mean

# costsched.store.schema's table names, and the daemon's tasks and scheduler table (a test
# keeps them equal to the originals: importing those here would load SQLAlchemy).
JOBS, PLACEMENTS, TASK_RUNS, DAEMONS = "jobs", "placements", "task_runs", "daemons"
BOOKINGS = "bookings"
HELD_STATES = ("purchasing", "scheduled", "active")  # costsched.service.booking's
OFFERINGS, PRICES = "offerings", "prices"
OFFERING_FIELDS = ("cloud", "region", "zone", "instance_type", "market", "os", "gpu_model",
                   "gpu_count", "vcpus", "memory_gb")
TASKS = ("collect", "replan", "catalog")
JOBSTORE_TABLE = "apscheduler_jobs"


def nothing_to_show(db: str | None) -> bool | None:
    """True when the store has no job, its scheduled optimizer never ran (nor is
    scheduled), no daemon runs for it and it holds no booked capacity that has not ended
    (`status` shows it); False when it has any; None when it cannot be told this way."""
    with _reading(db) as conn:
        if conn is None:
            return None
        try:
            return not (any(_has_rows(conn, t)
                            for t in (JOBS, TASK_RUNS, JOBSTORE_TABLE, DAEMONS))
                        or _holds_bookings(conn))
        except sqlite3.Error:
            return None


def _holds_bookings(conn: sqlite3.Connection) -> bool:
    if not conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                        (BOOKINGS,)).fetchone():
        return False
    now = datetime.now(timezone.utc).timestamp()
    return conn.execute(f"SELECT EXISTS (SELECT 1 FROM {BOOKINGS} WHERE end_ts > ? AND state "
                        f"IN ({', '.join('?' * len(HELD_STATES))}))",
                        (now, *HELD_STATES)).fetchone()[0] == 1


def last_instance(db: str | None, job: str) -> tuple[str, str, dict] | None:
    """(launcher name, instance, the job as stored: `remember_secrets` reads it) of the
    newest placement of `job`: an id, or a name that only one job has; None when it cannot
    be told this way (several jobs of that name, no such job, no placement yet)."""
    with _reading(db) as conn:
        if conn is None:
            return None
        try:
            column = "id" if job.isdigit() else "name"
            found = conn.execute(f"SELECT id, spec FROM {JOBS} WHERE {column} = ?",
                                 (int(job) if job.isdigit() else job,)).fetchall()
            if len(found) != 1:
                return None
            placement = conn.execute(f"SELECT instance FROM {PLACEMENTS} WHERE job_id = ? "
                                     "ORDER BY start_ts DESC, id DESC LIMIT 1",
                                     (found[0][0],)).fetchone()
            spec = json.loads(found[0][1])
        except (sqlite3.Error, ValueError):
            return None
    if placement is None or not isinstance(spec, dict):
        return None
    return str(spec.get("launcher", "local")), str(placement[0]), spec


def missing_job(db: str | None, job: str) -> str | None:
    """The line that refuses `job` (an id, or a name) when the store holds no such job, in
    the store's words (`no_such_name`); None when it holds one, or when it cannot be told
    this way."""
    with _reading(db) as conn:
        if conn is None or not _current(conn):
            return None
        try:
            if job.isdigit():
                found = conn.execute(f"SELECT 1 FROM {JOBS} WHERE id = ?", (int(job),))
                if found.fetchone():
                    return None
                ids = [i for (i,) in conn.execute(f"SELECT id FROM {JOBS} ORDER BY id")]
                return no_such_id(int(job), ids)
            names = sorted({n for (n,) in conn.execute(f"SELECT name FROM {JOBS}")})
        except (sqlite3.Error, ValueError):
            return None
    return None if job in names else no_such_name(job, names)


def no_such_name(job: str, names: list[str]) -> str:
    """The line that refuses a job name no job has, with the close ones among the jobs'
    `names` (sorted), else the first of them."""
    listed = f"; the jobs: {few_names(names)}" if names else ""
    return f"job {job!r}: no job of that name in the store" + (did_you_mean(job, names)
                                                                or listed)


def no_such_id(job_id: int, ids: list[int]) -> str:
    """The line that refuses a job id no job has, with the ids the store's jobs have
    (`ids`, sorted): 'job 999: no such job in the store; it holds jobs 1 to 18'."""
    if not ids:
        return f"job {job_id}: no such job in the store; it holds no job yet"
    held = (f"it holds job {ids[0]} (`costsched status` shows it)" if len(ids) == 1
            else f"it holds jobs {ids[0]} to {ids[-1]}" if ids[-1] - ids[0] == len(ids) - 1
            else f"it holds jobs {few_names([str(i) for i in ids])}")
    lists = "" if len(ids) == 1 else " (`costsched status` lists them)"
    return f"job {job_id}: no such job in the store; {held}{lists}"


def few_names(names: list[str], limit: int = 5) -> str:
    """The first `limit` of `names`, and how many more there are."""
    return ", ".join(names[:limit]) + (f" and {len(names) - limit} more"
                                       if len(names) > limit else "")


# In a stored job: its agents write its log with its --secret values masked (every
# launcher's since this key was written; a job stored before may have logs that hold them).
MASKED_AT_SOURCE = "log_masked_at_source"


def masked_at_source(stored: dict) -> bool:
    """Whether a stored job's logs were written with its --secret values masked."""
    return stored.get(MASKED_AT_SOURCE) is True


def secret_names(stored: dict) -> list[str]:
    """The names of a stored job's --secret values (its task's `secrets`)."""
    task = (stored.get("spec") or {}).get("task") or {}
    return [str(n) for n in task.get("secrets") or [] if isinstance(n, str)]


def remember_secrets(stored: dict) -> None:
    """Mask from now on, wherever a stored job's output shows them, the values of its
    --secret names (from this process's environment, as its launch took them) and the
    values its file gives envs named like a secret's (`redact.is_secret_name`: stored
    with the job, as `launch` warns)."""
    from costsched.redact import is_secret_name, remember, remember_given

    remember_given(secret_names(stored))
    envs = (stored.get("spec") or {}).get("envs") or {}
    if isinstance(envs, dict):
        remember(str(v) for k, v in envs.items() if v and is_secret_name(str(k)))


def stored_gpu_prices(db: str | None, at: datetime, *, clouds: Sequence[str] = (),
                      gpu_models: Sequence[str] = ()) -> list[dict] | None:
    """The store's price of each Linux GPU offering (of `clouds` and `gpu_models`, when
    given) at `at`: its last observation at or before it, as `PriceStore.as_of` reads it,
    as dicts of OFFERING_FIELDS, usd_per_hour, effective_at (aware UTC) and source, in the
    offerings' order; None when it cannot be told this way."""
    conditions, values = ["o.os = 'linux'", "o.gpu_count > 0"], []
    for column, wanted in (("cloud", clouds), ("gpu_model", gpu_models)):
        if wanted:
            conditions.append(f"o.{column} IN ({', '.join('?' * len(wanted))})")
            values.extend(wanted)
    query = (f"SELECT {', '.join('o.' + f for f in OFFERING_FIELDS)}, p.usd_per_hour, "
             f"p.effective_ts, p.source FROM {OFFERINGS} o JOIN {PRICES} p ON "
             f"p.offering_id = o.id AND p.effective_ts = (SELECT MAX(effective_ts) FROM "
             f"{PRICES} WHERE offering_id = o.id AND effective_ts <= ?) "
             f"WHERE {' AND '.join(conditions)} ORDER BY o.id")
    with _reading(db) as conn:
        if conn is None or not _current(conn):
            return None
        try:
            if conn.execute("SELECT 1 FROM quotas LIMIT 1").fetchone() is not None:
                return None  # quotas read: their marks are the service's to make
            rows = conn.execute(query, [math.floor(at.timestamp()), *values]).fetchall()
        except sqlite3.Error:
            return None
    return [{**dict(zip(OFFERING_FIELDS, row, strict=False)), "usd_per_hour": row[-3],
             "effective_at": datetime.fromtimestamp(row[-2], timezone.utc),
             "source": row[-1]} for row in rows]


def stored_spot_markets(db: str | None, at: datetime) -> dict[str, datetime] | None:
    """The clouds whose spot market the store holds at `at`, read over all of it as
    `PriceStore.spot_markets` reads them (`costsched.spot_market`); None when it cannot be
    told this way."""
    with _reading(db) as conn:
        if conn is None or not _current(conn):
            return None
        try:
            return stored_spot_markets_of(conn.execute(NEWEST_SPOT_SQL,
                                                       {"at": math.floor(at.timestamp())}))
        except sqlite3.Error:
            return None


def _current(conn: sqlite3.Connection) -> bool:
    """Whether the store's schema is the newest revision this code knows."""
    newest = newest_revision()
    try:
        return newest is not None and _has_rows(conn, VERSION_TABLE) and conn.execute(
            f"SELECT version_num FROM {VERSION_TABLE}").fetchall() == [(newest,)]
    except sqlite3.Error:
        return False


@contextmanager
def _reading(db: str | None) -> Iterator[sqlite3.Connection | None]:
    """A read-only connection to the store's SQLite file, or None (no such file, a
    server's URL, a file that cannot be opened now)."""
    path = store_file(db)
    if path is None or not path.is_file():
        yield None
        return
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=1.0)
    except sqlite3.Error:
        yield None
        return
    try:
        yield conn
    finally:
        conn.close()


def _has_rows(conn: sqlite3.Connection, table: str) -> bool:
    exists = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
                          (table,)).fetchone()
    return exists is not None and conn.execute(
        f"SELECT EXISTS (SELECT 1 FROM {table})").fetchone()[0] == 1

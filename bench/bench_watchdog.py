"""PostgreSQL watchdog benchmark: what the deadline on each wait for the server
(`costsched.store.watchdog`) costs per statement.

A loop of 1,000 transactions of one `SELECT 1` (execute, fetch, commit) on a watched
connection and on a plain psycopg one from the same engine settings, alternated round by
round in one run so that the machine's load falls on both alike. Target: negligible (within
the rounds' noise, a few percent at most). Prints the median microseconds per statement of
each and their ratio, and the time of the wait alone (no server) of each; asserts nothing.

    COSTSCHED_TEST_PG_URL=postgresql+psycopg://... .venv/bin/python bench/bench_watchdog.py
        [--db URL] [--queries 1000] [--rounds 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import psycopg
from sqlalchemy import Connection

from costsched.config import StoreConfig
from costsched.store import database, watchdog


def _plain(_within: float | None, _why: str, *args: object, **kwargs: object) -> psycopg.Connection:
    return psycopg.connect(*args, **kwargs)  # type: ignore[arg-type]


def _connection(url: str, watched: bool) -> Connection:
    engine = database.make_engine(url, StoreConfig())
    made = watchdog.connect
    watchdog.connect = made if watched else _plain  # type: ignore[assignment]
    try:
        conn = engine.connect()
    finally:
        watchdog.connect = made
    assert isinstance(conn.connection.dbapi_connection, watchdog.WatchedConnection) == watched
    return conn


def _loop(conn: Connection, queries: int) -> float:
    """Microseconds per transaction of one SELECT 1."""
    started = time.perf_counter()
    for _ in range(queries):
        with conn.begin():
            conn.exec_driver_sql("SELECT 1").scalar_one()
    return (time.perf_counter() - started) / queries * 1e6


def _done():  # noqa: ANN202 - a psycopg generator that needs no wait
    return None
    yield


def _per_wait(conn: psycopg.Connection, waits: int = 200_000) -> float:
    """Microseconds `conn.wait` itself takes (a generator done at once: no server)."""
    started = time.perf_counter()
    for _ in range(waits):
        conn.wait(_done())
    return (time.perf_counter() - started) / waits * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", default=os.environ.get("COSTSCHED_TEST_PG_URL"))
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    if not args.db:
        parser.error("give --db postgresql+psycopg://... or set COSTSCHED_TEST_PG_URL")
    plain, watched = _connection(args.db, False), _connection(args.db, True)
    _loop(plain, 100), _loop(watched, 100)  # warm up both
    times: dict[str, list[float]] = {"plain": [], "watched": []}
    for round_ in range(args.rounds):  # alternate which goes first
        order = [("plain", plain), ("watched", watched)][:: 1 if round_ % 2 else -1]
        for name, conn in order:
            times[name].append(_loop(conn, args.queries))
    p, w = statistics.median(times["plain"]), statistics.median(times["watched"])
    print(f"{args.queries} transactions of SELECT 1, median of {args.rounds} rounds "
          f"alternated: plain psycopg {p:.1f} us, watched {w:.1f} us per statement; "
          f"ratio {w / p:.3f} ({w - p:+.1f} us)")
    print("rounds plain:  ", " ".join(f"{t:.0f}" for t in times["plain"]))
    print("rounds watched:", " ".join(f"{t:.0f}" for t in times["watched"]))
    driver = {name: c.connection.dbapi_connection for name, c in (("plain", plain),
                                                                 ("watched", watched))}
    waits = {name: statistics.median(_per_wait(d) for _ in range(3)) for name, d in driver.items()}
    print(f"the wait alone (no server): plain {waits['plain']:.2f} us, watched "
          f"{waits['watched']:.2f} us ({waits['watched'] - waits['plain']:+.2f} us per wait; "
          "a transaction above waits twice: execute, commit)")
    plain.close(), watched.close()


if __name__ == "__main__":
    main()

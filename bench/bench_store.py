"""Store benchmark: ingest rate of generated observations, the as-of query time, and
concurrent writers (3 processes ingesting overlapping batches at once into a new store)
next to a single writer, on SQLite and (when COSTSCHED_TEST_PG_URL is set) PostgreSQL.

Targets (2-core machine): >= 100,000 rows/s ingest into SQLite, < 20 ms per as-of query
over 1,000 offerings. Prints the figures and their ratio to the targets; asserts nothing.

    .venv/bin/python bench/bench_store.py [--rows 1000000] [--offerings 1000] [--db URL]
                                          [--writer-rows 300000]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from urllib.parse import quote

import numpy as np
import pandas as pd

from costsched.store import OBSERVATION_COLUMNS, PriceStore

TARGET_ROWS_PER_S = 100_000
TARGET_QUERY_MS = 20.0


def generate(rows: int, offerings: int, seed: int = 0) -> pd.DataFrame:
    """`rows` price changes spread over `offerings` spot offerings across a year."""
    rng = np.random.default_rng(seed)
    which = np.arange(rows) % offerings
    per = rows // offerings + 1
    step = (np.arange(rows) // offerings).astype("int64")
    start = pd.Timestamp("2025-01-01", tz="UTC").value // 1_000_000_000
    seconds = start + step * (365 * 86400 // per) + which  # distinct per offering
    return pd.DataFrame(
        {
            "cloud": "aws",
            "region": [f"region-{i % 30}" for i in which],
            "zone": [f"zone-{i}" for i in which],
            "instance_type": "p3.2xlarge",
            "market": "spot",
            "os": "linux",
            "gpu_model": "V100",
            "gpu_count": 1,
            "vcpus": 8,
            "memory_gb": 61.0,
            "usd_per_hour": np.round(rng.uniform(0.5, 3.0, rows), 4),
            "effective_at": pd.to_datetime(seconds, unit="s", utc=True),
            "source": "bench",
        }
    )[OBSERVATION_COLUMNS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--offerings", type=int, default=1_000)
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--db", help="SQLAlchemy URL (default: a temporary SQLite file)")
    parser.add_argument("--writer-rows", type=int, default=300_000,
                        help="rows of the concurrent-writer comparison (0: skip it)")
    args = parser.parse_args()

    frame = generate(args.rows, args.offerings)
    with tempfile.TemporaryDirectory() as tmp:
        store = PriceStore(args.db or str(Path(tmp) / "bench.sqlite"))
        t0 = time.perf_counter()
        result = store.ingest(frame)
        ingest_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        again = store.ingest(frame.head(100_000))
        reingest_s = time.perf_counter() - t0

        times = pd.to_datetime(
            np.linspace(frame["effective_at"].min().value, frame["effective_at"].max().value,
                        args.queries), utc=True)
        store.as_of(times[0])  # warm the connection pool and caches
        t0 = time.perf_counter()
        sizes = [len(store.as_of(t)) for t in times]
        query_ms = (time.perf_counter() - t0) / args.queries * 1000
        store.dispose()

    rate = result.inserted / ingest_s
    print(f"ingest: {result.inserted:,} rows in {ingest_s:.2f} s = {rate:,.0f} rows/s "
          f"({rate / TARGET_ROWS_PER_S:.2f}x the {TARGET_ROWS_PER_S:,} rows/s target)")
    print(f"re-ingest of 100,000 stored rows: {again.inserted} new, "
          f"{100_000 / reingest_s:,.0f} rows/s checked")
    print(f"as-of query over {args.offerings:,} offerings x {args.rows:,} rows: "
          f"{query_ms:.2f} ms per query, mean {np.mean(sizes):.0f} rows returned "
          f"({TARGET_QUERY_MS / query_ms:.2f}x faster than the {TARGET_QUERY_MS:.0f} ms target)")
    if args.writer_rows:
        compare_writers(args.writer_rows, args.offerings)


# --- concurrent writers ---------------------------------------------------------------------

WRITERS = 3


def compare_writers(rows: int, offerings: int) -> None:
    """3 processes at once, each with 2/3 of the rows (every row in two batches), against
    one process with all of them; each into a new store whose offerings do not exist yet."""
    frame = generate(rows, offerings, seed=1)
    parts = [frame[np.arange(len(frame)) % WRITERS != i] for i in range(WRITERS)]
    backends: list[tuple[str, Callable[[], AbstractContextManager[str]]]] = [
        ("sqlite", _sqlite_store)]
    if os.environ.get("COSTSCHED_TEST_PG_URL"):
        backends.append(("postgresql", _postgresql_store))
    else:
        print("concurrent writers on PostgreSQL: skipped (set COSTSCHED_TEST_PG_URL)")
    for name, new_store in backends:
        with new_store() as url:
            one_s, one_stored = _ingest_at_once(url, [frame])
        with new_store() as url:
            many_s, many_stored = _ingest_at_once(url, parts)
        one_rate, many_rate = one_stored / one_s, many_stored / many_s
        print(f"{name}: 1 writer: {len(frame):,} rows expected, {one_stored:,} stored, "
              f"{one_rate:,.0f} rows/s; {WRITERS} writers of {len(parts[0]):,} rows each "
              f"at once: {len(frame):,} expected, {many_stored:,} stored, "
              f"{many_rate:,.0f} distinct rows/s ({many_rate / one_rate:.2f}x one writer)")


@contextmanager
def _sqlite_store() -> Iterator[str]:
    with tempfile.TemporaryDirectory() as tmp:
        yield str(Path(tmp) / "writers.sqlite")


@contextmanager
def _postgresql_store() -> Iterator[str]:
    from sqlalchemy import create_engine, text

    admin_url = os.environ["COSTSCHED_TEST_PG_URL"]
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    admin = create_engine(admin_url)
    with admin.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    sep = "&" if "?" in admin_url else "?"
    try:
        yield f"{admin_url}{sep}options={quote(f'-csearch_path={schema}')}"
    finally:
        with admin.begin() as conn:
            conn.execute(text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


def _ingest_at_once(url: str, batches: list[pd.DataFrame]) -> tuple[float, int]:
    """Seconds from the release of one process per batch to the end of the last, and the
    rows stored."""
    PriceStore(url).dispose()  # the schema, before the clock
    ctx = multiprocessing.get_context("fork")
    start = ctx.Barrier(len(batches) + 1)
    procs = [ctx.Process(target=_writer, args=(url, batch, start)) for batch in batches]
    for proc in procs:
        proc.start()
    start.wait()
    t0 = time.perf_counter()
    for proc in procs:
        proc.join()
    seconds = time.perf_counter() - t0
    failed = [p.exitcode for p in procs if p.exitcode != 0]
    if failed:
        raise SystemExit(f"{len(failed)} writer(s) failed: exit codes {failed}")
    store = PriceStore(url, migrate=False)
    stored = store.count()
    store.dispose()
    return seconds, stored


def _writer(url: str, batch: pd.DataFrame, start) -> None:  # noqa: ANN001 - a Barrier
    store = PriceStore(url, migrate=False)
    start.wait()
    store.ingest(batch)
    store.dispose()


if __name__ == "__main__":
    main()

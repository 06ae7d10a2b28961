"""Store benchmark: ingest rate of generated observations and the as-of query time.

Targets (2-core machine): >= 100,000 rows/s ingest into SQLite, < 20 ms per as-of query
over 1,000 offerings. Prints the figures and their ratio to the targets; asserts nothing.

    .venv/bin/python bench/bench_store.py [--rows 1000000] [--offerings 1000] [--db URL]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

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


if __name__ == "__main__":
    main()

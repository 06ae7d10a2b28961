"""Deadline benchmark: the deadline table on the 9-zone 2023 V100 availability trace.

Imports ../shared/data/spot-traces/availability/1-node/aws-02-15-2023 into a fresh SQLite
store (timed on its own), then runs 48-hour jobs with 52 h and 70 h deadlines, 3 and
12 minute restarts, 30-minute checkpoints, 20 starts spread over the trace from each of the
9 zones, every deadline policy and the hindsight optimum over the 9 zones. Target: the
table in under 30 s. Prints the table with its misses, the times (wall and CPU: on a busy
machine the CPU time is the fair one) and the ratio to the target; asserts nothing.

    .venv/bin/python bench/bench_deadline.py [--plot deadline.png]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from costsched.backtest.deadline import plot, to_markdown
from costsched.service import import_prices
from costsched.service.deadline import deadline_backtest
from costsched.store import PriceStore

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.shared_data
from tests.shared_data import shared_data  # noqa: E402

SHARED = shared_data()
TRACE = SHARED / "spot-traces" / "availability" / "1-node" / "aws-02-15-2023"
TARGET_S = 30.0


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot", type=Path, help="write the chart (PNG)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = PriceStore(str(Path(tmp) / "prices.sqlite"))
        imported, wall, cpu = timed(lambda: import_prices(store, [TRACE]))
        print(f"import: {len(list(TRACE.glob('*.json')))} trace files in {wall:.1f} s "
              f"(CPU {cpu:.1f} s)")
        result, wall, cpu = timed(lambda: deadline_backtest(store))
        store.dispose()
    print()
    print(to_markdown(result.summary))
    print()
    steps = ", ".join(f"{k}: {v} s" for k, v in result.optimum_steps.items())
    print(f"runs: {len(result.results)}; misses: {result.misses}; prices: "
          f"{result.trace['prices']}; optimum waste step {steps}")
    print(f"deadline table: {wall:.1f} s wall, {cpu:.1f} s CPU; target {TARGET_S:.0f} s: "
          f"{wall / TARGET_S:.2f}x wall, {cpu / TARGET_S:.2f}x CPU of it")
    if args.plot:
        plot(result.summary, args.plot)
        print(f"chart written to {args.plot}")


if __name__ == "__main__":
    main()

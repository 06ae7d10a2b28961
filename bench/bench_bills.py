"""Bills benchmark: how long an import of a large AWS export takes, by step, and what
matching costs against reading, side by side in one run.

An account's month: N line items (default 100,000) of other workloads' instances, plus one
costsched job's hourly spot lines, in one CUR 2.0 gzip CSV. Read (decompress, parse, check),
store (one transaction), match (every stored line against the placements), and store
again (the same export re-imported: replaced, not added) are timed. Prints; asserts nothing.

    .venv/bin/python bench/bench_bills.py [--lines 100000]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for tests.costsched.bills

from costsched.bills import files  # noqa: E402
from costsched.bills.aws import lines_of  # noqa: E402
from costsched.bills.imports import _rematch  # noqa: E402
from costsched.store import PriceStore  # noqa: E402
from costsched.store.bills import BillStore  # noqa: E402
from tests.costsched.bills import scenario  # noqa: E402
from tests.costsched.bills.exports import cur_csv_gz, cur_row  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=100_000)
    args = parser.parse_args()
    T, H = scenario.T, scenario.H
    rows = [cur_row(T + (i % 720) * H, T + (i % 720 + 1) * H, "BoxUsage:m5.large", 0.096,
                    resource=f"i-{i:08x}", term="OnDemand", line_id=f"x{i}")
            for i in range(args.lines)]
    rows += [cur_row(T + h * H, T + (h + 1) * H, "SpotUsage:p3.2xlarge", 0.918,
                     resource="i-0aaa", line_id=f"s{h}") for h in range(3)]
    data = cur_csv_gz(rows)
    with tempfile.TemporaryDirectory() as folder:
        store = PriceStore(str(Path(folder) / "p.sqlite"))
        scenario.fill(store)
        bills = BillStore(store.engine)
        t0 = time.perf_counter()
        lines = lines_of(files.read_table(data, "x.csv.gz"), "x.csv.gz")
        t1 = time.perf_counter()
        bills.replace("x.csv.gz", lines, at=scenario.NOW)
        t2 = time.perf_counter()
        found = _rematch(store, bills, bills.lines(), pd.Timestamp(scenario.NOW))
        t3 = time.perf_counter()
        bills.replace("x.csv.gz", lines, at=scenario.NOW)
        t4 = time.perf_counter()
        stored, matched = bills.count(), int((found["matched_by"] != "").sum())
        store.dispose()
    read, put, match, again = t1 - t0, t2 - t1, t3 - t2, t4 - t3
    total = len(rows)
    print(f"{total:,} lines ({len(data) / 1e6:.1f} MB gzip): read {read:.2f} s "
          f"({total / read:,.0f} lines/s), store {put:.2f} s, match {match:.2f} s, "
          f"store again {again:.2f} s; {stored:,} stored after two imports, {matched} matched")
    print(f"match / read: {match / read:.2f}x; store again / store: {again / put:.2f}x")


if __name__ == "__main__":
    main()

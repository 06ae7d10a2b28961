"""Risk backtest: does placing spot jobs by each zone's hazard pay, against placing them by
price alone? Same decision model, same prices, same jobs and starts
(`costsched.backtest.risk`).

Two traces of ../shared/data/spot-traces: the 9-zone V100 availability trace (45 days;
24-hour jobs due in 36 h, a start every 12 h after a 7-day lookback) and the 4-zone V100
preemption trace (one week; 8-hour jobs due in 12 h, a start every 3 h after a 2-day
lookback). Prices: all zones equal ($0.918/h, 30% of on-demand) and PERMUTATIONS seeded
assignments of $0.92-1.20/h to the zones (the spot range of spring 2023); on-demand
$3.06/h. Prints one Markdown table (mean USD per job, preemptions, late jobs, and
risk-aware over price-only realised cost) and the time taken; asserts nothing.

    .venv/bin/python bench/bench_risk.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from costsched.backtest.risk import HourlyHazards, RiskJob, Traces, replay, summary

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.shared_data
from tests.shared_data import shared_data  # noqa: E402

TRACES = shared_data() / "spot-traces"
ON_DEMAND = 3.06
PERMUTATIONS = 3
CASES = (
    ("availability, 9 zones, 45 d", TRACES / "availability" / "1-node" / "aws-02-15-2023",
     RiskJob(24, 36), 7 * 24, 12),
    ("preemption, 4 zones, 7 d", TRACES / "preemption" / "1-node" / "aws-04-22-2023",
     RiskJob(8, 12), 48, 3),
)


def main() -> None:
    began = time.perf_counter()
    print("| trace | prices | jobs | policy | expected $/job | realised $/job | preemptions "
          "| on-demand h | late | realised vs price-only |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, folder, job, lookback, every in CASES:
        traces = Traces.read(folder)
        starts = np.arange(lookback, traces.hours - job.deadline_hours, every)
        hazards = HourlyHazards(traces, lookback)
        n = len(traces.zones)
        scenarios = [("equal $0.918", np.full(n, 0.918))] + [
            (f"spread, seed {s}",
             np.random.default_rng(s).permutation(np.linspace(0.92, 1.20, n)))
            for s in range(PERMUTATIONS)]
        for label, prices in scenarios:
            table = summary(replay(traces, job, starts, prices, ON_DEMAND, hazards))
            base = float(table.loc[table["policy"] == "price-only", "realised_usd"].iloc[0])
            for r in table.itertuples():
                print(f"| {name} | {label} | {r.jobs} | {r.policy} | {r.expected_usd:.2f} | "
                      f"{r.realised_usd:.2f} | {r.preemptions} | {r.on_demand_hours:.1f} | "
                      f"{r.late} | {r.realised_usd / base:.3f} |")
    print(f"\n{time.perf_counter() - began:.1f} s")


if __name__ == "__main__":
    main()

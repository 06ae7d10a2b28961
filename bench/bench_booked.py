"""What a capacity block is worth on SkyNomad's V100 setting, replayed through the CLI.

The setting of bench_skynomad.py (three zones' 2023 p3.2xlarge availability and per-tick
spot prices, the 39.94-hour job due in 59.91 hours, 12-minute restarts, a 50 GB checkpoint,
on-demand $3.06/h, the five published windows), replayed by `costsched backtest-deadline`
once as it is and once more with each block below bought at each run's start
(`--block`). EC2 sells no p3.2xlarge capacity blocks: the blocks here are priced at the
published Capacity Blocks rate per GPU-hour of the nearest type it does sell, p4d.24xlarge
($14.75 an instance-hour for 8 A100s in US East (Ohio), the rate table in force until
2025-01-01: $1.844 per GPU-hour), an assumption stated, not a price of a V100 block.

Prints per policy and block the mean cost over the windows, its change against the same
policy without a block, and the missed deadlines.

    .venv/bin/python bench/bench_booked.py [--policies spot-anywhere,greedy]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_skynomad import (  # noqa: E402
    DATA,
    DEADLINE_HOURS,
    ON_DEMAND,
    WORK_HOURS,
    ZONES,
    costsched,
    published,
    write_inputs,
)

RATE = 14.75 / 8  # USD per GPU-hour of the published p4d.24xlarge block rate
# (zone, hours after the run's start, length in hours): blocks EC2 sells in whole days.
BLOCKS = [("us-east-1c", 0, 24), ("us-east-1c", 0, 48), ("us-east-1c", 12, 24),
          ("us-east-2b", 24, 24)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", default="spot-anywhere,greedy")
    args = parser.parse_args()
    pub = published()
    aligned = pd.Timestamp(pd.read_csv(DATA / "availability" / f"{ZONES[0]}_v100_1.csv",
                                       nrows=1)["date"].iloc[0], tz="UTC")
    windows = [aligned + pd.Timedelta(hours=h) for h in pub["env_start_hours"]]
    wall = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "in"
        start = write_inputs(folder, ZONES)
        db = f"sqlite:///{folder / 'store.sqlite'}"
        costsched("prices", "import", str(folder), "--trace-start", start, "--db", db)
        window_file = folder / "windows.txt"
        window_file.write_text("\n".join(w.isoformat() for w in windows) + "\n")
        blocks = [f"p3.2xlarge,{zone},{at},{hours},{hours * RATE:.2f}"
                  for zone, at, hours in BLOCKS]
        out = costsched("backtest-deadline", "--db", db, "--zones", ",".join(ZONES),
                        "--job-hours", repr(WORK_HOURS), "--deadline", repr(DEADLINE_HOURS),
                        "--restart-minutes", "12", "--checkpoint-minutes", "0.25",
                        "--checkpoint-gb", "50", "--on-demand-price", str(ON_DEMAND),
                        "--windows", str(window_file), "--optimum-step", "exact",
                        "--policies", args.policies, "--json",
                        *[a for b in blocks for a in ("--block", b)])
    import json

    document = json.loads(out)
    print(f"replayed through the CLI in {time.perf_counter() - wall:.0f} s; block rate "
          f"${RATE:.3f}/h (published p4d.24xlarge Capacity Blocks rate per GPU-hour)")
    print(report(document, args.policies.split(",")))


def report(document: dict, policies: list[str]) -> str:
    windows = pd.DataFrame(document["windows"])
    mean = windows.groupby("policy", sort=False)["cost_usd"].mean()
    late = windows.groupby("policy", sort=False)["misses"].sum()
    lines = ["| policy | block | mean $ per run | vs no block | vs optimum | late runs |",
             "|---|---|---|---|---|---|"]
    for p in policies:
        base = mean[p]
        for name in [p, *[n for n in mean.index if n.startswith(f"{p} + ")]]:
            block = name.split(" + ", 1)[1] if " + " in name else "none"
            lines.append(f"| {p} | {block} | {mean[name]:.2f} | {mean[name] / base - 1:+.1%}"
                         f" | {mean[name] / mean['optimum'] - 1:+.1%} | {int(late[name])} |")
    lines.append(f"| optimum (no block) | - | {mean['optimum']:.2f} | | | |")
    lines.append(f"| on-demand | - | {mean['on-demand']:.2f} | | | |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()

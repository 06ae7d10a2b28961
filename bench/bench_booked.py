"""When a capacity block pays: deadline replays with and without one, through the CLI.

Two settings, each replayed by `costsched backtest-deadline` once as it is and once more
with each block below bought at each run's start (`--block`):

- plentiful spot: SkyNomad's V100 setting (bench_skynomad.py: three zones' 2023
  p3.2xlarge availability and per-tick spot prices, the 39.94-hour job due in 59.91
  hours, 12-minute restarts, a 50 GB checkpoint, on-demand $3.06/h, the five published
  windows);
- scarce spot: a 48-hour job due in 70 hours held to us-east-1a, whose p3.2xlarge spot
  was available 17% of the time in the 45-day 2023 recording of ../shared/data/spot-traces
  (20 starts spread over it, 12-minute restarts, 30-minute checkpoints, spot $0.92/h,
  on-demand $3.06/h: the reference prices of that time).

EC2 sells no p3.2xlarge capacity blocks: the blocks here are priced at the published
Capacity Blocks rate per GPU-hour of the nearest type it does sell, p4d.24xlarge ($14.75
an instance-hour for 8 A100s in US East (Ohio), the rate table in force until 2025-01-01:
$1.844 per GPU-hour), an assumption stated, not a price of a V100 block.

Prints per setting, policy and block the mean cost per run, its change against the same
policy without a block, the block's break-even price (the most it could cost and still pay
for that policy: its price less what it changed the mean cost), and the late runs.
Asserts nothing.

    .venv/bin/python bench/bench_booked.py [--policies spot-anywhere,greedy]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # for tests.shared_data
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

from tests.shared_data import shared_data  # noqa: E402

RATE = 14.75 / 8  # USD per GPU-hour of the published p4d.24xlarge block rate
SCARCE = shared_data() / "spot-traces" / "availability" / "1-node" / "aws-02-15-2023"
# (zone, hours after the run's start, length in hours): blocks EC2 sells in whole days.
PLENTIFUL_BLOCKS = [("us-east-1c", 0, 24), ("us-east-1c", 0, 48), ("us-east-1c", 12, 24),
                    ("us-east-2b", 24, 24)]
SCARCE_BLOCKS = [("us-east-1a", 0, 24), ("us-east-1a", 0, 48), ("us-east-1a", 12, 24),
                 ("us-east-1a", 24, 48)]


def blocks(chosen: list[tuple[str, int, int]]) -> list[str]:
    out = []
    for zone, at, hours in chosen:
        out += ["--block", f"p3.2xlarge,{zone},{at},{hours},{hours * RATE:.2f}"]
    return out


def plentiful(policies: str) -> dict:
    aligned = pd.Timestamp(pd.read_csv(DATA / "availability" / f"{ZONES[0]}_v100_1.csv",
                                       nrows=1)["date"].iloc[0], tz="UTC")
    windows = [aligned + pd.Timedelta(hours=h) for h in published()["env_start_hours"]]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "in"
        start = write_inputs(folder, ZONES)
        db = f"sqlite:///{folder / 'store.sqlite'}"
        costsched("prices", "import", str(folder), "--trace-start", start, "--db", db)
        window_file = folder / "windows.txt"
        window_file.write_text("\n".join(w.isoformat() for w in windows) + "\n")
        return json.loads(costsched(
            "backtest-deadline", "--db", db, "--zones", ",".join(ZONES),
            "--job-hours", repr(WORK_HOURS), "--deadline", repr(DEADLINE_HOURS),
            "--restart-minutes", "12", "--checkpoint-minutes", "0.25", "--checkpoint-gb",
            "50", "--on-demand-price", str(ON_DEMAND), "--windows", str(window_file),
            "--optimum-step", "exact", "--policies", policies, "--json",
            *blocks(PLENTIFUL_BLOCKS)))


def scarce(policies: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        db = f"sqlite:///{Path(tmp) / 'store.sqlite'}"
        costsched("prices", "import", str(SCARCE / "us-east-1a_v100_1.json"), "--db", db)
        return json.loads(costsched(
            "backtest-deadline", "--db", db, "--zones", "us-east-1a", "--job-hours", "48",
            "--deadline", "70", "--restart-minutes", "12", "--checkpoint-minutes", "30",
            "--spot-price", "0.92", "--on-demand-price", str(ON_DEMAND), "--starts", "20",
            "--policies", policies, "--json", *blocks(SCARCE_BLOCKS)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policies", default="spot-anywhere,greedy")
    args = parser.parse_args()
    policies = args.policies.split(",")
    print(f"block rate ${RATE:.3f} per GPU-hour (published p4d.24xlarge Capacity Blocks "
          "rate)")
    for name, replay in (("plentiful spot (SkyNomad V100, 3 zones)", plentiful),
                         ("scarce spot (us-east-1a alone)", scarce)):
        wall = time.perf_counter()
        document = replay(args.policies)
        print(f"\n{name}: replayed through the CLI in {time.perf_counter() - wall:.0f} s")
        print(report(document, policies))


def report(document: dict, policies: list[str]) -> str:
    windows = pd.DataFrame(document["windows"])
    mean = windows.groupby("policy", sort=False)["cost_usd"].mean()
    late = windows.groupby("policy", sort=False)["misses"].sum()
    price = {b["label"]: b["upfront_usd"] for b in document["trace"]["blocks"]}
    lines = ["| policy | block | mean $ per run | vs no block | break-even $ | late runs |",
             "|---|---|---|---|---|---|"]
    for p in policies:
        base = mean[p]
        for name in [p, *[n for n in mean.index if n.startswith(f"{p} + ")]]:
            block = name.split(" + ", 1)[1] if " + " in name else "none"
            even = (f"{price[block] - (mean[name] - base):.2f}" if block in price else "")
            lines.append(f"| {p} | {block} | {mean[name]:.2f} | {mean[name] / base - 1:+.1%}"
                         f" | {even} | {int(late[name])} |")
    lines.append(f"| optimum (no block) | - | {mean['optimum']:.2f} | | | |")
    lines.append(f"| on-demand | - | {mean['on-demand']:.2f} | | | |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()

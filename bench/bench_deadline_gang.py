"""Deadline benchmark for gangs: every deadline policy on the 16-node AWS V100 traces.

The traces (bench/data/spot-traces/16-node/aws-08-27-2023, see its README) count, every
5 minutes from 2023-08-27, how many of 16 requested p3.2xlarge spot instances ran in
us-east-2b, us-west-2a and us-west-2c. A gang of N runs in a zone only in ticks where at
least N did (`AvailabilityTrace.from_counts`), so the same recording judges gangs of 16,
8 and 4, and single instances (N = 1) as the reference. All three zones over their
common 11.3 days.

Per gang size and setting (a 24-hour job due in 30 or 48 hours, a node booting in 3 or
12 minutes), each policy replays the job from `--starts` start times spread over the
trace, once from each zone as its home, against on-demand and the hindsight optimum of
the same gang (`backtest.deadline.optimum`, which knows the whole trace). A gang is billed
N x the price per instance (p3.2xlarge reference prices: on-demand $3.06/h, spot 30% of
it), restarts with the boot and then the rendezvous of its nodes (`--rendezvous-minutes`,
default 2; none for one node), checkpoints every 30 minutes and moves its checkpoint
(`--checkpoint-gb`, default 50 GB) once per move between regions (us-east-2 <-> us-west-2
at the clouds' egress rate). A gang that loses a node is released whole; the last table
prices what holding its survivors instead would have cost on these traces.

Nothing is tuned here: every policy constant was chosen on bench_deadline.py's tuning
split (the first 60% of the February 2023 single-instance recording), months before this
one; every figure below is out of sample.

Prints one table per setting (policies by rows, gang sizes by columns: cost over
on-demand, over the optimum, deadlines missed), then the holding table and the time.

    .venv/bin/python bench/bench_deadline_gang.py [--starts 20] [--nodes 1,4,8,16]
        [--rendezvous-minutes 2] [--checkpoint-gb 50] [--policies ...]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from itertools import product
from pathlib import Path

import numpy as np
import pandas as pd

from costsched.backtest.deadline import (
    AvailabilityTrace,
    DeadlineJob,
    default_step,
    optimum,
    simulate,
    summarize,
)
from costsched.backtest.deadline.report import BASELINE, OPTIMUM
from costsched.policies.deadline import DEADLINE_POLICIES, deadline_policy
from costsched.policies.deadline.gang import gang_restart

DATA = Path(__file__).resolve().parent / "data" / "spot-traces" / "16-node" / "aws-08-27-2023"
ZONES = ["us-east-2b", "us-west-2a", "us-west-2c"]
JOB_HOURS = 24.0
DEADLINES = (30.0, 48.0)
BOOT_MINUTES = (3.0, 12.0)
CHECKPOINT_MINUTES = 30.0
HOUR = 3600.0


def read_counts(folder: Path = DATA) -> tuple[np.ndarray, int]:
    """(zones, ticks) instance counts of ZONES over their common ticks, and the tick."""
    rows, gaps = [], set()
    for zone in ZONES:
        doc = json.loads((folder / f"{zone}_v100_1.json").read_text())
        gaps.add(int(doc["metadata"]["gap_seconds"]))
        rows.append(np.asarray(doc["data"], dtype=np.int64))
    if len(gaps) != 1:
        raise SystemExit(f"{folder}: traces of different ticks {sorted(gaps)}")
    n = min(len(r) for r in rows)
    return np.vstack([r[:n] for r in rows]), gaps.pop()


def gang_runs(counts: np.ndarray, tick: int, nodes: int, policies: list[str], starts: int,
              rendezvous_s: float, checkpoint_gb: float) -> pd.DataFrame:
    """Every policy and the optimum, every setting, for one gang size: the runs."""
    trace = AvailabilityTrace.from_counts(counts, ZONES, tick, nodes, start="2023-08-27")
    span = math.ceil(max(DEADLINES) * HOUR / tick)
    allowed = trace.start_ticks(span)
    first = np.unique(allowed[np.linspace(0, len(allowed) - 1, starts).round().astype(int)])
    zone_n = len(ZONES)
    run_starts, homes = np.repeat(first, zone_n), np.tile(np.arange(zone_n), len(first))
    settings = list(product(DEADLINES, BOOT_MINUTES))
    restart_of = {boot: gang_restart(boot * 60, nodes, rendezvous_s) / 60
                  for boot in BOOT_MINUTES}
    n = len(run_starts)
    job = DeadlineJob(JOB_HOURS, max(DEADLINES), max(restart_of.values()), CHECKPOINT_MINUTES,
                      checkpoint_gb, nodes=nodes)
    frames = []
    for name in policies:
        runs = simulate(trace, deadline_policy(name), job,
                        np.tile(run_starts, len(settings)), np.tile(homes, len(settings)),
                        np.repeat([d for d, _ in settings], n),
                        np.repeat([restart_of[b] for _, b in settings], n))
        runs["deadline_hours"] = np.repeat([d for d, _ in settings], n)
        runs["restart_minutes"] = np.repeat([b for _, b in settings], n)
        frames.append(runs.assign(policy=name))
    for deadline, boot in settings:
        best_job = DeadlineJob(JOB_HOURS, deadline, restart_of[boot], CHECKPOINT_MINUTES,
                               checkpoint_gb, nodes=nodes)
        step = default_step(tick, best_job)
        best = np.repeat(optimum(trace, best_job, first, step=step), zone_n)
        frames.append(pd.DataFrame({
            "start_tick": run_starts, "home": homes, "cost_usd": best, "met": True,
            "deadline_hours": deadline, "restart_minutes": boot, "policy": OPTIMUM}))
    return pd.concat(frames, ignore_index=True)


def side_by_side(summaries: dict[int, pd.DataFrame]) -> str:
    """Per setting: policies by rows, gang sizes by columns."""
    sizes = list(summaries)
    out = []
    first = next(iter(summaries.values()))
    settings = first[["deadline_hours", "restart_minutes"]].drop_duplicates()
    policies = list(dict.fromkeys(first["policy"]))
    for d, r in settings.itertuples(index=False):
        out.append(f"\n{JOB_HOURS:g}-hour job due in {d:g} h, nodes boot in {r:g} min "
                   "(cost over on-demand / over the optimum / deadlines missed):")
        out.append("| policy | " + " | ".join(f"N = {n}" for n in sizes) + " |")
        out.append("|---|" + "---|" * len(sizes))
        for p in policies:
            cells = []
            for n in sizes:
                s = summaries[n]
                row = s[(s["deadline_hours"] == d) & (s["restart_minutes"] == r)
                        & (s["policy"] == p)].iloc[0]
                miss = f", {row['misses']} missed" if row["misses"] else ""
                cells.append(f"{row['vs_on_demand']:.0%} / {row['vs_optimum'] - 1:+.1%}"
                             f"{miss}")
            out.append(f"| {p} | " + " | ".join(cells) + " |")
    means = ["\nmean over the settings, cost over the optimum:",
             "| policy | " + " | ".join(f"N = {n}" for n in sizes) + " |",
             "|---|" + "---|" * len(sizes)]
    for p in policies:
        if p == OPTIMUM:
            continue
        means.append(f"| {p} | " + " | ".join(
            f"{summaries[n][summaries[n]['policy'] == p]['vs_optimum'].mean() - 1:+.1%}"
            for n in sizes) + " |")
    return "\n".join(out + means)


def holding(counts: np.ndarray, tick: int, sizes: list[int], spot_usd: float) -> str:
    """What holding a gang's survivors through each shortfall would have cost: per gang
    size, the losses (ticks where a zone goes from >= N instances to fewer), the mean
    shortfall until N run again, and the survivors' instance-hours billed meanwhile."""
    lines = ["\nholding a gang's survivors instead of releasing it (all zones; the restart "
             "after the shortfall is the same either way):",
             "| N | losses | shortfall, median / mean | survivors held per loss | "
             "USD per loss at spot |",
             "|---|---|---|---|---|"]
    for n in sizes:
        if n == 1:
            continue
        gaps, held = [], []
        for row in counts:
            up = row >= n
            t = 1
            while t < len(row):
                if up[t - 1] and not up[t]:
                    end = t
                    while end < len(row) and not up[end]:
                        end += 1
                    if end < len(row):  # a shortfall seen to end
                        gaps.append((end - t) * tick / 60)
                        # Of the gang's N, at most min(running, N - 1) survive.
                        held.append(np.minimum(row[t:end], n - 1).sum() * tick / HOUR)
                    t = end
                t += 1
        gaps_a, held_a = np.array(gaps), np.array(held)
        lines.append(f"| {n} | {len(gaps_a)} | {np.median(gaps_a):.0f} / {gaps_a.mean():.0f} "
                     f"min | {held_a.mean():.1f} instance-h | "
                     f"${held_a.mean() * spot_usd:.2f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=20, help="start times (default 20)")
    parser.add_argument("--nodes", default="1,4,8,16", help="gang sizes (default 1,4,8,16)")
    parser.add_argument("--rendezvous-minutes", type=float, default=2.0,
                        help="minutes a gang's nodes take to meet after booting (default 2)")
    parser.add_argument("--checkpoint-gb", type=float, default=50.0,
                        help="GB a move copies between regions, once per gang (default 50)")
    parser.add_argument("--policies", help="comma-separated policies (default: all)")
    args = parser.parse_args()
    sizes = [int(n) for n in args.nodes.split(",")]
    policies = args.policies.split(",") if args.policies else list(DEADLINE_POLICIES)
    if BASELINE not in policies:
        policies.insert(0, BASELINE)
    wall, cpu = time.perf_counter(), time.process_time()
    counts, tick = read_counts()
    print(f"16-node AWS V100 traces from 2023-08-27: {', '.join(ZONES)}, "
          f"{counts.shape[1] * tick / 86400:.1f} days of {tick // 60}-minute ticks")
    for n in sizes:
        shares = ", ".join(f"{z} {(row >= n).mean():.0%}" for z, row in zip(ZONES, counts,
                                                                             strict=True))
        print(f"  spot for a gang of {n}: {shares}")
    print(f"{args.starts} start times x {len(ZONES)} home zones per setting; "
          f"rendezvous {args.rendezvous_minutes:g} min; checkpoint {args.checkpoint_gb:g} GB "
          f"every {CHECKPOINT_MINUTES:g} min; nothing tuned on these traces")
    summaries = {}
    for n in sizes:
        runs = gang_runs(counts, tick, n, policies, args.starts, args.rendezvous_minutes * 60,
                         args.checkpoint_gb)
        summaries[n] = summarize(runs)
    print(side_by_side(summaries))
    spot = float(AvailabilityTrace.from_counts(counts[:, :1], ZONES, tick, 1)
                 .spot_price.mean())
    print(holding(counts, tick, sizes, spot))
    print(f"\n{time.perf_counter() - wall:.1f} s wall, {time.process_time() - cpu:.1f} s CPU")


if __name__ == "__main__":
    main()

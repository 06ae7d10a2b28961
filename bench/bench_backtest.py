"""Backtest benchmark: the backtest table (docs/backtests.md) on the recorded traces,
and a generated year.

1. The backtest table (docs/backtests.md): 6 models x 2 home regions x 30 daily starts x
   8 policies (the baselines static and cheapest-hourly among them) = 2,880 runs over the recorded
   AWS/Azure traces (../shared/data/dispa2020), imported into a fresh SQLite store first.
   Target: under 10 s for the backtest itself. Each policy's time alone, side by side.
2. A 10,000-job sweep (examples/sweep.yaml's shape, 100 x 100 values) through
   `costsched backtest --jobs` end to end in a subprocess: wall and CPU time and peak
   memory against the targets (10 s, 500 MB), and the ratio to ranking 10,000 jobs x
   2,000 offerings (bench_optimize's inputs) measured in the same run.
3. A generated year of hourly spot prices for 500 offerings (4.4 M observations) and
   1,000 jobs of 1-7 V100-days with random starts, every policy.
4. The same year stored (SQLite), and `costsched backtest` of a few runs over it in a
   subprocess (time, peak memory; targets 5 s and 1 GB), beside reading the whole stored
   history into a trace, which is what a backtest did before it read only its window.

Prints times, runs/s and the ratio to the target; asserts nothing.

    .venv/bin/python bench/bench_backtest.py [--offerings 500] [--jobs 1000] [--skip-year]
        [--skip-sweep] [--skip-stored-year]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from costsched.backtest import (
    PUBLISHED_MODELS,
    BacktestJob,
    PriceTrace,
    jobs_for_models,
    regular_starts,
    run_backtest,
    summarize,
)
from costsched.backtest import REPLAY_POLICIES as POLICIES
from costsched.model import Job
from costsched.store import PriceStore
from costsched.throughput import ThroughputTable

TARGET_TABLE_S = 10.0
TARGET_SWEEP_S = 10.0
TARGET_SWEEP_MB = 500.0
SWEEP_JOBS = 10_000
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.shared_data
from tests.shared_data import shared_data  # noqa: E402

DISPA = shared_data() / "dispa2020"
# GPU model -> (typical spot USD per GPU-hour, AWS/Azure/GCP instance-type stem)
GPUS = {"K80": 0.25, "P100": 0.45, "V100": 0.95, "T4": 0.20, "A100": 1.30}


def bench_table(db: Path) -> None:
    from price_collectors import recorded

    store = PriceStore(str(db))
    t = time.perf_counter()
    parsed = recorded.read_paths([DISPA / "aws" / "cost", DISPA / "azure"])
    store.ingest(parsed.observations())
    t_import = time.perf_counter() - t
    t = time.perf_counter()
    trace = PriceTrace.from_store(store, os=["linux", "linux-vpc"])
    t_trace = time.perf_counter() - t
    table = ThroughputTable()
    jobs = jobs_for_models(PUBLISHED_MODELS, 4, ["us-east-1", "us-west-2"], table)
    starts = regular_starts(pd.Timestamp("2020-02-10", tz="UTC").to_pydatetime(), 30)
    t, cpu = time.perf_counter(), time.process_time()
    results = run_backtest(trace, jobs, starts, list(POLICIES), table=table)
    t_run, cpu = time.perf_counter() - t, time.process_time() - cpu
    store.dispose()
    per_policy = _per_policy_seconds(trace, jobs, starts, table)
    print(f"backtest table: {len(results):,} runs ({len(jobs)} jobs x {len(starts)} starts x "
          f"{len(POLICIES)} policies), trace {trace.prices.shape[0]:,} times x "
          f"{trace.prices.shape[1]} offerings")
    print(f"  import recorded logs  {t_import:7.2f} s (once, not part of the backtest)")
    print(f"  load trace from store {t_trace:7.2f} s")
    print(f"  backtest              {t_run:7.2f} s  {len(results) / t_run:8,.0f} runs/s  "
          f"target {TARGET_TABLE_S:.0f} s: {t_run / TARGET_TABLE_S:.2f}x of target; "
          f"CPU {cpu:.2f} s (wall on a shared machine also measures the neighbours)")
    static = per_policy["static"]
    print("  per policy alone (s, and x static's time): " + ", ".join(
        f"{k} {v:.2f} ({v / static:.1f}x)" for k, v in per_policy.items()))
    summary = summarize(results)
    oracle = summary[summary["policy"] == "oracle"]
    print(f"  largest oracle reduction: {oracle['reduction'].max():.2f}x vs static, "
          f"{oracle['reduction_vs_cheapest_hourly'].max():.2f}x vs cheapest-hourly")


def sweep_spec(path: Path) -> Path:
    """examples/sweep.yaml with its two sweep lists grown to 100 values each."""
    text = (ROOT / "examples" / "sweep.yaml").read_text()
    side = int(SWEEP_JOBS ** 0.5)
    lrs = ", ".join(f"{0.001 * (i + 1) / side:.6f}" for i in range(side))
    seeds = ", ".join(str(i) for i in range(1, side + 1))
    text = text.replace("LR: [0.001, 0.0003, 0.0001]", f"LR: [{lrs}]")
    text = text.replace("SEED: [1, 2]", f"SEED: [{seeds}]")
    path.write_text(text)
    return path


def bench_sweep(db: Path, tmp: Path) -> None:
    from bench_optimize import ranking_inputs

    from costsched.optimize import rank

    spec = sweep_spec(tmp / "sweep.yaml")
    cli = Path(sys.executable).parent / "costsched"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    done = subprocess.run([str(cli), "backtest", "--db", str(db), "--jobs", str(spec),
                           "--first-start", "2020-02-18", "--json"], capture_output=True,
                          text=True, check=False)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    peak_mb = after.ru_maxrss / 1024
    data = ranking_inputs(SWEEP_JOBS, 2000)
    t = time.perf_counter()
    rank.best("cost", **data, threads=1)
    t_rank = time.perf_counter() - t
    print(f"{SWEEP_JOBS:,}-job sweep backtest, end to end (`costsched backtest --jobs`, "
          f"30 starts, every policy), exit {done.returncode}")
    if done.returncode:
        print("  " + done.stderr.strip().splitlines()[-1])
        return
    runs = json.loads(done.stdout)["runs"]
    print(f"  {len(runs):,} replays standing for {sum(r['jobs'] for r in runs):,} runs")
    print(f"  wall {wall:7.2f} s ({wall / TARGET_SWEEP_S:.2f}x of target), CPU {cpu:.2f} s, "
          f"peak {peak_mb:,.0f} MB ({peak_mb / TARGET_SWEEP_MB:.2f}x of target)")
    print(f"  ranking {SWEEP_JOBS:,} jobs x 2,000 offerings: {t_rank:.2f} s; the sweep "
          f"backtest takes {wall / t_rank:.1f}x as long")


def _per_policy_seconds(trace, jobs, starts, table) -> dict[str, float]:
    out = {}
    for name in POLICIES:
        t = time.perf_counter()
        run_backtest(trace, jobs, starts, [name], table=table)
        out[name] = time.perf_counter() - t
    return out


def generate_year(offerings: int, seed: int = 0) -> pd.DataFrame:
    """Hourly prices for a year: a per-offering multiplicative random walk around a base."""
    rng = np.random.default_rng(seed)
    clouds = np.array(["aws", "azure", "gcp"])
    gpu_names = np.array(list(GPUS))
    counts = np.array([1, 2, 4, 8])
    cloud = clouds[np.arange(offerings) % 3]
    region = np.array([f"{c}-region-{i % 5}" for i, c in enumerate(cloud)])
    gpu = gpu_names[rng.integers(0, len(gpu_names), offerings)]
    gpu[:30] = "V100"  # every home region has 1xV100 offerings for the static baseline
    count = counts[rng.integers(0, len(counts), offerings)]
    count[:30] = 1
    base = np.array([GPUS[g] for g in gpu]) * count * rng.uniform(0.7, 1.3, offerings)
    hours = 365 * 24
    walk = np.exp(np.cumsum(rng.normal(0, 0.02, (hours, offerings)), axis=0))
    prices = np.round(base * np.clip(walk, 0.3, 3.0), 4)
    times = pd.date_range("2025-01-01", periods=hours, freq="h", tz="UTC")
    n = hours * offerings
    idx = np.tile(np.arange(offerings), hours)
    zone = np.array([f"{r}-z{i % 7}" for i, r in enumerate(region)], dtype=object)
    itype = np.array([f"{g}x{c}" for g, c in zip(gpu, count, strict=True)], dtype=object)
    return pd.DataFrame({
        "cloud": cloud.astype(object)[idx], "region": region.astype(object)[idx],
        "zone": zone[idx], "instance_type": itype[idx], "market": "spot", "os": "linux",
        "gpu_model": gpu.astype(object)[idx], "gpu_count": count[idx], "vcpus": 8,
        "memory_gb": 61.0, "usd_per_hour": prices.reshape(n),
        "effective_at": np.repeat(times, offerings), "source": "generated",
    })


def bench_year(n_offerings: int, n_jobs: int) -> None:
    t = time.perf_counter()
    frame = generate_year(n_offerings)
    t_gen = time.perf_counter() - t
    t = time.perf_counter()
    trace = PriceTrace.from_history(frame)
    t_trace = time.perf_counter() - t
    rng = np.random.default_rng(1)
    table = ThroughputTable()
    home = sorted(set(trace.offerings.loc[trace.offerings["gpu_model"] == "V100", "region"]))
    jobs = []
    for i in range(n_jobs):
        model = PUBLISHED_MODELS[i % len(PUBLISHED_MODELS)]
        days = float(rng.uniform(1, 7))
        steps = days * 86_400 * table.get(model, "V100", 1).steps_per_second
        start = (pd.Timestamp("2025-01-01", tz="UTC")
                 + pd.Timedelta(hours=int(rng.integers(0, 300 * 24)))).to_pydatetime()
        jobs.append(BacktestJob(Job(f"job-{i}", "", model, steps), str(rng.choice(home)), days,
                                starts=(start,)))
    t = time.perf_counter()
    results = run_backtest(trace, jobs, None, list(POLICIES), table=table)
    t_run = time.perf_counter() - t
    errors = int(results["error"].notna().sum())
    print(f"generated year: {len(frame):,} observations ({n_offerings} offerings, hourly), "
          f"{n_jobs:,} jobs x {len(POLICIES)} policies = {len(results):,} runs")
    print(f"  generate              {t_gen:7.2f} s")
    print(f"  build trace           {t_trace:7.2f} s  {len(frame) / t_trace:12,.0f} obs/s")
    print(f"  backtest              {t_run:7.2f} s  {len(results) / t_run:8,.0f} runs/s"
          f"  ({errors} runs without a usable offering)")


WHOLE_HISTORY = """
import sys
from costsched.backtest import PriceTrace
from costsched.service.backtest import REPLAY_OS
from costsched.store import PriceStore
PriceTrace.from_store(PriceStore(sys.argv[1]), os=list(REPLAY_OS))
"""


MEASURE = """
import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print(used.ru_utime + used.ru_stime, used.ru_maxrss / 1024)
"""


def _timed(command: list[str]) -> tuple[float, float, float]:
    """Wall and CPU seconds and peak resident MB of `command`, measured by a small parent
    of its own (a process's peak counts every child it ever waited for)."""
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", MEASURE, *command], check=True,
                         capture_output=True, text=True).stdout.split()
    return time.perf_counter() - t, float(out[-2]), float(out[-1])


STORE_YEAR = """
import sys
sys.path[:0] = [sys.argv[2], sys.argv[3]]
from bench_backtest import generate_year
from costsched.store import PriceStore
frame = generate_year(int(sys.argv[4]))
PriceStore(sys.argv[1]).ingest(frame)
print(frame.loc[frame["gpu_model"] == "V100", "region"].iloc[0])
"""


def bench_stored_year(n_offerings: int, tmp: Path) -> None:
    url = f"sqlite:///{tmp / 'year.sqlite'}"
    t = time.perf_counter()
    home = subprocess.run([sys.executable, "-c", STORE_YEAR, url, str(ROOT / "bench"),
                           str(ROOT), str(n_offerings)], check=True, capture_output=True,
                          text=True).stdout.strip()
    print(f"stored year: {n_offerings} offerings hourly in {time.perf_counter() - t:.1f} s")
    backtest = [str(Path(sys.executable).parent / "costsched"), "backtest", "--db", url,
                "--region", home, "--days", "2", "--starts", "3", "--json"]
    new = _timed(backtest)
    old = _timed([sys.executable, "-c", WHOLE_HISTORY, url])
    print("  backtest, 3 starts x 6 models x 8 policies   "
          f"{new[0]:7.2f} s wall {new[1]:7.2f} s CPU {new[2]:7.0f} MB  (targets 5 s, 1024 MB)")
    print("  whole history read into a trace (before)      "
          f"{old[0]:7.2f} s wall {old[1]:7.2f} s CPU {old[2]:7.0f} MB  "
          f"(x{old[1] / new[1]:.1f} the CPU of the whole backtest now)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--offerings", type=int, default=500)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--skip-year", action="store_true")
    parser.add_argument("--skip-sweep", action="store_true")
    parser.add_argument("--skip-table", action="store_true")
    parser.add_argument("--skip-stored-year", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "prices.sqlite"
        if not args.skip_table:
            bench_table(db)
        if not args.skip_sweep:
            bench_sweep(db, Path(tmp))
        if not args.skip_stored_year:
            bench_stored_year(args.offerings, Path(tmp))
    if not args.skip_year:
        bench_year(args.offerings, args.jobs)


if __name__ == "__main__":
    main()

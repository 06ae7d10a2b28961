"""Plan benchmark: a 10,000-job sweep (examples/sweep.yaml's shape) planned end to end on
the recorded prices, next to the ranking benchmark measured in the same run.

Builds a SQLite store of the recorded AWS/Azure logs (../shared/data/dispa2020) once, writes
the sweep, and times `plan` in-process (service call) and as the CLI in a subprocess (text
and --json), with peak memory (tracemalloc in-process, VmHWM of the subprocess). Target:
under 10 s and 500 MB end to end. Then `plan --json` of sweeps of --json-sizes jobs: time,
peak memory (VmHWM) and bytes printed, with --against DIR the same of another checkout
(e.g. `git worktree add /tmp/old HEAD~10`) side by side in the same run. Prints figures
and ratios; asserts nothing.

    .venv/bin/python bench/bench_plan_sweep.py [--lrs 100] [--seeds 100] [--kinds 1]
        [--json-sizes 10000,100000] [--against /tmp/old]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import yaml

from costsched.service import plan
from costsched.store import PriceStore

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_optimize import bench_ranking  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.shared_data
from tests.shared_data import shared_data  # noqa: E402

DISPA = shared_data() / "dispa2020"
AT = "2020-03-01T00:00Z"
TARGET_S, TARGET_MB = 10.0, 500.0
MODELS = ["Transformer (batch size 64)", "ResNet-50 (batch size 64)", "A3C",
          "Recommendation (batch size 2048)"]


def build_store(path: Path) -> str:
    from price_collectors import recorded

    store = PriceStore(str(path))
    store.ingest(recorded.read_paths([DISPA / "aws" / "cost", DISPA / "azure"]).observations())
    store.dispose()
    return str(path)


def write_sweep(path: Path, lrs: int, seeds: int, kinds: int) -> int:
    """examples/sweep.yaml with `lrs` x `seeds` combinations, as `kinds` documents of
    different models (each a sweep of its own): lrs x seeds jobs in all."""
    base = yaml.safe_load((ROOT / "examples" / "sweep.yaml").read_text())
    docs = []
    for k in range(kinds):
        share = range(k * seeds // kinds, (k + 1) * seeds // kinds)
        docs.append({**base, "name": f"sweep{k}", "model": MODELS[k % len(MODELS)],
                     "sweep": {"LR": [round(1e-4 * (i + 1), 6) for i in range(lrs)],
                               "SEED": list(share)}})
    path.write_text(yaml.safe_dump_all(docs))
    return lrs * seeds


def in_process(db: str, sweep: Path) -> tuple[float, float, int]:
    tracemalloc.start()
    started = time.perf_counter()
    result = plan(db, sweep, at=AT)
    seconds = time.perf_counter() - started
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return seconds, peak, len(result.jobs)


# The child's own peak memory (VmHWM: its address space's high-water mark). ru_maxrss would
# not do: on Linux a child's starts from this process's RSS at fork (the store built here).
PEAK = ("import atexit, sys; atexit.register(lambda: sys.stderr.write(next(line for line in "
        "open('/proc/self/status') if line.startswith('VmHWM')))); ")


def cli(db: str, sweep: Path, *extra: str, checkout: Path | None = None
        ) -> tuple[float, float, int, int]:
    """(wall s, peak MB, bytes printed, exit code) of `costsched plan` in a subprocess (of
    this checkout, or of `checkout`). Its output is counted as it comes, not kept."""
    code = PEAK + ("sys.path.insert(0, sys.argv.pop(1)); " if checkout else "") + \
        "from costsched.cli import main; main()"
    argv = [sys.executable, "-c", code, *([str(checkout)] if checkout else []),
            "plan", str(sweep), "--db", db, "--at", AT, *extra]
    # A sweep may be as large as the benchmark asks.
    env = {**os.environ, "COSTSCHED_LAUNCH_MAX_SWEEP_JOBS": "1000000"}
    started = time.perf_counter()
    with subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=env) as proc:
        size = sum(len(chunk) for chunk in iter(lambda: proc.stdout.read(1 << 20), b""))
        err = proc.stderr.read().decode(errors="replace")
    seconds = time.perf_counter() - started
    peak = next((int(line.split()[1]) for line in err.splitlines()
                 if line.startswith("VmHWM")), 0)
    if proc.returncode:
        print(f"    exit {proc.returncode}: {err.strip().splitlines()[0] if err.strip() else ''}")
    return seconds, peak / 1024, size, proc.returncode


def json_sizes(db: str, tmp: Path, sizes: list[int], against: Path | None) -> None:
    """`plan --json` of sweeps of `sizes` jobs: time, peak memory and bytes, side by side."""
    print("plan --json of a sweep (one kind of job: one shared ranking)")
    print(f"  {'jobs':>8} {'checkout':9} {'wall s':>8} {'peak MB':>10} {'printed MB':>11}")
    for n in sizes:
        sweep = tmp / f"sweep-{n}.yaml"
        write_sweep(sweep, 100, max(n // 100, 1), 1)
        shown = {}
        for label, checkout in [("this", None)] + ([("against", against)] if against else []):
            s, rss, size, code = cli(db, sweep, "--json", checkout=checkout)
            shown[label] = (rss, size)
            print(f"  {n:8,} {label:9} {s:8.2f} {rss:10.1f} {size / 2**20:11.1f}"
                  + (f"  exit {code}" if code else ""))
        if against and shown["this"][1] and shown["against"][1]:
            (rss, size), (old_rss, old_size) = shown["this"], shown["against"]
            print(f"  {n:8,} this/against: memory {rss / old_rss:.2f}x, "
                  f"bytes {size / old_size:.3f}x")


def backtest_sweep(db: str, sweep: Path) -> str:
    from costsched.service import backtest

    try:
        started = time.perf_counter()
        backtest(db, job_files=[sweep], starts=1)
    except TypeError as exc:
        return f"not measured ({exc})"
    except Exception as exc:  # noqa: BLE001 - a benchmark reports, it does not stop
        return f"not measured ({type(exc).__name__}: {exc})"
    return f"{time.perf_counter() - started:.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lrs", type=int, default=100)
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--kinds", type=int, default=1)
    parser.add_argument("--json-sizes", default="10000,100000",
                        help="Sweep sizes (jobs) of the --json comparison; '' skips it.")
    parser.add_argument("--against", type=Path, help="Another checkout to time beside this.")
    parser.add_argument("--only-json", action="store_true", help="Only the --json sizes.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = build_store(Path(tmp) / "prices.sqlite")
        sizes = [int(n) for n in args.json_sizes.split(",") if n]
        if args.only_json:
            json_sizes(db, Path(tmp), sizes, args.against)
            return
        sweep = Path(tmp) / "big.yaml"
        n = write_sweep(sweep, args.lrs, args.seeds, args.kinds)
        print(f"plan of a {n:,}-job sweep ({args.kinds} kind(s) of job), prices as of {AT}; "
              f"target < {TARGET_S:.0f} s and < {TARGET_MB:.0f} MB")
        seconds, peak, planned = in_process(db, sweep)
        print(f"  service.plan in-process   {seconds:7.2f} s  peak {peak:7.1f} MB (tracemalloc)"
              f"  {planned:,} jobs; {seconds / TARGET_S:.2f}x of target")
        for label, extra in (("CLI text", ()), ("CLI --json", ("--json",))):
            s, rss, size, code = cli(db, sweep, *extra)
            print(f"  {label:25} {s:7.2f} s  peak {rss:7.1f} MB  {size / 2**20:6.1f} MB "
                  f"printed, exit {code}; {s / TARGET_S:.2f}x of the time, "
                  f"{rss / TARGET_MB:.2f}x of the memory target")
        rank_s = bench_ranking(10_000, 2_000, 1)
        print(f"  plan in-process / ranking 10k x 2k: {seconds / rank_s:.1f}x")
        print(f"  backtest of the sweep: {backtest_sweep(db, sweep)}")
        json_sizes(db, Path(tmp), sizes, args.against)


if __name__ == "__main__":
    main()

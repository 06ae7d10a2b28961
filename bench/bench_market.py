"""The market at full size: `costsched gpus` CPU time, and planning one task in process over
every bundled offering.

1. `costsched gpus` on an empty store (the bundled list prices and spot snapshot), in a
   fresh subprocess, --runs times: median CPU time (user + system) beside `python -c
   "import pandas"` measured in the same run (the floor any pandas command pays), and the
   difference to the 0.5 s target.
2. In process, warm: `service.gpus.gpu_summary` over the bundled prices, and
   `service.plan` of one task (ResNet-50, any cloud, any market) over every bundled
   offering: median seconds of --runs calls, with the number of offerings ranked.

SkyPilot's optimizer on the same prices, side by side: bench/bench_plan_vs_skypilot.py
(SkyPilot run from a venv of its own). Asserts nothing.

    .venv/bin/python bench/bench_market.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

TARGET_SECONDS = 0.5
ROOT = Path(__file__).resolve().parents[1]
TASK = {"name": "bench", "model": "ResNet-50 (batch size 64)", "steps": 100_000}


def child_cpu(argv: list[str], env: dict[str, str]) -> float:
    """CPU seconds (user + system) of one subprocess run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def median_seconds(call, runs: int) -> float:
    call()  # warm: imports and the catalog's caches
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "COSTSCHED_DB": str(Path(tmp) / "prices.db"),
               "COSTSCHED_DISCOVERED_TYPES": str(Path(tmp) / "none.csv")}
        cli = [sys.executable, "-m", "costsched.cli", "gpus"]
        floor = [sys.executable, "-c", "import pandas"]
        gpus = statistics.median(child_cpu(cli, env) for _ in range(args.runs))
        pandas = statistics.median(child_cpu(floor, env) for _ in range(args.runs))
    print(f"costsched gpus: {gpus:.2f} s CPU (median of {args.runs}); import pandas alone "
          f"{pandas:.2f} s; target {TARGET_SECONDS} s: "
          f"{'met' if gpus <= TARGET_SECONDS else f'over by {gpus - TARGET_SECONDS:.2f} s'}")

    from costsched import service
    from costsched.jobspec import parse
    from costsched.service.gpus import gpu_summary

    at = datetime.now(timezone.utc)
    summary = median_seconds(lambda: gpu_summary(None, at), args.runs)
    spec = parse(TASK)
    result = service.plan(None, spec, at=at)
    offerings = len(result.ranking(TASK["name"]))
    plan = median_seconds(lambda: service.plan(None, spec, at=at), args.runs)
    print(f"in process, warm: gpu_summary {summary * 1000:.0f} ms; plan of one task over "
          f"{offerings} offerings {plan * 1000:.0f} ms")


if __name__ == "__main__":
    main()

"""Start-up benchmark: how long each light command takes to start and end, next to
`python -c pass` in the same run (the interpreter's own start).

Commands: `costsched --help`, `--version`, `status` on an empty store, `logs` of a job that
does not exist (one line, exit 2). Each is run --runs times in a fresh
subprocess; the median wall time is printed, with its ratio to `python -c pass` and the
difference to the 0.5 s target. Asserts nothing.

    .venv/bin/python bench/bench_startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_SECONDS = 0.5


def median_seconds(argv: list[str], runs: int, env: dict[str, str]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    cli = [sys.executable, "-m", "costsched.cli"]
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "store.sqlite")
        env = {**os.environ, "COSTSCHED_DB": db, "COSTSCHED_INSTANCES": str(Path(tmp) / "i")}
        # The empty store exists before timing: `status` reads a store, it never creates one.
        from costsched.store import PriceStore

        PriceStore(db).dispose()
        cases = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "costsched --help": [*cli, "--help"],
            "costsched --version": [*cli, "--version"],
            "costsched status (no jobs)": [*cli, "status"],
            "costsched logs (no such job)": [*cli, "logs", "nosuchjob"],
        }
        baseline = None
        print(f"{'command':32} {'median s':>9} {'x python':>9} {'vs 0.5 s':>9}  ({args.runs} runs)")
        for name, argv in cases.items():
            seconds = median_seconds(argv, args.runs, env)
            baseline = baseline or seconds
            print(f"{name:32} {seconds:9.3f} {seconds / baseline:9.1f} "
                  f"{seconds - TARGET_SECONDS:+9.3f}")


if __name__ == "__main__":
    main()

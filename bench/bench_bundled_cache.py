"""What the parsed bundled catalog kept in the user cache saves a command: each command
run in fresh processes, in turns, with the cache as the previous run left it (warm) and
with it emptied first (cold: the command parses the bundled files and writes the cache).
CPU seconds (user + system) and wall seconds, medians. Asserts nothing.

Commands: `gpus` with no store (the bundled prices as rows), and `plan` of
examples/resnet50-anywhere.yaml on a store of the demo's prices (the catalog as frames).

    .venv/bin/python bench/bench_bundled_cache.py [--runs 11]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
CLI = [sys.executable, "-m", "costsched.cli"]


def run_once(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([*CLI, *argv], env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        cache = tmp_path / "cache"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "XDG_CACHE_HOME": str(cache),
               "COSTSCHED_DISCOVERED_TYPES": str(tmp_path / "no-discovered.csv"),
               "COSTSCHED_DAEMON_AUTOSTART": "false"}
        demo = {**env, "COSTSCHED_DB": str(tmp_path / "demo.sqlite")}
        subprocess.run([*CLI, "prices", "import", str(EXAMPLES / "demo" / "prices-before.csv")],
                       env=demo, cwd=tmp_path, check=True, capture_output=True)
        commands = {"gpus (no store)": (["gpus"], {**env, "COSTSCHED_DB":
                                                   str(tmp_path / "none.sqlite")}),
                    "plan resnet50-anywhere": (["plan", str(EXAMPLES / "resnet50-anywhere.yaml")],
                                               demo)}
        print(f"{args.runs} runs each, medians; load average {os.getloadavg()[0]:.1f}")
        print(f"{'command':24} {'cpu warm':>9} {'cold':>7} {'ratio':>6} {'wall warm':>10} "
              f"{'cold':>7}")
        for name, (argv, command_env) in commands.items():
            run_once(argv, command_env, tmp_path)  # the cache made
            warm, cold = [], []
            for _ in range(args.runs):
                warm.append(run_once(argv, command_env, tmp_path))
                shutil.rmtree(cache, ignore_errors=True)
                cold.append(run_once(argv, command_env, tmp_path))
            (w_wall, w_cpu), (c_wall, c_cpu) = (
                (statistics.median(w for w, _ in t), statistics.median(c for _, c in t))
                for t in (warm, cold))
            print(f"{name:24} {w_cpu:9.3f} {c_cpu:7.3f} {w_cpu / c_cpu:6.2f} {w_wall:10.3f} "
                  f"{c_wall:7.3f}", flush=True)


if __name__ == "__main__":
    main()

"""Packing benchmark: the time `launchers.codepack.pack` takes on a workdir of 2,000 small
files and one 100 MB file, as a launch packs it; with --against DIR, the same workdir
packed by another checkout (e.g. main: `git worktree add /tmp/base main`), timed in the
same run, side by side, with the ratio of the two.

The workdir (made once, in a temporary folder): 2,000 source-like files of about 2 KB in
40 folders, one 100 MB file (a model's weights: random bytes, each 4 KB block repeated
once, so that gzip has something to do, as with real weights), and a SkyPilot task that
writes a secret-named env's value (`WANDB_API_KEY`), so that every file is looked through
for it. Where the checkout's `pack` takes `known` (the secrets given at launch and
configured), two values are given too; no file holds any, so every file is packed and
both checkouts write the same archive. The look through every file for the values
(`codepack_secrets.blanking`) is timed on its own too, in this process.

Each checkout packs in a fresh process of its own (its own modules: PYTHONPATH is the
checkout), the runs taking turns (a busy machine weighs on both alike); the medians of
the CPU time (user + system) and wall time of the `pack` call alone are printed. The
first run of each is not counted (it warms the page cache). Asserts nothing.

    .venv/bin/python bench/bench_codepack.py [--runs 5] [--against /tmp/base]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SMALL_FILES = 2_000
BIG_BYTES = 100 * 1000 * 1000
KNOWN = ["hf_givenAtLaunch-0123456789", "sk-configured-abcdef987654"]
TASK = ("name: train\nworkdir: .\nenvs:\n  WANDB_API_KEY: wb_abcdef123456\n  LR: 0.1\n"
        "run: python train.py\n")

# Run in the checkout's own process: prints {"cpu": s, "wall": s, "files": n, "sha": ...}.
_TIMED = """
import inspect, json, resource, sys, tempfile, time
from pathlib import Path
from launchers.codepack import pack
work, known = Path(sys.argv[1]), json.loads(sys.argv[2])
kw = {"known": known} if "known" in inspect.signature(pack).parameters else {}
with tempfile.TemporaryDirectory() as out:
    usage, wall = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    packed = pack(work, Path(out), 1 << 30, work / "sky.yaml", [], **kw)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_SELF)
cpu = after.ru_utime - usage.ru_utime + after.ru_stime - usage.ru_stime
print(json.dumps({"cpu": cpu, "wall": wall, "files": packed.files, "sha": packed.sha256,
                  "known": bool(kw)}))
"""


def make_workdir(root: Path) -> Path:
    """The workdir packed: small files, one large one, and a task writing a secret."""
    rng = random.Random(7)
    work = root / "proj"
    for i in range(SMALL_FILES):
        folder = work / f"pkg{i % 40:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [f"def f{i}_{n}(x):\n    return x * {rng.randint(1, 999)} + {n}\n"
                 for n in range(40)]
        (folder / f"mod{i:04d}.py").write_text("".join(lines))
    with (work / "weights.bin").open("wb") as out:
        left = BIG_BYTES
        while left:
            block = rng.randbytes(4096)
            data = (block + block)[:left]
            out.write(data)
            left -= len(data)
    (work / "sky.yaml").write_text(TASK)
    return work


def timed(checkout: Path, work: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run([sys.executable, "-c", _TIMED, str(work), json.dumps(KNOWN)],
                          env=env, cwd=checkout, capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def scanned(work: Path) -> tuple[float, float]:
    """(CPU s, wall s) of this checkout's look through the workdir for the values alone."""
    sys.path.insert(0, str(ROOT))
    from launchers import codepack_secrets, workfiles

    names = workfiles.listing(work).files
    before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    codepack_secrets.blanking(work, names, None, [], KNOWN)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF)
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--against", type=Path, help="another checkout, timed alongside")
    args = parser.parse_args()
    checkouts = {"this": ROOT}
    if args.against:
        checkouts["against"] = args.against.resolve()
    with tempfile.TemporaryDirectory(prefix="bench-codepack-") as folder:
        work = make_workdir(Path(folder))
        results: dict[str, list[dict]] = {name: [] for name in checkouts}
        for run in range(args.runs + 1):
            for name, checkout in checkouts.items():
                result = timed(checkout, work)
                if run:  # the first warms the page cache
                    results[name].append(result)
        scan = [scanned(work) for _ in range(args.runs)]
    print(f"workdir: {SMALL_FILES:,} files of ~2 KB, one of {BIG_BYTES / 1e6:,.0f} MB, a task "
          f"writing a secret; medians of {args.runs} runs")
    print(f"{'checkout':<40} {'files':>6} {'CPU s':>7} {'wall s':>7}  known given")
    medians = {}
    for name, checkout in checkouts.items():
        runs = results[name]
        cpu = statistics.median(r["cpu"] for r in runs)
        wall = statistics.median(r["wall"] for r in runs)
        medians[name] = (cpu, wall)
        print(f"{str(checkout):<40} {runs[0]['files']:>6,} {cpu:>7.2f} {wall:>7.2f}  "
              f"{'yes' if runs[0]['known'] else 'no'}")
    print(f"of which looking through every file for the secrets' values (this checkout): "
          f"CPU {statistics.median(c for c, _ in scan):.2f} s, "
          f"wall {statistics.median(w for _, w in scan):.2f} s")
    if args.against:
        (cpu, wall), (cpu0, wall0) = medians["this"], medians["against"]
        same = results["this"][0]["sha"] == results["against"][0]["sha"]
        print(f"ratio this/against: CPU {cpu / cpu0:.2f}, wall {wall / wall0:.2f}; "
              f"same archive: {'yes' if same else 'no'}")


if __name__ == "__main__":
    main()

"""Start-up benchmark: how long each light command takes to start and end, next to
`python -c pass` in the same run (the interpreter's own start).

Commands: `costsched --help`, `--version`, `status` on an empty store, `logs` of a job
that does not exist (one line, exit 2), and, on a second store, `status` and `logs` of a
finished local job (a one-line script run by the local launcher before timing), and
`gpus` and `gpus H100` with no store made yet (the bundled prices, read by the standard
library) beside the same commands answered through pandas (as they are when a store
exists, or a `catalog refresh` found types: here an empty discovered-types file). Each is
run --runs times in a fresh subprocess; the median wall time and the median CPU time
(user + system, less sensitive to a busy machine) are printed with the wall time's ratio
to `python -c pass` and the difference to the 0.5 s target. With --against DIR, the same
commands of another checkout (e.g. an older commit: `git worktree add /tmp/old HEAD~10`)
are timed in the same run, side by side.
Asserts nothing.

    .venv/bin/python bench/bench_startup.py [--runs 7] [--against /tmp/old]
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
from pathlib import Path

TARGET_SECONDS = 0.5
COMMANDS = {"--help": ["--help"], "--version": ["--version"],
            "status (no jobs)": ["status"], "logs (no such job)": ["logs", "nosuchjob"]}
# Run against the store holding one finished local job.
JOB_COMMANDS = {"status (1 finished job)": ["status"], "logs (finished job)": ["logs", "hello"]}
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
# Run with no store made yet: (name, argv, through pandas).
GPUS_COMMANDS = {"gpus (no store)": (["gpus"], False),
                 "gpus, pandas path": (["gpus"], True),
                 "gpus H100 (no store)": (["gpus", "H100"], False),
                 "gpus H100, pandas path": (["gpus", "H100"], True)}
JOB = f"""name: hello
run: {sys.executable} -c "print('hello from the job')"
throughputs: {{V100: 1.0}}
steps: 10
constraints: {{regions: [us-east-1], markets: [spot]}}
"""


def cli(checkout: Path | None) -> list[str]:
    """The `costsched` command of this checkout, or of another one first on sys.path."""
    if checkout is None:
        return [sys.executable, "-m", "costsched.cli"]
    code = (f"import sys; sys.path.insert(0, {str(checkout)!r}); sys.argv[0] = 'costsched'; "
            "from costsched.cli import main; main()")
    return [sys.executable, "-c", code]


def medians(argv: list[str], runs: int, env: dict[str, str]) -> tuple[float, float]:
    """Median wall and CPU seconds of `argv` over `runs` runs."""
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(walls), statistics.median(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--against", type=Path, help="Another checkout to time beside this.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "store.sqlite")
        env = {**os.environ, "COSTSCHED_DB": db, "COSTSCHED_INSTANCES": str(Path(tmp) / "i")}
        # The empty store exists before timing: `status` reads a store, it never creates one.
        from costsched.store import PriceStore

        PriceStore(db).dispose()
        baseline, _ = medians([sys.executable, "-c", "pass"], args.runs, env)
        print(f"python -c pass: {baseline:.3f} s wall ({args.runs} runs, medians)")
        print(f"{'command':24} {'checkout':9} {'wall s':>7} {'cpu s':>7} {'x pass':>7} "
              f"{'vs 0.5 s':>9}")
        checkouts = [("this", None)] + ([("against", args.against)] if args.against else [])
        job_env = {**env, "COSTSCHED_DB": str(Path(tmp) / "jobs.sqlite")}
        finished_job(Path(tmp), job_env)
        for commands, environment in ((COMMANDS, env), (JOB_COMMANDS, job_env)):
            for name, argv in commands.items():
                for label, checkout in checkouts:
                    wall, cpu = medians([*cli(checkout), *argv], args.runs, environment)
                    print(f"{name:24} {label:9} {wall:7.3f} {cpu:7.3f} {wall / baseline:7.1f} "
                          f"{wall - TARGET_SECONDS:+9.3f}")
        discovered = Path(tmp) / "discovered.csv"
        discovered.write_text("cloud,instance_type,gpu_model,gpu_count,gpu_memory_gb,vcpus,"
                              "memory_gb,regions,zones,source\n")
        for name, (argv, pandas_path) in GPUS_COMMANDS.items():
            no_store = {**env, "COSTSCHED_DB": str(Path(tmp) / "none.sqlite"),
                        "COSTSCHED_DISCOVERED_TYPES": str(discovered if pandas_path
                                                          else Path(tmp) / "none.csv")}
            for label, checkout in checkouts:
                wall, cpu = medians([*cli(checkout), *argv], args.runs, no_store)
                print(f"{name:24} {label:9} {wall:7.3f} {cpu:7.3f} {wall / baseline:7.1f} "
                      f"{wall - TARGET_SECONDS:+9.3f}")


def finished_job(tmp: Path, env: dict[str, str]) -> None:
    """A store with demo prices and one job run to its end by the local launcher."""
    spec = tmp / "hello.yaml"
    spec.write_text(JOB)
    for argv in (["prices", "import", str(EXAMPLES / "demo" / "prices-before.csv")],
                 ["launch", str(spec), "--wait", "60"], ["status", "--wait", "60"]):
        subprocess.run([*cli(None), *argv], env=env, check=True, capture_output=True)
    out = subprocess.run([*cli(None), "logs", "hello"], env=env, check=True,
                         capture_output=True, text=True).stdout
    assert "hello from the job" in out, out


if __name__ == "__main__":
    main()

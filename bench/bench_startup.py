"""Start-up benchmark: the CPU time (user + system) and wall time each everyday command
takes from start to end, in a fresh process, against the 0.5 s target; with --against DIR,
the same commands of another checkout (e.g. main: `git worktree add /tmp/base main`),
timed in the same run, side by side, with the ratio of the two.

Stores, each made by each checkout for itself before timing:
- an empty store: `--help`, `--version`, `status`, `logs` of a job that does not exist;
- the demo's store, made as `make demo` makes it: the demo's prices
  (examples/demo/prices-before.csv) imported, stamped with the time they are imported,
  and one local job run to its end by the local launcher: `status`, `logs`, `report`,
  `gpus`, `gpus H100`, `plan` of examples/resnet50-anywhere.yaml and of
  examples/tinyproject/sky.yaml, tasks refused at parsing (an unsupported accelerator, a
  misspelt GPU), and `launch` of a small job (on a fresh copy of the store each run, with
  the supervisor's autostart off: the costsched process's own work, not the job's, which
  runs in a process of its own that outlives it);
- the demo's store with one more local job, launched with the supervisor's autostart off,
  still running (it reports a step every second, and is stopped at the bench's end):
  `status (running job)`, and the same with a daemon's row, as while a supervisor
  watches: `status (daemon watching)`;
- no store made yet: `plan` of examples/resnet50-anywhere.yaml (an empty store in memory
  and the bundled prices), `gpus` and `gpus H100` from the bundled prices, beside the same
  commands with an empty discovered-types file (as after a `catalog refresh`).

Each checkout has user cache, data and config directories of its own (XDG_CACHE_HOME,
XDG_DATA_HOME, XDG_CONFIG_HOME): the bench never reads or writes the user's own (the
launched jobs' checkpoints go to its data directory). The commands run
with Python writing their bytecode (PYTHONDONTWRITEBYTECODE unset), as an installed
costsched has it: the stores made first leave each checkout's modules compiled, so no
timed run pays for compiling a changed file.

Each command runs --runs times, the checkouts' runs taking turns (a busy machine weighs
on both alike); the medians are printed. CPU time is the figure that matters on a shared
machine: wall time grows with the machine's load. Asserts nothing.

With --instructions, each command runs once per checkout under valgrind's callgrind
instead, and the instructions it executed (its process alone, not the processes it
starts) are printed: a count that a busy machine does not change, for comparing two
checkouts where CPU times vary by a fifth from run to run (about fifty times slower).

    .venv/bin/python bench/bench_startup.py [--runs 7] [--against /tmp/base] [--only plan]
    .venv/bin/python bench/bench_startup.py --instructions [--against /tmp/base]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

TARGET_SECONDS = 0.5
ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"

# name -> (argv, store): the store is "empty", "demo", "none" (no store made yet),
# "none+discovered" (no store, an empty discovered-types file).
COMMANDS: dict[str, tuple[list[str], str]] = {
    "--help": (["--help"], "empty"),
    "--version": (["--version"], "empty"),
    "status (no jobs)": (["status"], "empty"),
    "logs (no such job)": (["logs", "nosuchjob"], "empty"),
    "status": (["status"], "demo"),
    "status (running job)": (["status"], "running"),
    "status (daemon watching)": (["status"], "watched"),
    "logs": (["logs", "hello"], "demo"),
    "report": (["report"], "demo"),
    "gpus": (["gpus"], "demo"),
    "gpus H100": (["gpus", "H100"], "demo"),
    "plan resnet50-anywhere": (["plan", str(EXAMPLES / "resnet50-anywhere.yaml")], "demo"),
    "plan tinyproject/sky": (["plan", str(EXAMPLES / "tinyproject" / "sky.yaml")], "demo"),
    "plan, refused: tpu-v4-8": (["plan", "{tmp}/tpu.yaml"], "demo"),
    "plan, refused: V10O": (["plan", "{tmp}/typo.yaml"], "demo"),
    "launch, refused: V10O": (["launch", "{tmp}/typo.yaml"], "demo"),
    "launch (own work)": (["launch", "{tmp}/small.yaml"], "demo-copy"),
    "plan resnet50 (no store)": (["plan", str(EXAMPLES / "resnet50-anywhere.yaml")], "none"),
    "gpus (no store)": (["gpus"], "none"),
    "gpus H100 (no store)": (["gpus", "H100"], "none"),
    "gpus (discovered types)": (["gpus"], "none+discovered"),
}
# A job that ends at once; its prices are the demo's.
FINISHED_JOB = f"""name: hello
run: {sys.executable} -c "print('hello from the job')"
throughputs: {{V100: 1.0}}
steps: 10
constraints: {{regions: [us-east-1], markets: [spot]}}
"""
# The job `launch` starts, on the local launcher: it sleeps past the launch's own end, so
# that its process is never the launch's child when that ends (its time is not counted).
SMALL_JOB = """name: small
run: sleep 8
throughputs: {V100: 1.0}
steps: 10
constraints: {regions: [us-east-1], markets: [spot]}
"""
# The job still running while `status (running job)` is timed: a step every second.
RUNNING_JOB = """name: running
run: |
  i=0
  while true; do
    i=$((i+1)); echo $i > "$COSTSCHED_PROGRESS_FILE.t"
    mv "$COSTSCHED_PROGRESS_FILE.t" "$COSTSCHED_PROGRESS_FILE"; sleep 1
  done
throughputs: {V100: 1.0}
steps: 100000
constraints: {regions: [us-east-1], markets: [spot]}
"""
REFUSED = {"tpu.yaml": "name: tpu-task\nresources:\n  accelerators: tpu-v4-8\n"
                       "run: python train.py\n",
           "typo.yaml": "name: typo-task\nresources:\n  accelerators: V10O:1\n"
                        "  use_spot: true\nrun: python train.py\n"}


@dataclass
class Checkout:
    """A checkout's costsched, run with its folder first on the path, and its stores."""

    label: str
    folder: Path
    tmp: Path

    def env(self, store: str) -> dict[str, str]:
        base = {**_written_bytecode(os.environ), "PYTHONPATH": str(self.folder),
                "COSTSCHED_INSTANCES": str(self.tmp / "instances"),
                "COSTSCHED_DAEMON_AUTOSTART": "false",
                "COSTSCHED_DISCOVERED_TYPES": str(self.tmp / "no-discovered.csv"),
                "XDG_CACHE_HOME": str(self.tmp / "cache"),
                "XDG_DATA_HOME": str(self.tmp / "data"),
                "XDG_CONFIG_HOME": str(self.tmp / "config")}
        if store == "none+discovered":
            return {**base, "COSTSCHED_DB": str(self.tmp / "none.sqlite"),
                    "COSTSCHED_DISCOVERED_TYPES": str(self.tmp / "discovered.csv")}
        if store.startswith("copies/"):  # a copy of the demo's store (`fresh_copy`)
            return {**base, "COSTSCHED_DB": str(self.tmp / store / "demo.sqlite"),
                    "COSTSCHED_INSTANCES": str(self.tmp / store / "instances")}
        if store in ("running", "watched"):
            return {**base, "COSTSCHED_DB": str(self.tmp / f"{store}.sqlite"),
                    "COSTSCHED_INSTANCES": str(self.tmp / "running-instances")}
        return {**base, "COSTSCHED_DB": str(self.tmp / f"{store}.sqlite")}

    def run(self, argv: list[str], store: str, **kwargs) -> subprocess.CompletedProcess:
        return subprocess.run([*CLI, *argv], env=self.env(store), cwd=self.tmp,
                              check=True, capture_output=True, text=True, **kwargs)


def _written_bytecode(env: Mapping[str, str]) -> dict[str, str]:
    """`env` without PYTHONDONTWRITEBYTECODE: each module is compiled once, not per run."""
    return {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}


# From the store's folder: neither checkout is on the path by the current directory.
CLI = [sys.executable, "-m", "costsched.cli"]


def prepare(checkout: Checkout) -> None:
    """The checkout's stores and task files (see the module's help)."""
    tmp = checkout.tmp
    tmp.mkdir(parents=True)
    subprocess.run([sys.executable, "-c", "import sys; from costsched.store import PriceStore;"
                    " PriceStore(sys.argv[1]).dispose()", str(tmp / "empty.sqlite")],
                   env=checkout.env("empty"), cwd=tmp, check=True)
    (tmp / "discovered.csv").write_text("cloud,instance_type,gpu_model,gpu_count,"
                                        "gpu_memory_gb,vcpus,memory_gb,regions,zones,source\n")
    for name, text in REFUSED.items():
        (tmp / name).write_text(text)
    (tmp / "small.yaml").write_text(SMALL_JOB)
    (tmp / "hello.yaml").write_text(FINISHED_JOB)
    # The demo's prices, stamped with now (as `make demo` does).
    now = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    lines = (EXAMPLES / "demo" / "prices-before.csv").read_text().splitlines()
    stamped = [lines[0]] + [_stamped(line, now) for line in lines[1:]]
    (tmp / "prices.csv").write_text("\n".join(stamped) + "\n")
    checkout.run(["prices", "import", str(tmp / "prices.csv")], "demo")
    checkout.run(["launch", str(tmp / "hello.yaml"), "--wait", "120"], "demo")
    checkout.run(["status", "--wait", "120"], "demo")
    out = checkout.run(["logs", "hello"], "demo").stdout
    assert "hello from the job" in out, out
    copy_store(tmp / "demo.sqlite", tmp / "running.sqlite")
    (tmp / "running.yaml").write_text(RUNNING_JOB)
    checkout.run(["launch", str(tmp / "running.yaml"), "--wait", "120"], "running")
    time.sleep(3)  # a few steps reported
    out = checkout.run(["status", "--json"], "running").stdout
    running = [j for j in json.loads(out)["jobs"] if j["name"] == "running"]
    assert running and running[0]["instance_state"] == "running", out
    # The same store with a daemon's row (this bench's process stands for the daemon: its
    # pid runs), as while a supervisor watches: status reads it and says recovery is armed.
    copy_store(tmp / "running.sqlite", tmp / "watched.sqlite")
    subprocess.run([sys.executable, "-c", WATCHING, str(tmp / "watched.sqlite"),
                    f"{socket.gethostname()}:{os.getpid()}:bench"],
                   env=checkout.env("watched"), cwd=tmp, check=True)


WATCHING = ("import sys; from datetime import datetime, timezone;"
            " from costsched.store import PriceStore; store = PriceStore(sys.argv[1]);"
            " store.daemons.register(sys.argv[2], kind='service', tasks=('watch',),"
            " watch_seconds=30, log='', at=datetime.now(timezone.utc)); store.dispose()")


def stop_running(checkout: Checkout) -> None:
    """End the job `status (running job)` looked at."""
    if (checkout.tmp / "running.sqlite").exists():
        subprocess.run([*CLI, "stop", "running"], env=checkout.env("running"),
                       cwd=checkout.tmp, check=False, capture_output=True)


def _stamped(line: str, now: str) -> str:
    """A price row with its time (the one ISO field ending in Z) set to `now`."""
    return ",".join(now if f.endswith("Z") and "T" in f else f for f in line.split(","))


def run_once(argv: list[str], env: dict[str, str], cwd: Path, refused: bool = False
             ) -> tuple[float, float]:
    """Wall and CPU seconds (user + system of the process and the children it waited
    for) of one run. A run that does not end as expected (`refused`: a non-zero exit,
    else 0) stops the bench with its error: a refusal is never timed as the work."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if (done.returncode != 0) != refused:
        last = (done.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
        raise SystemExit(f"{' '.join(argv[-2:])}: exited {done.returncode}, expected "
                         f"{'an error' if refused else '0'}: {last}")
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def fresh_copy(checkout: Checkout, run: int) -> str:
    """A store of its own for one `launch` run, a copy of the demo's, and an empty instances
    folder: no run sees another's job."""
    folder = checkout.tmp / "copies" / str(run)
    folder.mkdir(parents=True)
    copy_store(checkout.tmp / "demo.sqlite", folder / "demo.sqlite")
    return f"copies/{run}"


def copy_store(source: Path, target: Path) -> None:
    """A SQLite store copied whole, its write-ahead log included (a copy of the file alone
    can miss the latest writes, or meet a stale log of an earlier copy beside it)."""
    with closing(sqlite3.connect(source)) as src, closing(sqlite3.connect(target)) as dst:
        src.backup(dst)


def time_command(checkouts: list[Checkout], argv: list[str], store: str, runs: int,
                 program: Sequence[str] = CLI, refused: bool = False
                 ) -> list[tuple[float, float]]:
    """Per checkout, the median wall and CPU seconds over `runs` of `program` with `argv`,
    the checkouts taking turns."""
    times: list[list[tuple[float, float]]] = [[] for _ in checkouts]
    for run in range(runs):
        for i, checkout in enumerate(checkouts):
            where = fresh_copy(checkout, run) if store == "demo-copy" else store
            args = [a.replace("{tmp}", str(checkout.tmp)) for a in argv]
            times[i].append(run_once([*program, *args], checkout.env(where), checkout.tmp,
                                     refused))
    return [(statistics.median(w for w, _ in t), statistics.median(c for _, c in t))
            for t in times]


def count_command(checkouts: list[Checkout], argv: list[str], store: str,
                  program: Sequence[str] = CLI, refused: bool = False) -> list[int]:
    """Per checkout, the instructions one run of the command with `argv` executed, counted
    by callgrind (`--instructions`)."""
    counts = []
    for checkout in checkouts:
        where = fresh_copy(checkout, 0) if store == "demo-copy" else store
        args = [a.replace("{tmp}", str(checkout.tmp)) for a in argv]
        with tempfile.NamedTemporaryFile(dir=checkout.tmp, suffix=".callgrind") as out:
            callgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out.name}"]
            run_once([*callgrind, *program, *args], checkout.env(where), checkout.tmp,
                     refused)
            counts.append(_instructions(Path(out.name).read_text()))
    return counts


def _instructions(callgrind_out: str) -> int:
    """The instructions a callgrind output file counts in all (its `summary:` line)."""
    for line in callgrind_out.splitlines():
        if line.startswith("summary:"):
            return int(line.split()[1])
    raise SystemExit("callgrind wrote no summary: is valgrind installed?")


def wait_for_jobs(checkout: Checkout, patience: float = 60.0) -> None:
    """Until the jobs `launch` started (their agents, detached) have ended."""
    pids = []
    for record in (checkout.tmp / "copies").glob("*/instances/*/instance.json"):
        pid = json.loads(record.read_text()).get("pid")
        if pid:
            pids.append(int(pid))
    deadline = time.monotonic() + patience
    while pids and time.monotonic() < deadline:
        pids = [p for p in pids if _alive(p)]
        time.sleep(0.5)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--against", type=Path, help="Another checkout to time beside this.")
    parser.add_argument("--only", action="append", default=[],
                        help="Only the commands whose name starts with this (repeat).")
    parser.add_argument("--instructions", action="store_true",
                        help="Count each command's instructions once under valgrind's "
                             "callgrind instead of timing it.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        checkouts = [Checkout("this", ROOT, Path(tmp) / "this")]
        if args.against:
            checkouts.append(Checkout("against", args.against.resolve(), Path(tmp) / "against"))
        try:
            for checkout in checkouts:
                prepare(checkout)
            (report_instructions if args.instructions else report)(checkouts, args)
        finally:
            for checkout in checkouts:
                stop_running(checkout)
                wait_for_jobs(checkout)


def report(checkouts: list[Checkout], args: argparse.Namespace) -> None:
    baseline = time_command(checkouts[:1], ["-c", "pass"], "empty", args.runs,
                            program=[sys.executable])[0]
    print(f"python -c pass: {baseline[1]:.3f} s CPU, {baseline[0]:.3f} s wall "
          f"({args.runs} runs each, medians; load average {os.getloadavg()[0]:.1f})")
    against = len(checkouts) > 1
    header = f"{'command':26} {'cpu s':>7}"
    if against:
        header += f" {'against':>8} {'ratio':>6}"
    header += f" {'wall s':>7}" + (f" {'against':>8}" if against else "")
    print(header + f" {'cpu vs 0.5 s':>13}")
    for name, (argv, store) in COMMANDS.items():
        if args.only and not any(name.startswith(o) for o in args.only):
            continue
        measured = time_command(checkouts, argv, store, args.runs,
                                refused="refused" in name or "no such" in name)
        (wall, cpu) = measured[0]
        line = f"{name:26} {cpu:7.3f}"
        if against:
            line += f" {measured[1][1]:8.3f} {cpu / measured[1][1]:6.2f}"
        line += f" {wall:7.3f}" + (f" {measured[1][0]:8.3f}" if against else "")
        print(line + f" {_target(cpu):>13}", flush=True)


def report_instructions(checkouts: list[Checkout], args: argparse.Namespace) -> None:
    baseline = count_command(checkouts[:1], ["-c", "pass"], "empty", program=[sys.executable])
    print(f"python -c pass: {baseline[0] / 1e6:.0f} million instructions "
          "(millions below, one run of each command under callgrind)")
    against = len(checkouts) > 1
    print(f"{'command':26} {'this':>8}" + (f" {'against':>8} {'ratio':>6}" if against else ""))
    for name, (argv, store) in COMMANDS.items():
        if args.only and not any(name.startswith(o) for o in args.only):
            continue
        counts = count_command(checkouts, argv, store,
                               refused="refused" in name or "no such" in name)
        line = f"{name:26} {counts[0] / 1e6:8.0f}"
        if against:
            line += f" {counts[1] / 1e6:8.0f} {counts[0] / counts[1]:6.2f}"
        print(line, flush=True)


def _target(cpu: float) -> str:
    return f"{cpu - TARGET_SECONDS:+.3f}" + (" ok" if cpu <= TARGET_SECONDS else "")


if __name__ == "__main__":
    main()

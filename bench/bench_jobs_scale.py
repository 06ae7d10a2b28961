"""How the running half scales with the number of jobs: one daemon re-plan pass and one
`status` (by default; also `status JOB`, `report` and the dashboard's data), on the code
of a baseline commit ("today") and on this checkout's ("new"), side by side in one run,
with their time (and CPU time), peak memory and the ratios between the two.

A store of N jobs is built once per backend and size, through the baseline code's store
API (half the jobs running on one of three spot zones priced from examples/demo, half
finished after a placement of a few hours; instances played by an in-memory launcher whose
instances are saved with the store); on PostgreSQL, in a SQLite file first, whose rows are
then copied into the server's store in bulk. Every measurement starts from its own copy of that
store (a copy of the SQLite file; on PostgreSQL, a copy of the schema), so both codes and
both commands see the same jobs. The baseline runs from a temporary `git worktree` of its
commit; each code runs in a subprocess of its own, which imports its modules and then forks
one child per command: the time is the command's, and the peak resident memory the child's
own high-water mark (VmHWM in /proc/self/status). A command past --cap seconds is stopped
and shown as "> cap".

    python bench/bench_jobs_scale.py                      # 1,000 and 10,000 jobs, SQLite
    python bench/bench_jobs_scale.py --quick              # 1,000 jobs
    python bench/bench_jobs_scale.py --jobs 2000 --url postgresql+psycopg://...
    COSTSCHED_TEST_PG_URL=postgresql+psycopg://... python bench/bench_jobs_scale.py
    python bench/bench_jobs_scale.py --jobs 2000 --finished --baseline main \
        --commands "status,status JOB,report,dashboard,dashboard JOB"   # every view's money

With --finished every job has finished (each after two placements, one of them of a few
seconds): what the views read to write money at one scale for the whole store (today
one aggregate read, `costsched.report.settled`; a code that kept the scale in the user
cache runs with none of it kept). Each command runs first in its process, or with --warm
as a second run (what the first kept, kept).

PostgreSQL is measured when --url (or COSTSCHED_TEST_PG_URL) names a server; each store
lives in a schema of its own, dropped at the end.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The code measured: this checkout, or the baseline's work tree for its subprocesses.
CODE = Path(os.environ.get("COSTSCHED_BENCH_CODE", str(ROOT)))
sys.path.insert(0, str(CODE))

BASELINE = "815fd22"  # the code before the passes were made set-based end to end
NOW = datetime(2026, 1, 2, 12, tzinfo=timezone.utc)
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
PRICES = ROOT / "examples" / "demo" / "prices-before.csv"
SPEC = {
    "name": "scale-0",
    "run": "python train.py",
    "throughputs": {"V100": 0.025},
    "steps": 4000,
    "checkpoint": {"location": "/tmp/costsched-bench-scale", "size_gb": 0.1,
                   "interval_minutes": 30},
    "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
}
COMMANDS = ("daemon pass", "status")  # measured by default; also those below
MORE = ("migrate --dry-run", "report", "status JOB", "dashboard", "dashboard JOB")
# The job `status JOB` and `dashboard JOB` read: one of the finished ones.
ONE_JOB = 2


def memory_launcher(states: dict | None = None):  # noqa: ANN201 - a Launcher of the code
    """A launcher whose instances run until told otherwise; nothing leaves the process."""
    from costsched.migration.launcher import Instance, Launcher, LaunchSpec
    from costsched.model import Offering

    class MemoryLauncher(Launcher):
        name = "memory"

        def __init__(self) -> None:
            self.states: dict[str, tuple] = {}
            self.of_job: dict[int, list[str]] = {}  # a cloud's lookup by the job's tag
            for instance_id, state in (states or {}).items():
                self._put(instance_id, state)

        def _put(self, instance_id: str, state: tuple) -> None:
            if instance_id not in self.states:
                self.of_job.setdefault(state[1], []).append(instance_id)
            self.states[instance_id] = state

        def _get(self, instance_id: str) -> Instance:
            return Instance(*self.states[instance_id])

        def can_launch(self, offering: Offering) -> bool:
            return True

        def launch(self, spec: LaunchSpec) -> Instance:
            instance_id = f"m-{spec.job_id}-{spec.attempt}"
            self._put(instance_id, (instance_id, spec.job_id, spec.attempt,
                                    tuple(spec.offering.key), "running"))
            return self._get(instance_id)

        def add(self, instance_id: str, job_id: int, key: tuple, state: str) -> None:
            self._put(instance_id, (instance_id, job_id, "a0", tuple(key), state))

        def _set(self, instance_id: str, state: str) -> None:
            self.states[instance_id] = (*self.states[instance_id][:4], state)

        def status(self, instance_id: str) -> Instance:
            return self._get(instance_id)

        def request_stop(self, instance_id: str) -> None:
            self._set(instance_id, "stopped")

        def terminate(self, instance_id: str) -> None:
            self._set(instance_id, "terminated")

        def instances(self, job_id: int | None = None) -> list[Instance]:
            found = self.states if job_id is None else self.of_job.get(job_id, [])
            return [self._get(i) for i in found]

    return MemoryLauncher()


# --- the store -------------------------------------------------------------------------------


def build(url: str, jobs: int, finished: bool = False) -> dict:
    """A store of `jobs` jobs at `url`: even ones running, odd ones finished (`finished`:
    every one, after a move from a first placement of a few seconds); the launcher's
    instances (to save beside it)."""
    from costsched.service.prices import import_prices
    from costsched.store import PriceStore

    launcher = memory_launcher()
    store = PriceStore(url)
    import_prices(store, [PRICES])
    start = NOW - timedelta(hours=6)
    for n in range(jobs):
        spec = {**SPEC, "name": f"scale-{n}"}
        stored = {"spec": spec, "source": "bench", "launcher": launcher.name}
        job_id = store.jobs.create(spec["name"], stored, 4000, at=start,
                                   policy="dynamic-aware",
                                   checkpoint_location=f"/tmp/costsched-bench-scale/{n}")
        key = ("aws", "us-east-1", ZONES[n % len(ZONES)], "p3.2xlarge", "spot", "linux")
        instance = f"m-{job_id}"
        store.jobs.transition(job_id, "running", at=start)
        store.jobs.place(job_id, key, gpu_model="V100", gpu_count=1, at=start,
                         usd_per_hour=0.92, reason="launch", instance=instance)
        store.jobs.record_progress(job_id, 100.0, at=start + timedelta(hours=1))
        if finished:
            moved = start + timedelta(seconds=7 + n % 50)
            store.jobs.end_placement(job_id, moved, instance=instance)
            instance = f"m-{job_id}-2"
            key = (*key[:2], ZONES[(n + 1) % len(ZONES)], *key[3:])
            store.jobs.place(job_id, key, gpu_model="V100", gpu_count=1, at=moved,
                             usd_per_hour=0.92, reason="migration", instance=instance)
        if finished or n % 2:
            store.jobs.end_placement(job_id, start + timedelta(hours=3), instance=instance)
            store.jobs.transition(job_id, "succeeded", at=start + timedelta(hours=3))
            launcher.add(instance, job_id, key, "succeeded")
        else:
            launcher.add(instance, job_id, key, "running")
    store.dispose()
    return launcher.states


def build_via_sqlite(url: str, jobs: int, sqlite_file: Path, finished: bool = False) -> dict:
    """`build` on PostgreSQL: the jobs made in a SQLite file through the store's API, then
    their rows copied into the store at `url` (made with the same code's schema, emptied
    of the rows its revisions made, such as the store's id), table by table in bulk, its
    id sequences set past the rows copied."""
    from sqlalchemy import insert, select, text

    from costsched.store import PriceStore
    from costsched.store.schema import metadata

    states = build(f"sqlite:///{sqlite_file}", jobs, finished)
    source, target = PriceStore(f"sqlite:///{sqlite_file}"), PriceStore(url)
    with source.engine.connect() as read, target.engine.begin() as write:
        for table in reversed(metadata.sorted_tables):  # what its revisions made (its id)
            write.execute(table.delete())
        for table in metadata.sorted_tables:
            rows = [dict(r) for r in read.execute(select(table)).mappings()]
            for first in range(0, len(rows), 5000):
                write.execute(insert(table), rows[first:first + 5000])
            for column in table.primary_key.columns:
                if column.autoincrement is True or (
                        column.autoincrement == "auto" and column.type.python_type is int
                        and len(table.primary_key.columns) == 1):
                    write.execute(text(
                        f"SELECT setval(pg_get_serial_sequence('{table.name}', "
                        f"'{column.name}'), COALESCE(MAX({column.name}), 0) + 1, false) "
                        f"FROM {table.name}"))
    source.dispose()
    target.dispose()
    return states


def copy_store(url: str, workdir: Path) -> str:
    """A copy of the store at `url` (a SQLite file, or a PostgreSQL schema of the bench's);
    its URL."""
    if url.startswith("sqlite:///"):
        source = Path(url.removeprefix("sqlite:///"))
        target = workdir / f"copy-{uuid.uuid4().hex[:8]}.sqlite"
        for suffix in ("", "-wal"):  # a log not yet checkpointed holds rows too
            if Path(f"{source}{suffix}").exists():
                shutil.copyfile(f"{source}{suffix}", f"{target}{suffix}")
        return f"sqlite:///{target}"
    from sqlalchemy import create_engine, text

    base, schema = _pg_parts(url)
    copy = _pg_schema(base)
    engine = create_engine(base)
    with engine.begin() as conn:
        tables = conn.execute(text("SELECT tablename FROM pg_tables WHERE schemaname = :s"),
                              {"s": schema}).scalars().all()
        for table in tables:
            conn.execute(text(f'CREATE TABLE {copy}."{table}" '
                              f'(LIKE {schema}."{table}" INCLUDING ALL)'))
            conn.execute(text(f'INSERT INTO {copy}."{table}" SELECT * FROM {schema}."{table}"'))
            # A serial column of its own (LIKE keeps the original's sequence as default).
            for column in conn.execute(text(
                    "SELECT column_name FROM information_schema.columns WHERE "
                    "table_schema = :s AND table_name = :t AND column_default LIKE 'nextval%'"),
                    {"s": schema, "t": table}).scalars().all():
                sequence = f'{copy}."{table}_{column}_seq"'
                conn.execute(text(f'CREATE SEQUENCE {sequence} OWNED BY '
                                  f'{copy}."{table}"."{column}"'))
                conn.execute(text(f'ALTER TABLE {copy}."{table}" ALTER COLUMN "{column}" '
                                  f"SET DEFAULT nextval('{sequence}')"))
                conn.execute(text(f"SELECT setval('{sequence}', COALESCE(MAX(\"{column}\"), "
                                  f'0) + 1, false) FROM {copy}."{table}"'))
    engine.dispose()
    return _pg_url(base, copy)


SCHEMAS: list[tuple[str, str]] = []  # (server URL, schema) made by this run


def _pg_schema(base: str) -> str:
    from sqlalchemy import create_engine, text

    schema = f"bench_{uuid.uuid4().hex[:10]}"
    engine = create_engine(base)
    with engine.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    engine.dispose()
    SCHEMAS.append((base, schema))
    return schema


def _pg_url(base: str, schema: str) -> str:
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}options=-csearch_path%3D{schema}"


def _pg_parts(url: str) -> tuple[str, str]:
    base, _, schema = url.rpartition("options=-csearch_path%3D")
    return base.rstrip("?&"), schema


def _drop_schemas() -> None:
    from sqlalchemy import create_engine, text

    for base, schema in SCHEMAS:
        engine = create_engine(base)
        with engine.begin() as conn:
            conn.execute(text(f"DROP SCHEMA IF EXISTS {schema} CASCADE"))
        engine.dispose()


# --- one code's measurements (run in its subprocess) ----------------------------------------


def command(name: str, url: str, launcher) -> None:  # noqa: ANN001 - a Launcher
    """Run one command of the bench on the store at `url`, as a user's would."""
    from costsched.store import PriceStore

    if name == "daemon pass":
        from costsched.config import Config
        from costsched.daemon import Daemon

        Daemon(PriceStore(url), Config(), launchers=lambda _: launcher,
               settle_seconds=0).replan(NOW)
    elif name in ("status", "status JOB"):
        from costsched.service import jobs as service

        service.status(PriceStore(url), launcher, ONE_JOB if name == "status JOB" else None,
                       at=NOW)
    elif name == "migrate --dry-run":
        from costsched.service import jobs as service

        service.migrate(PriceStore(url), launcher, dry_run=True, at=NOW)
    elif name == "report":
        from costsched.report.data import build as report

        report(PriceStore(url), now=NOW)
    elif name in ("dashboard", "dashboard JOB"):
        dashboard(name, PriceStore(url), launcher)
    else:
        raise SystemExit(f"command {name!r}: expected one of "
                         f"{', '.join(COMMANDS + MORE)}")


def dashboard(name: str, store, launcher) -> None:  # noqa: ANN001 - the code's own types
    """What the dashboard reads for its jobs page ("dashboard": every job, each one's
    forecast and the money's scale) or for one job's page ("dashboard JOB")."""
    from costsched.dashboard import data, render
    from costsched.service import views

    views.job_launcher = lambda *_: launcher  # the bench's instances, not this machine's
    if name == "dashboard JOB":
        data.job_document(store, ONE_JOB, at=NOW)
        return
    doc = data.jobs_document(store)
    data.forecasts(store, doc["jobs"], at=NOW)
    if hasattr(render, "settled_sums"):  # a code whose scale was made of the jobs shown
        data.scale(store, render.settled_sums(doc["jobs"]))
    else:  # the store's: its smallest settled charge's
        data.scale(store)


def peak_mb() -> float:
    """This process's peak resident memory (VmHWM), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure_in_child(name: str, url: str, states: dict, cap: float, warm: bool = False
                     ) -> tuple[float, float, float]:
    """(seconds, peak MB, CPU seconds) of one command in a forked child; (inf, nan, nan)
    past `cap` seconds, (nan, nan, nan) when it failed (the child says why on stderr). On a
    busy machine the CPU seconds are the steadier figure. `warm`: its second run in the
    child (the store's scale kept by the first), else its first with none kept."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the command, then its figures down the pipe
        os.close(read)
        launcher = memory_launcher(states)
        try:
            if warm:  # a first run, untimed: what it keeps is there for the second
                command(name, url, launcher)
            else:  # none of the store's scale kept by an earlier command
                from costsched.kept import cache_dir

                for kept in cache_dir().glob("settled-scale-*"):
                    kept.unlink()
            start, cpu = time.perf_counter(), time.process_time()
            command(name, url, launcher)
            out = (time.perf_counter() - start, peak_mb(), time.process_time() - cpu)
        except BaseException as exc:  # noqa: BLE001 - the row says it failed
            print(f"    {name} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            out = (math.nan, math.nan, math.nan)
        os.write(write, json.dumps(out).encode())
        os._exit(0)
    os.close(write)
    deadline = time.monotonic() + cap
    while time.monotonic() < deadline:
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done:
            with os.fdopen(read) as pipe:
                text = pipe.read()
            return tuple(json.loads(text)) if text else (math.nan, math.nan, math.nan)
        time.sleep(0.05)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    os.close(read)
    return math.inf, math.nan, math.nan


def worker(args: argparse.Namespace) -> None:
    """The subprocess of one code: build a store, or measure commands on copies of one."""
    if args.build:
        if args.url.startswith("sqlite"):
            states = build(args.url, args.size, args.finished)
        else:  # far faster than thousands of small transactions with a server
            states = build_via_sqlite(args.url, args.size, Path(f"{args.build}.sqlite"),
                                      args.finished)
        Path(args.build).write_bytes(pickle.dumps(states))
        return
    states = pickle.loads(Path(args.states).read_bytes())
    # Imported before the children fork: their times are the commands' own work.
    import costsched.daemon  # noqa: F401
    import costsched.dashboard.data  # noqa: F401
    import costsched.dashboard.render  # noqa: F401
    import costsched.report.data  # noqa: F401
    import costsched.service.jobs  # noqa: F401

    for name, url in zip(args.commands.split(","), args.urls.split(" "), strict=True):
        print(json.dumps({"command": name, "figures": measure_in_child(
            name, url, states, args.cap, args.warm)}), flush=True)


# --- the run ----------------------------------------------------------------------------------


def run_code(code: Path, *argv: str) -> str:
    """This script's worker under `code` (a checkout); its standard output."""
    env = {**os.environ, "COSTSCHED_BENCH_CODE": str(code)}
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker", *argv],
                          cwd=code, env=env, capture_output=True, text=True, check=False)
    sys.stderr.write(done.stderr)
    if done.returncode:
        raise SystemExit(f"the worker under {code} failed (exit {done.returncode})")
    return done.stdout


def baseline_tree(rev: str, workdir: Path) -> Path:
    """A temporary work tree of `rev` (removed at the end of the run)."""
    tree = workdir / f"code-{rev}"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet",
                    str(tree), rev], check=True)
    return tree


def measure(code: Path, commands: list[str], built: str, states: Path, workdir: Path,
            cap: float, warm: bool = False) -> dict[str, tuple[float, float, float]]:
    urls = [copy_store(built, workdir) for _ in commands]
    out = run_code(code, "--commands", ",".join(commands), "--urls", " ".join(urls),
                   "--states", str(states), "--cap", str(cap), *(["--warm"] if warm else []))
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return {r["command"]: tuple(r["figures"]) for r in rows}


def cell(secs: float, mb: float, cpu: float, cap: float) -> str:
    if math.isinf(secs):
        return f"> {cap:g} s"
    if math.isnan(secs):
        return "failed"
    return f"{secs:8.2f} s ({cpu:.2f}) {mb:5.0f} MB"


def ratio(old: float, new: float) -> str:
    if not (math.isfinite(old) and math.isfinite(new)) or new <= 0:
        return "-"
    return f"{old / new:.2f}x"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", default="1000,10000",
                        help="store sizes, comma-separated (default 1000,10000)")
    parser.add_argument("--quick", action="store_true", help="1,000 jobs only")
    parser.add_argument("--url", default=os.environ.get("COSTSCHED_TEST_PG_URL", ""),
                        help="a PostgreSQL server to measure too (default "
                             "COSTSCHED_TEST_PG_URL)")
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--commands", default=",".join(COMMANDS),
                        help=f"comma-separated, of: {', '.join(COMMANDS + MORE)}")
    parser.add_argument("--finished", action="store_true",
                        help="every job finished (after two placements), none running")
    parser.add_argument("--warm", action="store_true",
                        help="time each command's second run in its process (what the "
                             "first kept, such as the store's money scale, kept); by "
                             "default its first, with no scale kept")
    parser.add_argument("--baseline", default=BASELINE, help="the commit of today's code")
    parser.add_argument("--new", default="",
                        help="a commit of the new code (default: this checkout as it is)")
    parser.add_argument("--cap", type=float, default=900.0, help="seconds per command")
    # The subprocesses' own arguments.
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--build", help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--urls", help=argparse.SUPPRESS)
    parser.add_argument("--states", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    sizes = [1000] if args.quick else [int(s) for s in args.jobs.split(",")]
    commands = [c for c in args.commands.split(",") if c]
    backends = [b for b in args.backends.split(",") if b == "sqlite" or args.url]
    workdir = Path(tempfile.mkdtemp(prefix="costsched-bench-scale-"))
    # Stopped (SIGTERM), the run still removes its work trees and schemas.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    old = baseline_tree(args.baseline, workdir)
    ours = baseline_tree(args.new, workdir) if args.new else ROOT
    try:
        for backend in backends:
            print(f"\n== {backend}: today ({args.baseline}) and new ({args.new or 'this checkout'})"
                  "; seconds (CPU seconds), peak MB; today/new: time, CPU, memory", flush=True)
            print(f"  {'jobs':>6}  {'command':<18}{'today':>28}{'new':>28}{'time':>9}"
                  f"{'CPU':>9}{'memory':>9}", flush=True)
            for size in sizes:
                built = (f"sqlite:///{workdir / f'built-{size}.sqlite'}" if backend == "sqlite"
                         else _pg_url(args.url, _pg_schema(args.url)))
                states = workdir / f"states-{backend}-{size}.pickle"
                t0 = time.perf_counter()
                run_code(old, "--build", str(states), "--size", str(size), "--url", built,
                         *(["--finished"] if args.finished else []))
                print(f"  (built {size:,} jobs in {time.perf_counter() - t0:.0f} s)",
                      flush=True)
                today = measure(old, commands, built, states, workdir, args.cap, args.warm)
                new = measure(ours, commands, built, states, workdir, args.cap, args.warm)
                for name in commands:
                    (s0, m0, c0), (s1, m1, c1) = today[name], new[name]
                    print(f"  {size:>6,}  {name:<18}{cell(s0, m0, c0, args.cap):>28}"
                          f"{cell(s1, m1, c1, args.cap):>28}{ratio(s0, s1):>9}"
                          f"{ratio(c0, c1):>9}{ratio(m0, m1):>9}", flush=True)
    finally:
        for tree in {old, ours} - {ROOT}:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(tree)], check=False)
        if SCHEMAS:
            _drop_schemas()
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()

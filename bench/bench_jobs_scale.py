"""How the running half scales with the number of jobs: `status`, `migrate --dry-run`,
`report` and one daemon re-plan pass over stores of 10 to 10,000 jobs, with their time,
peak memory and growth exponent, on SQLite (and PostgreSQL when COSTSCHED_TEST_PG_URL is
set). Also the time to launch N jobs through the service.

Stores are built through the store's API: half the jobs running on one of three spot
zones (priced from examples/demo), half finished after a placement of a few hours.
Instances are played by an in-memory launcher. Each measurement runs in a child process
of its own (forked after the store is built and the modules imported); the peak resident
memory printed is the child's own high-water mark (VmHWM in /proc/self/status: the
parent's peak is not inherited, as getrusage's would be). A measurement that passes
--cap seconds is stopped and printed as "> cap". The launch of N jobs is timed through
the service up to --launch-up-to jobs. Last, --local-jobs jobs (a `sleep`) are launched on the local
launcher (real processes) and one `status` of them is timed; then they are stopped.

    python bench/bench_jobs_scale.py                       # 10, 100, 1000 jobs
    python bench/bench_jobs_scale.py --sizes 10,100,1000,10000 --cap 600
    COSTSCHED_TEST_PG_URL=postgresql+psycopg://... python bench/bench_jobs_scale.py
"""

from __future__ import annotations

import argparse
import math
import multiprocessing as mp
import os
import resource
import sys
import tempfile
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from costsched.migration.launcher import Instance, Launcher, LaunchSpec  # noqa: E402
from costsched.model import Offering  # noqa: E402

NOW = datetime(2026, 1, 2, 12, tzinfo=timezone.utc)
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
SPEC = {
    "name": "scale-0",
    "run": "python train.py",
    "throughputs": {"V100": 0.025},
    "steps": 4000,
    "checkpoint": {"location": "/tmp/costsched-bench-scale", "size_gb": 0.1,
                   "interval_minutes": 30},
    "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
}


class MemoryLauncher(Launcher):
    """Instances that run until told otherwise; nothing leaves the process."""

    name = "memory"

    def __init__(self) -> None:
        self.states: dict[str, Instance] = {}

    def can_launch(self, offering: Offering) -> bool:
        return True

    def launch(self, spec: LaunchSpec) -> Instance:
        instance = Instance(f"m-{spec.job_id}-{spec.attempt}", spec.job_id, spec.attempt,
                            spec.offering.key, "running")
        self.states[instance.id] = instance
        return instance

    def add(self, instance_id: str, job_id: int, key: tuple, state: str) -> None:
        self.states[instance_id] = Instance(instance_id, job_id, "a0", key, state)

    def _set(self, instance_id: str, state: str) -> None:
        old = self.states[instance_id]
        self.states[instance_id] = Instance(old.id, old.job_id, old.attempt,
                                            old.offering_key, state)

    def status(self, instance_id: str) -> Instance:
        return self.states[instance_id]

    def request_stop(self, instance_id: str) -> None:
        self._set(instance_id, "stopped")

    def terminate(self, instance_id: str) -> None:
        self._set(instance_id, "terminated")

    def instances(self, job_id: int | None = None) -> list[Instance]:
        return [i for i in self.states.values() if job_id in (None, i.job_id)]


def build(url: str, jobs: int, launcher: MemoryLauncher) -> None:
    """A store of `jobs` jobs: even ids running, odd ones finished."""
    from costsched.service.prices import import_prices
    from costsched.store import PriceStore

    store = PriceStore(url)
    import_prices(store, [ROOT / "examples" / "demo" / "prices-before.csv"])
    start = NOW - timedelta(hours=6)
    for n in range(jobs):
        spec = {**SPEC, "name": f"scale-{n}"}
        stored = {"spec": spec, "source": "bench", "launcher": launcher.name}
        job_id = store.jobs.create(spec["name"], stored, 4000, at=start,
                                   policy="dynamic-aware",
                                   checkpoint_location=f"/tmp/costsched-bench-scale/{n}")
        zone = ZONES[n % len(ZONES)]
        key = ("aws", "us-east-1", zone, "p3.2xlarge", "spot", "linux")
        instance = f"m-{job_id}"
        store.jobs.transition(job_id, "running", at=start)
        store.jobs.place(job_id, key, gpu_model="V100", gpu_count=1, at=start,
                         usd_per_hour=0.92, reason="launch", instance=instance)
        store.jobs.record_progress(job_id, 100.0, at=start + timedelta(hours=1))
        if n % 2:
            store.jobs.end_placement(job_id, start + timedelta(hours=3), instance=instance)
            store.jobs.transition(job_id, "succeeded", at=start + timedelta(hours=3))
            launcher.add(instance, job_id, key, "succeeded")
        else:
            launcher.add(instance, job_id, key, "running")
    store.dispose()


def _commands(url: str, launcher: MemoryLauncher) -> dict:
    def status() -> None:
        from costsched.service import jobs as service
        from costsched.store import PriceStore

        service.status(PriceStore(url), launcher, at=NOW)

    def migrate() -> None:
        from costsched.service import jobs as service
        from costsched.store import PriceStore

        service.migrate(PriceStore(url), launcher, dry_run=True, at=NOW)

    def report() -> None:
        from costsched.report.data import build as report
        from costsched.store import PriceStore

        report(PriceStore(url), now=NOW)

    def daemon() -> None:
        from costsched.config import Config
        from costsched.daemon import Daemon
        from costsched.store import PriceStore

        Daemon(PriceStore(url), Config(), launchers=lambda _: launcher,
               settle_seconds=0).replan(NOW)

    return {"status": status, "migrate --dry-run": migrate, "report": report,
            "daemon pass": daemon}


def _child(fn, out) -> None:  # noqa: ANN001 - a command and a pipe
    start = time.perf_counter()
    try:
        fn()
    except Exception as exc:  # the bench goes on; the row says what failed
        print(f"    failed: {type(exc).__name__}: {exc}", file=sys.stderr)
        out.send((math.nan, math.nan))
        return
    out.send((time.perf_counter() - start, peak_mb()))


def peak_mb() -> float:
    """This process's peak resident memory (VmHWM), in MB; getrusage's where /proc is not."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(fn, cap: float) -> tuple[float, float]:  # noqa: ANN001 - a command
    """(seconds, peak MB) of `fn` in a forked child; (inf, nan) past `cap` seconds."""
    parent, child = mp.Pipe(duplex=False)
    proc = mp.get_context("fork").Process(target=_child, args=(fn, child))
    proc.start()
    if parent.poll(cap):
        result = parent.recv()
        proc.join()
        return result
    proc.kill()
    proc.join()
    return math.inf, math.nan


def time_launch(url: str, jobs: int) -> float:
    from costsched.jobspec import parse
    from costsched.service import jobs as service
    from costsched.service.prices import import_prices
    from costsched.store import PriceStore

    store = PriceStore(url)
    import_prices(store, [ROOT / "examples" / "demo" / "prices-before.csv"])
    specs = [parse({**SPEC, "name": f"launch-{n}"}) for n in range(jobs)]
    start = time.perf_counter()
    service.launch(store, specs, launcher=MemoryLauncher(), at=NOW,
                   checkpoint_root=tempfile.mkdtemp(prefix="costsched-bench-"))
    took = time.perf_counter() - start
    store.dispose()
    return took


def local_run(url: str, jobs: int, workdir: Path) -> tuple[float, float, int]:
    """Launch `jobs` sleeping jobs on the local launcher (real processes); (seconds to
    launch them, seconds of one `status` of them, reconcile included, jobs it shows
    running). Every job is stopped afterwards."""
    from costsched.jobspec import parse
    from costsched.service import jobs as service
    from costsched.service.prices import import_prices
    from costsched.store import PriceStore
    from launchers.local import LocalLauncher

    store = PriceStore(url)
    import_prices(store, [ROOT / "examples" / "demo" / "prices-before.csv"])
    launcher = LocalLauncher(base_dir=workdir / "local", grace_seconds=1)
    spec = {**SPEC, "run": "sleep 600", "constraints": {"clouds": ["aws"]}}
    specs = [parse({**spec, "name": f"local-{n}"}) for n in range(jobs)]
    start = time.perf_counter()
    records = service.launch(store, specs, launcher=launcher,
                             checkpoint_root=str(workdir / "local-checkpoints"))
    launched = time.perf_counter() - start
    try:
        start = time.perf_counter()
        shown = service.status(store, launcher)
        took = time.perf_counter() - start
    finally:
        for record in records:
            try:
                service.stop(store, launcher, record.id)
            except Exception as exc:  # noqa: BLE001 - the bench goes on; it says so
                print(f"    job {record.id} not stopped: {exc}", file=sys.stderr)
        store.dispose()
    return launched, took, sum(s.record.state == "running" for s in shown)


def _urls(kind: str, workdir: Path) -> str:
    if kind == "sqlite":
        return f"sqlite:///{workdir / f'jobs-{uuid.uuid4().hex[:8]}.sqlite'}"
    from sqlalchemy import create_engine, text

    base = os.environ["COSTSCHED_TEST_PG_URL"]
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    with create_engine(base).begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}options=-csearch_path%3D{schema}"


def _exponent(sizes: list[int], values: list[float]) -> str:
    """The growth exponent from the first size of 100 or more (below, fixed costs rule)
    to the largest measured."""
    pairs = [(n, v) for n, v in zip(sizes, values, strict=False) if math.isfinite(v) and v > 0]
    if len([n for n, _ in pairs if n >= 100]) >= 2:
        pairs = [(n, v) for n, v in pairs if n >= 100]
    if len(pairs) < 2:
        return "-"
    (n0, v0), (n1, v1) = pairs[0], pairs[-1]
    return f"{math.log(v1 / v0) / math.log(n1 / n0):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10,100,1000")
    parser.add_argument("--cap", type=float, default=300.0, help="seconds per measurement")
    parser.add_argument("--launch-up-to", type=int, default=1000,
                        help="largest size whose launch is timed")
    parser.add_argument("--backends", default="sqlite,postgresql")
    parser.add_argument("--commands", default="",
                        help="only these commands, comma-separated (default: all four)")
    parser.add_argument("--local-jobs", type=int, default=100,
                        help="jobs launched on the local launcher for one status (0: none)")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    backends = [b for b in args.backends.split(",")
                if b == "sqlite" or os.environ.get("COSTSCHED_TEST_PG_URL")]
    workdir = Path(tempfile.mkdtemp(prefix="costsched-bench-scale-"))
    # Imported once before the children fork: their times are the commands' work.
    import costsched.daemon  # noqa: F401
    import costsched.report.data  # noqa: F401
    import costsched.service.jobs  # noqa: F401
    for backend in backends:
        print(f"\n== {backend}: seconds (peak MB) per command; growth exponent "
              f"{next((n for n in sizes if n >= 100), sizes[0])} -> {sizes[-1]} jobs")
        rows: dict[str, list[tuple[float, float]]] = {}
        for size in sizes:
            url = _urls(backend, workdir)
            launcher = MemoryLauncher()
            t0 = time.perf_counter()
            build(url, size, launcher)
            print(f"  built {size} jobs in {time.perf_counter() - t0:.1f} s", flush=True)
            chosen = [c for c in args.commands.split(",") if c]
            for name, fn in _commands(url, launcher).items():
                if chosen and name not in chosen:
                    continue
                rows.setdefault(name, []).append(measure(fn, args.cap))
                secs, mb = rows[name][-1]
                print(f"    {name:<18} {secs:8.2f} s {mb:7.0f} MB", flush=True)
            if size <= args.launch_up_to:
                took = time_launch(_urls(backend, workdir), size)
                rows.setdefault("launch N jobs", []).append((took, math.nan))
                print(f"    {'launch N jobs':<18} {took:8.2f} s", flush=True)
        header = f"  {'command':<18}" + "".join(f"{n:>16}" for n in sizes) + "  exponent"
        print(header)
        for name, values in rows.items():
            cells = []
            for secs, mb in values:
                shown = f"> {args.cap:g} s" if math.isinf(secs) else f"{secs:.2f} s"
                if math.isfinite(mb):
                    shown += f" {mb:.0f}M"
                cells.append(f"{shown:>16}")
            cells += [f"{'-':>16}"] * (len(sizes) - len(values))
            secs = [v[0] for v in values]
            print(f"  {name:<18}" + "".join(cells) + f"  {_exponent(sizes, secs)}")
    if args.local_jobs:
        launched, took, running = local_run(_urls("sqlite", workdir), args.local_jobs, workdir)
        print(f"\n== local launcher, SQLite: {args.local_jobs} jobs launched in "
              f"{launched:.1f} s; status of them (reconcile included) {took:.2f} s, "
              f"{running} running")


if __name__ == "__main__":
    main()

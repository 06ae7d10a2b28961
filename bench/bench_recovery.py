"""Recovery benchmark: how long a preempted job waits before it runs again, with the
daemon running (`costsched daemon`, a real process) and its watcher on the default interval.

K jobs (examples/train.py) run on the local launcher; N times, one of them is preempted
without notice (`python -m launchers.local preempt`, a SIGKILL of its instance) at a random
moment, and the benchmark polls the store until the job runs again on a new instance.
Each preemption's time splits into detection (preemption -> the daemon's recovery move is
stored) and relaunch (the move stored -> the job running again). Prints p50/p95 of each
and the ratio of the total's p95 to the 60 s target; asserts nothing.

    .venv/bin/python bench/bench_recovery.py [--preemptions 8] [--jobs 2]
        [--watch-seconds 30]
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from costsched.service import jobs as service
from costsched.store import PriceStore
from launchers.local import LocalLauncher

ROOT = Path(__file__).resolve().parents[1]
TRAIN = ROOT / "examples" / "train.py"
TARGET_P95 = 60.0
ZONES = {"us-east-1a": 1.0, "us-east-1b": 1.2, "us-east-1c": 1.4}
NEVER = "0 0 1 1 *"  # the scheduled tasks stay out of the measurement


def prices(at: datetime) -> pd.DataFrame:
    return pd.DataFrame([dict(cloud="aws", region="us-east-1", zone=z, instance_type="p3.2xlarge",
                              market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8,
                              memory_gb=61.0, usd_per_hour=p, effective_at=at, source="bench")
                         for z, p in ZONES.items()])


def spec(where: Path, name: str) -> Path:
    path = where / f"{name}.yaml"
    path.write_text(yaml.safe_dump({
        "name": name, "throughputs": {"V100": 1.0}, "steps": 10_000_000,
        "run": f"{sys.executable} {TRAIN} --steps 10000000 --step-seconds 0.02 "
               "--checkpoint-every 5",
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
        "checkpoint": {"interval_minutes": 30, "size_gb": 1.0,
                       "location": str(where / "checkpoints")}}))
    return path


def open_instance(store: PriceStore, job_id: int) -> str:
    placements = store.jobs.placements(job_id)
    open_ = placements[placements["end_at"].isna()]["instance"]
    return "" if open_.empty else str(open_.iloc[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preemptions", type=int, default=8)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--watch-seconds", type=float, default=None,
                        help="default: the config's default (30 s)")
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        db = str(where / "store.sqlite")
        instances = where / "instances"
        store = PriceStore(db)
        store.ingest(prices(datetime.now(timezone.utc) - timedelta(hours=1)))
        launcher = LocalLauncher(instances, grace_seconds=5)
        jobs = [service.launch(store, spec(where, f"job{i}"), launcher=launcher,
                               wait_seconds=20)[0].id for i in range(args.jobs)]
        config = where / "config.toml"
        watch = "" if args.watch_seconds is None else \
            f"[daemon]\nwatch_seconds = {args.watch_seconds}\n"
        config.write_text(f'db = "{db}"\n[schedule]\ncollect = "{NEVER}"\n'
                          f'replan = "{NEVER}"\ncatalog = "{NEVER}"\n{watch}')
        env = {**os.environ, "COSTSCHED_INSTANCES": str(instances)}
        cli = str(Path(sys.executable).parent / "costsched")
        log = where / "daemon.log"
        with log.open("wb") as out:
            daemon = subprocess.Popen([cli, "daemon", "--config", str(config)], env=env,
                                      cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
        detect, relaunch = [], []
        interval = args.watch_seconds or 30.0
        try:
            while "event=started" not in log.read_text():  # up, and watching
                if daemon.poll() is not None:
                    raise SystemExit(f"the daemon exited: {log.read_text()[-2000:]}")
                time.sleep(0.1)
            for n in range(args.preemptions):
                # A preemption comes at any moment of the watch interval.
                time.sleep(rng.uniform(0, interval))
                job_id = jobs[n % len(jobs)]
                first = open_instance(store, job_id)
                moves_before = len(store.moves.of_job(job_id))
                t0 = time.monotonic()
                subprocess.run([sys.executable, "-m", "launchers.local", "preempt",
                                str(job_id), "--base-dir", str(instances)], check=True,
                               cwd=ROOT, env=env, capture_output=True)
                t_move = None
                while True:
                    if daemon.poll() is not None:
                        raise SystemExit(f"the daemon exited ({daemon.returncode})")
                    if t_move is None and len(store.moves.of_job(job_id)) > moves_before:
                        t_move = time.monotonic()
                    now = open_instance(store, job_id)
                    if (now not in ("", first) and store.jobs.get(job_id).state == "running"
                            and launcher.status(now).state == "running"):
                        break
                    if time.monotonic() - t0 > 600:
                        raise SystemExit(f"job {job_id} not recovered in 600 s")
                    time.sleep(0.1)
                t1 = time.monotonic()
                t_move = t_move or t1
                detect.append(t_move - t0)
                relaunch.append(t1 - t_move)
                print(f"preemption {n + 1}: job {job_id}: detected {detect[-1]:5.1f} s, "
                      f"running again {relaunch[-1]:4.1f} s later", flush=True)
        finally:
            daemon.terminate()
            daemon.wait(timeout=60)
            for instance in launcher.instances():
                launcher.terminate(instance.id)
            store.dispose()
    total = np.add(detect, relaunch)
    pct = lambda xs, q: float(np.percentile(xs, q))  # noqa: E731
    print(f"\n{args.preemptions} preemptions of {args.jobs} local jobs, watch interval "
          f"{interval:g} s")
    print(f"{'':22}{'p50 s':>8}{'p95 s':>8}")
    for label, xs in (("detection", detect), ("relaunch", relaunch),
                      ("preempted -> running", total)):
        print(f"{label:22}{pct(xs, 50):8.1f}{pct(xs, 95):8.1f}")
    print(f"p95 / target ({TARGET_P95:g} s): {pct(total, 95) / TARGET_P95:.2f}")


if __name__ == "__main__":
    main()

"""Local launcher benchmark: the state of many instances at once.

For N instance folders (half running: a real `sleep` process group each; half ended:
succeeded, failed, stopped, terminated), written in the launcher's record format without
running real jobs, it times, side by side in one run:

- `status` of every instance one by one, against `statuses` of all at once (cold: no index
  yet; warm: the ended ones answered from the index);
- `instances()` (every folder), and `instances(job)` once per job, which is what launching
  N jobs asks (the service looks for the job's instances before each launch);

then the launch of 10, 100, ... jobs whose command is `true` through real agents (the loop
of launches: its time, and the CPU time of the launching process, which the agents starting
beside it on the same cores do not count in; then the time until every job has ended).

Prints times and ratios; asserts nothing. Runs unchanged against an older launcher (one
without `statuses` falls back to asking one by one), to compare before and after:

    .venv/bin/python bench/bench_launchers.py [--sizes 100,1000] [--launches 10,100]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import launchers.local as local
import launchers.local_index as local_index
import launchers.local_records as local_records
from costsched.model import Offering
from launchers.base import LaunchSpec
from launchers.json_files import write_json
from launchers.local import LocalLauncher
from launchers.procfs import proc_stat
from launchers.status_file import write_status

OFFERING = Offering("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "V100", 1)
ENDINGS = ({"state": "succeeded", "exit_code": 0, "step": 100},
           {"state": "failed", "exit_code": 1, "detail": "exit status 1"},
           {"state": "stopped", "exit_code": 0}, None)  # None: terminated by costsched


def spec(job_id: int, attempt: str, command: str = "true", store: str = "/nowhere"
         ) -> LaunchSpec:
    return LaunchSpec(job_id=job_id, job_name=f"bench-{job_id}", command=command,
                      offering=OFFERING, checkpoint_uri=store, attempt=attempt)


def make_folders(base: Path, n: int) -> tuple[list[str], list[subprocess.Popen]]:
    """N instance folders, one per job; the odd ones running a process group of their own."""
    base.mkdir(parents=True)
    ids, running = [], []
    for job_id in range(n):
        instance_id = f"{job_id}-launch"
        folder = base / instance_id
        folder.mkdir()
        record = local_records.new_record(instance_id, spec(job_id, "launch"))
        if job_id % 2:
            child = subprocess.Popen(["sleep", "3600"], start_new_session=True)
            running.append(child)
            stat = proc_stat(child.pid)
            record.update(pid=child.pid, start_time=stat.start_time if stat else None)
            status = {"state": "running", "step": job_id}
        else:
            record.update(pid=1 << 22, start_time=0)  # an agent long gone
            status = ENDINGS[(job_id // 2) % len(ENDINGS)]
        write_json(folder / local_records.INSTANCE, record)
        if status is None:
            (folder / local_records.TERMINATED).touch()
        else:
            write_status(folder, status)
        ids.append(instance_id)
    if hasattr(local, "_build_jobs"):  # each job's entries, as launches write them
        local_index.build_jobs(base)
    return ids, running


def timed(work: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    result = work()
    return time.perf_counter() - start, result


def line(what: str, seconds: float, baseline: float | None = None) -> None:
    ratio = f"  ({baseline / seconds:6.1f}x faster)" if baseline else ""
    print(f"  {what:<44} {seconds * 1000:10.1f} ms{ratio}")


def bench_states(n: int) -> None:
    with tempfile.TemporaryDirectory() as temp:
        base = Path(temp) / "instances"
        ids, running = make_folders(base, n)
        try:
            time.sleep(2.1)  # past the settling time: ended folders may go to the index
            launcher = LocalLauncher(base)
            print(f"\n{n} instances ({len(running)} running, {n - len(running)} ended)")
            one, by_one = timed(lambda: {i: launcher.status(i) for i in ids})
            line("status, one by one", one)
            cold, at_once = timed(lambda: launcher.statuses(ids))
            line("statuses of all (cold: no index yet)", cold, one)
            warm, again = timed(lambda: LocalLauncher(base).statuses(ids))
            line("statuses of all (warm: a new launcher)", warm, one)
            assert at_once == by_one == again, "statuses differ from status one by one"
            every, listed = timed(lambda: LocalLauncher(base).instances())
            line("instances()", every, one)
            assert len(listed) == n
            per_job, _ = timed(lambda: [launcher.instances(j) for j in range(n)])
            line("instances(job) for each job (a launch's look)", per_job)
            line("  per call", per_job / n)
        finally:
            for child in running:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(child.pid, signal.SIGKILL)
                child.wait()


def bench_launch(n: int) -> float:
    """Seconds to launch `n` jobs running `true` (each after looking for the job's
    instances, as the service does), then until all have ended."""
    with tempfile.TemporaryDirectory() as temp:
        launcher = LocalLauncher(Path(temp) / "instances", poll_seconds=0.5)
        store = str(Path(temp) / "store")
        start, cpu = time.perf_counter(), time.process_time()
        ids = []
        for job_id in range(n):
            launcher.instances(job_id)
            ids.append(launcher.launch(spec(job_id, "launch", "true", store)).id)
        launched = time.perf_counter() - start
        cpu = time.process_time() - cpu  # this process's: the agents' start-up is not in it
        deadline = time.monotonic() + 600
        while True:
            states = launcher.statuses(ids) if hasattr(launcher, "statuses") else {
                i: launcher.status(i) for i in ids}
            if all(not s.live for s in states.values()) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        ended = time.perf_counter() - start
        done = sum(s.state == "succeeded" for s in states.values())
        print(f"  {n:>5} jobs: launched in {launched:7.2f} s ({launched / n * 1000:6.1f} ms "
              f"a job, {cpu / n * 1000:5.1f} ms CPU of the launching process); all ended "
              f"after {ended:7.2f} s; {done} succeeded")
        return cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,1000")
    parser.add_argument("--launches", default="10,100")
    args = parser.parse_args()
    print(f"launchers.local from {Path(local.__file__).resolve().parent.parent}")
    for n in (int(s) for s in args.sizes.split(",") if s):
        bench_states(n)
    sizes = [int(s) for s in args.launches.split(",") if s]
    if sizes:
        print("\nlaunching local jobs (`true`) through real agents")
        first = None
        for n in sizes:
            seconds = bench_launch(n)
            if first is None:
                first = (n, seconds)
            else:
                grew = (seconds / first[1]) / (n / first[0])
                print(f"         launching CPU per job vs {first[0]} jobs: {grew:.2f}x")
    sys.stdout.flush()


if __name__ == "__main__":
    main()

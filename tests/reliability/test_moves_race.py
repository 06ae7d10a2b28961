"""Several costsched processes acting on one job at the same moment, on SQLite and
PostgreSQL: N `costsched migrate` of one running job started together start one move
(the job never has more than two live instances, and ends with one), so do daemon re-plan
passes racing `costsched migrate`, and N `costsched launch` of one name start one job.
Real processes, a real store, real local instances."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched.service import jobs as service
from costsched.store import PriceStore
from costsched.store.jobs import JobRecord
from launchers.local import LocalLauncher
from tests.costsched.service.test_jobs import (
    TRAIN,
    LiveCounter,
    set_prices,
    wait_for,
    write_spec,
)
from tests.reliability.conftest import _CHILD, BACKENDS, ROOT, together

PROCESSES = 4
# A job that runs for hours in the model's eyes and for minutes in fact: its steps never
# run out while the processes decide (a job at its last step has nothing left to move).
MOVER_STEPS = 1_000_000
MOVER = (f"{sys.executable} {TRAIN} --steps {MOVER_STEPS} --step-seconds 0.01 "
         "--checkpoint-every 0.2")


def spec_in(tmp_path: Path, name: str, run: str, steps: float | None = None) -> Path:
    path = write_spec(tmp_path, name, run=run)
    spec = yaml.safe_load(path.read_text())
    spec["checkpoint"]["location"] = str(tmp_path / "checkpoints")
    if steps is not None:
        spec["steps"] = steps
    path.write_text(yaml.safe_dump(spec))
    return path


@pytest.fixture()
def instances(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LocalLauncher:
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=5)
    yield launcher
    for instance in launcher.instances():
        launcher.terminate(instance.id)


def mover_running(store: PriceStore, tmp_path: Path, instances: LocalLauncher) -> JobRecord:
    """The mover job running in zone a, then prices that make a move to zone b pay."""
    set_prices(store, {"us-east-1a": 1.0, "us-east-1b": 2.0},
               datetime.now(timezone.utc) - timedelta(hours=1))
    [job] = service.launch(store, spec_in(tmp_path, "mover", MOVER, MOVER_STEPS),
                           launcher=instances, wait_seconds=20)
    assert store.jobs.get(job.id).state == "running"
    set_prices(store, {"us-east-1a": 3.0, "us-east-1b": 0.5}, datetime.now(timezone.utc))
    return job


@pytest.mark.parametrize("backend", BACKENDS)
def test_migrates_started_together_start_one_move(backend: str, fresh_url, tmp_path: Path,
                                                  instances: LocalLauncher) -> None:
    url = fresh_url(backend)
    store = PriceStore(url)
    job = mover_running(store, tmp_path, instances)
    counter = LiveCounter(instances, job.id)
    counter.start()
    done = together(tmp_path, [["migrate", str(job.id), "--force", "--wait", "30",
                                "--db", url]] * PROCESSES)
    service.settle(store, instances, 30)
    counter.stopped = True
    counter.join()
    migrations = [m for m in store.moves.of_job(job.id) if m.kind == "migration"]
    print(f"\n{backend}: {PROCESSES} migrate processes, {len(migrations)} move(s) started, "
          f"at most {counter.most} live instance(s) seen; exit codes "
          f"{[d.returncode for d in done]}")
    assert len(migrations) == 1 and migrations[0].state == "done"
    assert counter.most <= 2
    assert len([i for i in instances.instances(job.id) if i.live]) == 1
    placements = store.jobs.placements(job.id)
    assert placements["end_at"].isna().sum() == 1  # billed once
    assert sum(d.returncode == 0 for d in done) >= 1
    for d in done:  # the others said why, in one line, or found nothing left to do
        assert d.returncode == 0 or "under way" in d.stderr + d.stdout or \
            "no longer placed" in d.stderr + d.stdout, d.stderr
    store.dispose()


@pytest.mark.parametrize("backend", BACKENDS)
def test_launches_of_one_name_started_together_start_one_job(backend: str, fresh_url,
                                                             tmp_path: Path,
                                                             instances: LocalLauncher) -> None:
    url = fresh_url(backend)
    store = PriceStore(url)
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    spec = spec_in(tmp_path, "twin", "sleep 60")
    done = together(tmp_path, [["launch", str(spec), "--wait", "10", "--db", url]]
                    * PROCESSES)
    jobs = store.jobs.find("twin")
    live = [j for j in jobs if not j.final]
    print(f"\n{backend}: {PROCESSES} launch processes, {len(jobs)} job(s) stored, "
          f"{len(live)} live; exit codes {[d.returncode for d in done]}")
    assert len(jobs) == 1 and len(live) == 1
    assert sum(d.returncode == 0 for d in done) == 1
    refused = [d for d in done if d.returncode != 0]
    assert all("job name 'twin'" in d.stderr + d.stdout for d in refused)
    assert len(instances.instances(live[0].id)) == 1
    wait_for(lambda: store.jobs.get(live[0].id).state == "running", seconds=30)
    store.dispose()


# A daemon's re-plan pass in a process of its own (the replan task only: no price is
# collected), released with the others: argv ready, go, store URL, instances folder.
_DAEMON = """
import sys, time
from pathlib import Path
from costsched.config import Config
from costsched.daemon import Daemon
from costsched.store import PriceStore
from launchers.local import LocalLauncher
ready, go, url, folder = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], sys.argv[4]
launcher = LocalLauncher(Path(folder), grace_seconds=5)
daemon = Daemon(PriceStore(url), Config(), tasks=("replan",), launchers=lambda _: launcher,
                settle_seconds=30, watch_seconds=0)
ready.touch()
while not go.exists():
    time.sleep(0.005)
run = daemon.run_task("replan")
print(run.status, run.detail)
"""


def released_together(workdir: Path, children: list[list[str]]) -> list[str]:
    """Run each child (a Python script and its arguments after ready and go) in a process
    of its own, all released at once; what each printed."""
    tag = uuid.uuid4().hex[:8]
    go = workdir / f"go-{tag}"
    ready = [workdir / f"ready-{tag}-{i}" for i in range(len(children))]
    procs = [subprocess.Popen([sys.executable, "-c", script, str(r), str(go), *args],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
             for r, (script, *args) in zip(ready, children, strict=True)]
    deadline = time.monotonic() + 120
    while not all(r.exists() for r in ready) and time.monotonic() < deadline:
        if any(p.poll() is not None for p in procs):
            break
        time.sleep(0.01)
    go.touch()
    return [p.communicate(timeout=300)[0] for p in procs]


@pytest.mark.parametrize("backend", BACKENDS)
def test_daemon_passes_racing_migrate_start_one_move(backend: str, fresh_url, tmp_path: Path,
                                                     instances: LocalLauncher) -> None:
    url = fresh_url(backend)
    store = PriceStore(url)
    job = mover_running(store, tmp_path, instances)
    counter = LiveCounter(instances, job.id)
    counter.start()
    folder = str(tmp_path / "instances")
    migrate = [_CHILD, "migrate", str(job.id), "--force", "--wait", "30", "--db", url]
    daemon = [_DAEMON, url, folder]
    printed = released_together(tmp_path, [daemon, migrate, daemon, migrate])
    service.settle(store, instances, 30)
    counter.stopped = True
    counter.join()
    migrations = [m for m in store.moves.of_job(job.id) if m.kind == "migration"]
    print(f"\n{backend}: 2 daemon passes and 2 migrate processes, {len(migrations)} move(s) "
          f"started, at most {counter.most} live instance(s) seen")
    assert len(migrations) == 1 and migrations[0].state == "done", printed
    assert counter.most <= 2
    assert len([i for i in instances.instances(job.id) if i.live]) == 1
    assert store.jobs.placements(job.id)["end_at"].isna().sum() == 1  # billed once
    assert sum("moving" in p or "1 migration(s) started" in p for p in printed) == 1, printed
    store.dispose()

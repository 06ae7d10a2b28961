"""Several costsched processes acting on one job at the same moment, on SQLite and
PostgreSQL: N `costsched migrate` of one running job started together start one move
(the job never has more than two live instances, and ends with one). Daemon re-plan passes
racing `costsched migrate` are in test_daemon_race.py, N `costsched launch` of one name in
test_launch_race.py (a file each: the suite's workers share them out). Real processes, a
real store, real local instances."""

from __future__ import annotations

import sys
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
    write_spec,
)
from tests.real_jobs import SETTLE
from tests.reliability.conftest import BACKENDS, together

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
                           launcher=instances, wait_seconds=SETTLE)
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
    service.settle(store, instances, SETTLE)
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

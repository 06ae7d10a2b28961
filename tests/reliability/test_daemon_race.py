"""Daemon re-plan passes racing `costsched migrate` of one running job, on SQLite and
PostgreSQL, start one move: the job never has more than two live instances, and ends with
one, billed once. Real processes, a real store, real local instances."""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from costsched.service import jobs as service
from costsched.store import PriceStore
from launchers.local import LocalLauncher
from tests.costsched.service.test_jobs import LiveCounter
from tests.real_jobs import SETTLE
from tests.reliability.conftest import _CHILD, BACKENDS, ROOT
from tests.reliability.test_moves_race import (  # noqa: F401 - instances: the fixture
    instances,
    mover_running,
)

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
                                                     instances: LocalLauncher) -> None:  # noqa: F811
    url = fresh_url(backend)
    store = PriceStore(url)
    job = mover_running(store, tmp_path, instances)
    counter = LiveCounter(instances, job.id)
    counter.start()
    folder = str(tmp_path / "instances")
    migrate = [_CHILD, "migrate", str(job.id), "--force", "--wait", "30", "--db", url]
    daemon = [_DAEMON, url, folder]
    printed = released_together(tmp_path, [daemon, migrate, daemon, migrate])
    service.settle(store, instances, SETTLE)
    counter.stopped = True
    counter.join()
    migrations = [m for m in store.moves.of_job(job.id) if m.kind == "migration"]
    print(f"\n{backend}: 2 daemon passes and 2 migrate processes, {len(migrations)} move(s) "
          f"started, at most {counter.most} live instance(s) seen")
    assert len(migrations) == 1 and migrations[0].state == "done", printed
    assert counter.most <= 2
    assert len([i for i in instances.instances(job.id) if i.live]) == 1
    assert store.jobs.placements(job.id)["end_at"].isna().sum() == 1  # billed once
    assert sum("moving" in p or "1 migration started" in p for p in printed) == 1, printed
    store.dispose()

"""A re-plan pass starts its moves together, and keeps every guarantee of one move at a
time, on SQLite and PostgreSQL: two passes racing on one store start each move once (each
job under its own lease), and a pass killed after its moves were stored, as it launches,
leaves moves the next pass carries on, each instance launched once and known to the
store."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from costsched.config import Config
from costsched.daemon import Daemon
from costsched.service import jobs as service
from costsched.service.prices import import_prices
from costsched.store import PriceStore
from tests.costsched.service.test_migrate_batched import NOW, FileInstances, running_jobs
from tests.reliability.conftest import BACKENDS, ROOT

JOBS = 45


def built(url: str, tmp_path: Path) -> tuple[PriceStore, FileInstances, list[int]]:
    """JOBS running jobs, and the ids of those a pass moves."""
    store = PriceStore(url)
    import_prices(store, [ROOT / "examples" / "demo" / "prices-before.csv"], partial=False)
    launcher = FileInstances(tmp_path / "instances.json")
    running_jobs(store, launcher, tmp_path / "ckpt", jobs=JOBS)
    movers = [a.job_id for a in service.migrate(store, launcher, dry_run=True, at=NOW)
              if a.decision.moves]
    assert 0 < len(movers) < JOBS
    return store, launcher, movers


def assert_moved_once(store: PriceStore, launcher: FileInstances, movers: list[int]) -> None:
    """Each mover moved once, to one instance launched once; every live instance is the
    open placement of its job (none unknown to the store), one a job."""
    for job_id in store.jobs.ids():
        moves = store.moves.of_job(job_id)
        assert len(moves) == (job_id in movers), (job_id, moves)
        assert all(m.state == "done" for m in moves)
    assert launcher.launches and set(launcher.launches.values()) == {1}
    live = {i.id: i.job_id for i in launcher.instances() if i.live}
    placements = store.jobs.placements()
    placed = placements[placements["end_at"].isna()]
    assert sorted(live) == sorted(placed["instance"])
    assert sorted(live.values()) == sorted(store.jobs.ids())


@pytest.mark.parametrize("backend", BACKENDS)
def test_two_passes_racing_on_one_store_start_each_move_once(
        backend: str, fresh_url, tmp_path: Path) -> None:
    url = fresh_url(backend)
    _, launcher, movers = built(url, tmp_path)
    start = threading.Barrier(2)
    found: dict[int, list] = {}

    def one_pass(n: int) -> None:
        store = PriceStore(url)  # a costsched of its own, on the same store
        start.wait()
        found[n] = service.migrate(store, launcher, at=NOW)

    passes = [threading.Thread(target=one_pass, args=(n,)) for n in range(2)]
    for thread in passes:
        thread.start()
    for thread in passes:
        thread.join(120)
    started = [a.job_id for n in found for a in found[n] if a.started is not None]
    assert sorted(started) == sorted(movers)  # each move started by one of them
    assert_moved_once(PriceStore(url), launcher, movers)


# A pass in a process of its own, killed (SIGKILL) as it returns from its third launch:
# the moves are stored, three instances run, what their steps wrote after is not.
KILLED_PASS = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    sys.path.insert(0, sys.argv[3])
    from costsched.service import jobs as service
    from costsched.store import PriceStore
    from tests.costsched.service.test_migrate_batched import NOW, FileInstances

    launcher = FileInstances(Path(sys.argv[2]))
    launch = launcher.launch

    def launch_then_die(spec):
        instance = launch(spec)
        if sum(launcher.launches.values()) == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        return instance

    launcher.launch = launch_then_die
    service.migrate(PriceStore(sys.argv[1]), launcher, at=NOW)
""")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_pass_killed_as_it_launches_leaves_moves_the_next_pass_finishes_once(
        backend: str, fresh_url, tmp_path: Path) -> None:
    url = fresh_url(backend)
    store, _, movers = built(url, tmp_path)
    killed = subprocess.run([sys.executable, "-c", KILLED_PASS, url,
                             str(tmp_path / "instances.json"), str(ROOT)],
                            capture_output=True, text=True, timeout=300, check=False)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    launcher = FileInstances(tmp_path / "instances.json")
    assert sum(launcher.launches.values()) == 3
    unfinished = store.moves.unfinished()
    assert sorted(m.job_id for m in unfinished) == sorted(movers)  # stored before launching
    # Three run that the store has not recorded yet: the next pass adopts them.
    assert not any(m.target_instance for m in unfinished)
    Daemon(store, Config(), launchers=lambda _: launcher, settle_seconds=0).replan(NOW)
    assert_moved_once(store, launcher, movers)

"""A `launch` killed (SIGKILL) at real points of its run, in a process of its own: right
after the job row is written, after the instance record is written but before the agent
starts, and after the agent starts but before its pid is recorded; and a recovery killed
between closing the lost instance's placement and storing its move. The next `status`
pass carries each on: the job runs, with one live instance and one open placement, and
nothing stays `pending` or `launching`."""

from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest

from costsched.service import jobs as service
from costsched.store import PriceStore
from launchers.local import LocalLauncher
from tests.costsched.service.test_jobs import set_prices, wait_for, write_spec
from tests.real_jobs import SETTLE
from tests.reliability.conftest import ROOT

# A child that launches the spec and kills itself at `point`.
_KILLED = """
import os, signal, subprocess, sys
from costsched.service import jobs as service
from costsched.service.jobs import launches as launch_module
from costsched.store import PriceStore
import launchers.local as local
from launchers.local import LocalLauncher

point, db, base, spec, root = sys.argv[1:6]

def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

if point == "job-row":  # the job is stored; its launch move is not
    launch_module._start_launch = die
elif point == "instance-record":  # instance.json is written; no agent is started
    local.LocalLauncher._start = die
elif point == "agent-pid":  # the agent runs; its pid is not recorded
    real = subprocess.Popen
    def started(*args, **kwargs):
        real(*args, **kwargs)
        die()
    local.subprocess.Popen = started
service.launch(PriceStore(db), [spec], launcher=LocalLauncher(base), checkpoint_root=root)
print("not killed")
"""

POINTS = ["job-row", "instance-record", "agent-pid"]


@pytest.mark.parametrize("point", POINTS)
def test_a_launch_killed_mid_way_is_carried_on_by_the_next_status(point: str,
                                                                  tmp_path: Path) -> None:
    db = str(tmp_path / "store.sqlite")
    store = PriceStore(db)
    set_prices(store, {"us-east-1a": 1.0, "us-east-1b": 2.0},
               datetime.now(timezone.utc) - timedelta(hours=1))
    spec = write_spec(tmp_path, "crashy", run="sleep 60")
    child = subprocess.run([sys.executable, "-c", _KILLED, point, db,
                            str(tmp_path / "instances"), str(spec),
                            str(tmp_path / "checkpoints")],
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert child.returncode == -9, child.stderr  # killed where it was meant to be
    [job] = store.jobs.find("crashy")
    assert job.state in ("pending", "launching")
    # A launcher that gives an agent-less instance 2 s to start (60 s by default).
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=5, start_grace_seconds=2)
    try:
        def running() -> bool:
            service.status(store, launcher, job.id)
            return store.jobs.get(job.id).state == "running"

        wait_for(running, seconds=SETTLE, poll=0.3)
        live = [i for i in launcher.instances(job.id) if i.live]
        placements = store.jobs.placements(job.id)
        open_ = placements[placements["end_at"].isna()]
        assert len(live) == 1 and live[0].state == "running"
        assert open_["instance"].tolist() == [live[0].id]  # billed once, for what runs
        assert all(m.ended for m in store.moves.of_job(job.id))
        assert store.leases.held() == []
        if point == "agent-pid":  # the agent that was started is adopted, not doubled
            assert len(launcher.instances(job.id)) == 1
        if point == "instance-record":  # that instance never ran: ended, not billed
            [dead] = [i for i in launcher.instances(job.id) if not i.live]
            assert dead.state == "terminated"
            assert placements["instance"].iloc[0] == dead.id
            assert not pd.isna(placements["end_at"].iloc[0])
            assert store.jobs.events(job.id)["detail"].str.contains("never started").any()
    finally:
        for instance in launcher.instances():
            launcher.terminate(instance.id)
        store.dispose()


def test_a_job_that_cannot_be_started_fails_without_an_open_placement(tmp_path: Path) -> None:
    """The process start raises (here: the interpreter is missing): the job fails in one
    line, nothing runs, nothing is billed; it does not stay `launching`."""
    store = PriceStore(str(tmp_path / "store.sqlite"))
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    launcher = LocalLauncher(tmp_path / "instances", python=str(tmp_path / "no-python"))
    [job] = service.launch(store, write_spec(tmp_path, "nostart", run="sleep 1"),
                           launcher=launcher, checkpoint_root=str(tmp_path / "checkpoints"))
    assert job.state == "failed"
    events = store.jobs.events(job.id)
    assert "cannot start the job" in events["detail"].iloc[-1]
    assert store.jobs.placements(job.id)["end_at"].notna().all()
    assert [i.state for i in launcher.instances(job.id)] in ([], ["failed"], ["terminated"])
    assert [m.state for m in store.moves.of_job(job.id)] == ["failed"]
    store.dispose()


# A child that reconciles after a preemption and is killed between closing the job's
# placement and storing its recovery move.
_RECOVERY_KILLED = """
import os, signal, sys
from costsched.service import jobs as service
from costsched.service.jobs import launches as launch_module
from costsched.store import PriceStore
from costsched.store.moves import MoveStore
from launchers.local import LocalLauncher

db, base = sys.argv[1:3]
real = MoveStore.create
def create(self, job_id, kind, *args, **kwargs):
    if kind == "recovery":
        os.kill(os.getpid(), signal.SIGKILL)
    return real(self, job_id, kind, *args, **kwargs)
MoveStore.create = create
service.reconcile(PriceStore(db), LocalLauncher(base))
print("not killed")
"""


def test_a_recovery_killed_before_its_move_is_carried_on(tmp_path: Path) -> None:
    db = str(tmp_path / "store.sqlite")
    store = PriceStore(db)
    set_prices(store, {"us-east-1a": 1.0, "us-east-1b": 2.0},
               datetime.now(timezone.utc) - timedelta(hours=1))
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=5)
    try:
        [job] = service.launch(store, write_spec(tmp_path, "again", run="sleep 60"),
                               launcher=launcher, wait_seconds=20,
                               checkpoint_root=str(tmp_path / "checkpoints"))
        first = str(store.jobs.placements(job.id)["instance"].iloc[-1])
        launcher.preempt(first)
        child = subprocess.run([sys.executable, "-c", _RECOVERY_KILLED, db,
                                str(tmp_path / "instances")],
                               cwd=ROOT, capture_output=True, text=True, timeout=120)
        assert child.returncode == -9, child.stderr
        # Killed there: recovering, no open placement (billing stopped), no move.
        assert store.jobs.get(job.id).state == "recovering"
        assert store.jobs.placements(job.id)["end_at"].notna().all()
        assert [m.kind for m in store.moves.of_job(job.id)] == ["launch"]
        service.status(store, launcher, job.id)
        service.settle(store, launcher, SETTLE)
        assert store.jobs.get(job.id).state == "running"
        assert [m.kind for m in store.moves.of_job(job.id)] == ["launch", "recovery"]
        placements = store.jobs.placements(job.id)
        open_ = placements[placements["end_at"].isna()]["instance"].tolist()
        assert len(open_) == 1 and open_[0] != first
        assert launcher.status(open_[0]).state == "running"
    finally:
        for instance in launcher.instances():
            launcher.terminate(instance.id)
        store.dispose()

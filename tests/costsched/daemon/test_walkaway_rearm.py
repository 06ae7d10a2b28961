"""Walk away after the supervisor died: a `status` that finds a job running and no daemon
watching starts a supervisor as the launch did (its line says so), so that a preemption
after it is recovered with nothing else run; `stop` of one job of two and `migrate` arm it
alike. Real processes, as test_walkaway."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from costsched.store.leases import process_gone
from launchers.checkpoints import open_store
from tests.costsched.daemon.conftest import World
from tests.costsched.daemon.test_walkaway import ARMED, invoke, open_instance
from tests.costsched.service.test_jobs import wait_for
from tests.real_jobs import SETTLE

ARMED_NOW = re.compile(r"Recovery armed: supervisor pid (\d+) watches this store every 1 s; "
                       r"(?:no pass yet|last pass [^;]+); log: (\S+)")


def _killed(world: World, said: str) -> int:
    """The supervisor the output `said` names, once it watched a pass, killed (-9)."""
    pid = int(ARMED.search(said)[1])  # type: ignore[index]
    wait_for(lambda: any(r.pid == pid and r.pass_at is not None
                         for r in world.store.daemons.running(datetime.now(timezone.utc))),
             seconds=SETTLE)
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: process_gone(pid), seconds=SETTLE)
    return pid


def _preempt(world: World, job_id: int) -> str:
    """Job `job_id`'s instance taken away without notice; the instance it ran on."""
    instance = open_instance(world, job_id)
    subprocess.run([sys.executable, "-m", "launchers.local", "preempt", str(job_id),
                    "--base-dir", str(world.launcher.base_dir)], check=True,
                   capture_output=True)
    return instance


def _recovered_from(world: World, job_id: int, lost: str) -> str:
    def placed() -> str:
        now = open_instance(world, job_id)
        running = world.store.jobs.get(job_id).state == "running"
        return now if running and now not in ("", lost) else ""
    return wait_for(placed, seconds=SETTLE, poll=0.1)


def test_status_arms_recovery_again_once_the_supervisor_was_killed(world: World) -> None:
    said = invoke("launch", str(world.trainer()), "--wait", "30")
    [job_id] = world.store.jobs.ids()
    checkpoints = open_store(world.store.jobs.get(job_id).checkpoint_location)
    wait_for(lambda: (newest := checkpoints.newest_verified()) and newest.version >= 2,
             seconds=SETTLE)
    dead = _killed(world, said)
    first = _preempt(world, job_id)

    shown = invoke("status")  # recovers the job, and arms its recovery from now on
    armed = ARMED_NOW.search(shown)
    assert armed, shown
    pid, log = int(armed[1]), Path(armed[2])
    assert pid != dead and not process_gone(pid)
    assert "Recovery not armed" not in shown
    second = _recovered_from(world, job_id, first)

    # Nothing is called from here on: the new supervisor recovers the next preemption.
    wait_for(lambda: any(r.pid == pid and r.pass_at is not None
                         for r in world.store.daemons.running(datetime.now(timezone.utc))),
             seconds=SETTLE)
    _preempt(world, job_id)
    _recovered_from(world, job_id, second)
    wait_for(lambda: "preempted; recovery" in log.read_text(), seconds=SETTLE)
    invoke("stop", str(job_id))


def test_stop_of_one_job_and_migrate_arm_recovery_again(world: World) -> None:
    said = invoke("launch", str(world.sleeper("one")), "--wait", "30")
    invoke("launch", str(world.sleeper("two")), "--wait", "30")
    one, two = world.store.jobs.ids()
    _killed(world, said)

    stopped = invoke("stop", str(one))  # the other job is watched again
    armed = ARMED.search(stopped)
    assert armed, stopped
    pid = int(armed[1])
    _killed(world, stopped)
    assert process_gone(pid)

    moved = invoke("migrate", "--dry-run")
    assert ARMED.search(moved), moved
    assert int(ARMED.search(moved)[1]) != pid  # type: ignore[index]
    invoke("stop", str(two))

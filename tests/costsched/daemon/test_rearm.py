"""Recovery armed again after the supervisor died (`autostart.rearm`, what `status`, `stop`
and `migrate` call): a job runs and no daemon watches, so a supervisor is started as a
launch starts one, said in the launch's line, and it recovers a preemption with nothing
else run; none is started where one watches, nor where daemon.autostart is off.
Real processes, as test_walkaway."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from costsched.config import effective
from costsched.daemon.autostart import rearm
from costsched.store.leases import process_gone
from tests.costsched.daemon.conftest import World
from tests.costsched.daemon.test_walkaway import ARMED, invoke, open_instance
from tests.costsched.service.test_jobs import wait_for
from tests.real_jobs import SETTLE


def _watched(world: World, pid: int) -> None:
    wait_for(lambda: any(r.pid == pid and r.pass_at is not None
                         for r in world.store.daemons.running(datetime.now(timezone.utc))),
             seconds=SETTLE)


def test_a_killed_supervisor_is_replaced_and_its_successor_recovers_the_job(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    said = invoke("launch", str(world.sleeper("walk")), "--wait", "30")
    dead = int(ARMED.search(said)[1])  # type: ignore[index]
    [job_id] = world.store.jobs.ids()
    _watched(world, dead)
    assert rearm(world.store, effective()) is None  # one watches: nothing to do
    os.kill(dead, signal.SIGKILL)
    wait_for(lambda: process_gone(dead), seconds=SETTLE)

    monkeypatch.setenv("COSTSCHED_DAEMON_AUTOSTART", "false")
    assert rearm(world.store, effective()) is None  # off: none started, `status` says so
    assert not [r for r in world.store.daemons.running(datetime.now(timezone.utc))
                if not process_gone(r.pid)]
    monkeypatch.setenv("COSTSCHED_DAEMON_AUTOSTART", "true")

    line = rearm(world.store, effective(), env=world.launcher.environment())
    armed = ARMED.fullmatch(line or "")
    assert armed, line  # the launch's own line
    pid, log = int(armed[1]), Path(armed[2])
    assert pid != dead and not process_gone(pid)
    _watched(world, pid)

    # Taken away without notice; nothing is called from here on.
    first = open_instance(world, job_id)
    subprocess.run([sys.executable, "-m", "launchers.local", "preempt", str(job_id),
                    "--base-dir", str(world.launcher.base_dir)], check=True,
                   capture_output=True)

    def recovered() -> str:
        now = open_instance(world, job_id)
        running = world.store.jobs.get(job_id).state == "running"
        return now if running and now not in ("", first) else ""

    wait_for(recovered, seconds=SETTLE, poll=0.1)
    wait_for(lambda: "preempted; recovery" in log.read_text(), seconds=SETTLE)
    invoke("stop", str(job_id))

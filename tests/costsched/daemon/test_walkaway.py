"""Launch and walk away: `costsched launch` starts a supervisor in the background for the
store, which recovers a preempted spot job from its last checkpoint with nothing else run,
and ends by itself once no job is left. Real processes: the launch's supervisor, the local
launcher's instances running examples/train.py, a real SQLite store. (Real processes are
the point: the supervisor must outlive the command that started it. Launches racing to
start one are in test_supervisor.)"""

from __future__ import annotations

import re
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from costsched.cli import app
from costsched.daemon.supervisor import SUPERVISOR_LEASE
from costsched.store.leases import process_gone
from launchers.checkpoints import open_store
from tests.costsched.daemon.conftest import World
from tests.costsched.service.test_jobs import wait_for
from tests.real_jobs import SETTLE

ARMED = re.compile(r"Recovery armed: supervisor pid (\d+) watches this store every 1 s; "
                   r"log: (\S+)")


def open_instance(world: World, job_id: int) -> str:
    placements = world.store.jobs.placements(job_id)
    open_ = placements[placements["end_at"].isna()]["instance"]
    return "" if open_.empty else str(open_.iloc[-1])


def invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_a_preempted_spot_job_is_recovered_with_nothing_but_the_launch(world: World) -> None:
    said = invoke("launch", str(world.trainer()), "--wait", "30")
    armed = ARMED.search(said)
    assert armed, said
    pid, log = int(armed[1]), Path(armed[2])
    assert log == world.db.with_name("store.supervisor.log")
    [job_id] = world.store.jobs.ids()
    assert world.store.jobs.get(job_id).state == "running"

    # The job trains and checkpoints; the supervisor has looked at it at least once.
    checkpoints = open_store(world.store.jobs.get(job_id).checkpoint_location)
    wait_for(lambda: (newest := checkpoints.newest_verified()) and newest.version >= 2,
             seconds=SETTLE)
    wait_for(lambda: any(r.pid == pid and r.pass_at is not None
                         for r in world.store.daemons.running(datetime.now(timezone.utc))),
             seconds=SETTLE)

    # Taken away without notice, as the demo does it; nothing else is run from here on.
    first = open_instance(world, job_id)
    subprocess.run([sys.executable, "-m", "launchers.local", "preempt", str(job_id),
                    "--base-dir", str(world.launcher.base_dir)], check=True,
                   capture_output=True)
    preempted = time.monotonic()
    last = checkpoints.newest_verified()  # nothing publishes once the instance is gone
    step = int(np.load(checkpoints.fetch(last, world.tmp / "last") / "checkpoint.npz")["step"])
    assert step > 0

    def recovered() -> str:
        now = open_instance(world, job_id)
        running = world.store.jobs.get(job_id).state == "running"
        return now if running and now not in ("", first) else ""

    second = wait_for(recovered, seconds=SETTLE, poll=0.1)
    took = time.monotonic() - preempted
    wait_for(lambda: "resumed at step" in world.launcher.logs(second), seconds=SETTLE)
    assert f"resumed at step {step}\n" in world.launcher.logs(second)  # its last checkpoint
    moves = world.store.moves.of_job(job_id)
    assert [m.kind for m in moves] == ["launch", "recovery"]
    assert "preempted; recovery" in log.read_text()
    print(f"recovered {took:.1f} s after the preemption (watch interval 1 s)")

    # Once no job is left, the supervisor ends by itself (daemon.idle_seconds: 1 s here).
    invoke("stop", str(job_id))
    wait_for(lambda: process_gone(pid), seconds=SETTLE)
    now = datetime.now(timezone.utc)
    assert world.store.leases.holder_of(SUPERVISOR_LEASE, now) is None
    assert world.store.daemons.running(now) == []
    assert "event=idle" in log.read_text()

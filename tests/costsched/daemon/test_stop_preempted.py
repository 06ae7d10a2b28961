"""`costsched stop` of a spot job whose instance was preempted seconds before, no supervisor
having seen it: the job is stopped, not recovered, its placement charged until the
preemption (not until the stop), the stop's line says when the instance was lost and from
which step `start` resumes, and `logs --all` tells the instance as preempted. Real
processes: the local launcher's instance running examples/train.py, a real SQLite store, no
daemon."""

from __future__ import annotations

import time
from datetime import timezone

import pandas as pd
import pytest
from typer.testing import CliRunner

from costsched.cli import app
from launchers.checkpoints import open_store
from tests.costsched.daemon.conftest import World
from tests.real_jobs import SETTLE, preempt, wait_for


def invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_a_stop_after_an_unseen_preemption_charges_until_it_and_says_so(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_DAEMON_AUTOSTART", "false")  # no pass sees the preemption
    invoke("launch", str(world.trainer()), "--wait", "30")
    [job_id] = world.store.jobs.ids()
    checkpoints = open_store(world.store.jobs.get(job_id).checkpoint_location)
    wait_for(lambda: (newest := checkpoints.newest_verified()) and newest.version >= 2,
             seconds=SETTLE)
    [instance] = world.store.jobs.placements(job_id)["instance"].astype(str)
    preempt(world.launcher, instance)
    lost = world.launcher.status(instance)
    assert lost.lost_at is not None and lost.checkpoint_step is not None
    time.sleep(2)  # the stop comes seconds after the preemption

    said = invoke("stop", str(job_id))

    record = world.store.jobs.get(job_id)
    assert record.state == "stopped"
    [placement] = world.store.jobs.placements(job_id).itertuples()
    end = pd.Timestamp(placement.end_at).to_pydatetime().astimezone(timezone.utc)
    # Charged until the preemption (the store keeps whole seconds), not until the stop.
    assert end == lost.lost_at.replace(microsecond=0), (end, lost.lost_at)
    assert record.checkpoint_step == lost.checkpoint_step
    assert not [m for m in world.store.moves.of_job(job_id) if m.kind == "recovery"]
    line = " ".join(said.split())
    assert (f"job {job_id} (walk): stopped; its instance {instance} had been preempted at "
            f"{lost.lost_at:%Y-%m-%d %H:%M:%SZ}, before this stop: charged until then, not "
            f"recovered; `costsched start {job_id}` starts it again from step "
            f"{lost.checkpoint_step:,.0f}, its newest verified checkpoint's") in line, said
    # Its log tells the instance as lost, not as stopped.
    told = " ".join(invoke("logs", str(job_id), "--all").split())
    assert (f"--- instance {instance} (launched {placement.start_at:%Y-%m-%d %H:%MZ}, "
            f"preempted {end:%Y-%m-%d %H:%MZ}: not recovered, the job was stopped)") in told, told

"""A job's setup as a cloud launcher reads it: while setup runs, the agent's heartbeat beside
the checkpoints says when it began ("setup_since"), written at once as setup begins and
again, without it, as the job's command starts; the cloud launchers carry it into
`Instance.setup_since` of a running instance, as the local launcher does from status.json."""

from __future__ import annotations

import dataclasses
import os
import signal
from datetime import datetime, timezone
from pathlib import Path

import pytest

from launchers import heartbeats
from tests.launchers.test_agent import finish, start_agent, wait_for

AT = 1767225600.0  # 2026-01-01 00:00 UTC
BEGAN = datetime.fromtimestamp(AT, timezone.utc)


def test_a_heartbeat_in_setup_says_when_setup_began_and_one_after_it_says_none() -> None:
    doc = heartbeats.document(None, None, None, None, setup_since=AT)
    assert heartbeats.steps(doc).setup_since == BEGAN
    assert heartbeats.steps(heartbeats.document(5, AT, None, None)).setup_since is None
    assert heartbeats.steps({"pid": 1, "at": AT, "setup_since": "soon"}).setup_since is None


def test_the_beat_is_due_at_once_when_the_job_goes_into_or_out_of_setup(
        tmp_path: Path) -> None:
    beat = heartbeats.StoreBeat(str(tmp_path / "store"), "j7-m1-0", 3600)
    beat.write(None, None, None, None, setup_since=AT)
    assert not beat.due(None, in_setup=True)  # written a moment ago, nothing changed
    assert beat.due(None, in_setup=False)  # setup ended: said at once
    beat.write(3, AT, None, None)
    assert not beat.due(None) and beat.due(2)


def test_the_agent_s_heartbeat_says_its_setup_while_it_runs_and_not_after(
        tmp_path: Path) -> None:
    gate = tmp_path / "setup-may-end"
    proc = start_agent(tmp_path, 'echo 9 > "$COSTSCHED_PROGRESS_FILE"; sleep 30',
                       "--attempt", "j7-m1-0", "--heartbeat-seconds", "3600",
                       "--setup", f"while [ ! -e {gate} ]; do sleep 0.05; done")
    uri = str(tmp_path / "store")
    try:
        wait_for(lambda: heartbeats.steps(heartbeats.read(uri, "j7-m1-0")).setup_since,
                 timeout=120)
        assert heartbeats.steps(heartbeats.read(uri, "j7-m1-0")).step is None
        gate.touch()
        # Written again at once as the command starts (its step comes with the next beat,
        # a minute on: 3600 s here).
        wait_for(lambda: heartbeats.steps(heartbeats.read(uri, "j7-m1-0")).setup_since is None,
                 timeout=120)
        assert "costsched: setup done" in (tmp_path / "work" / "job.log").read_text()
    finally:
        gate.touch()
        os.killpg(proc.pid, signal.SIGTERM)
        finish(proc, tmp_path)


def test_a_compute_engine_instance_in_setup_says_since_when(tmp_path: Path) -> None:
    pytest.importorskip("google.cloud.compute_v1")
    from launchers.gcp import GcpLauncher
    from tests.launchers.test_gcp import FakeInstances, spec

    instances = FakeInstances()
    launcher = GcpLauncher(project="proj", instances_client=instances)
    job = dataclasses.replace(spec(attempt="launch-1"), checkpoint_uri=str(tmp_path / "ckpt"))
    got = launcher.launch(job)
    instances.store[tuple(got.id.split("/"))].status = "RUNNING"
    assert launcher.status(got.id).setup_since is None  # no heartbeat yet
    heartbeats.publish(job.checkpoint_uri, job.attempt,
                       heartbeats.document(None, None, None, None, setup_since=AT))
    seen = launcher.status(got.id)
    assert (seen.setup_since, seen.step) == (BEGAN, None)
    heartbeats.publish(job.checkpoint_uri, job.attempt, heartbeats.document(4, AT, None, None))
    assert launcher.status(got.id).setup_since is None


def test_an_azure_vm_in_setup_says_since_when(azure, tmp_path: Path) -> None:  # noqa: ANN001
    from tests.launchers.test_azure import make, spec

    launcher = make(azure, tmp_path)
    got = launcher.launch(spec())
    uri = "https://costschedckpt.blob.core.windows.net/ckpt/jobs/job-7"
    heartbeats.publish(uri, "move-1-0",
                       heartbeats.document(None, None, None, None, setup_since=AT))
    seen = launcher.status(got.id)
    assert (seen.state, seen.setup_since) == ("running", BEGAN)

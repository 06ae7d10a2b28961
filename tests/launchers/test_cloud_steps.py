"""The step a job on a cloud instance stands at, and its newest checkpoint's, as its agent's
heartbeat beside the checkpoints says them (launchers.heartbeats): written by a real agent,
read back by the EC2 (moto), Compute Engine (fake client) and Azure (loopback) launchers
into `Instance.step`, `step_at` and `checkpoint_step`. An old heartbeat (without them), a
missing or an unreadable one leaves them None."""

from __future__ import annotations

import dataclasses
import os
import signal
from datetime import datetime, timezone
from pathlib import Path

import pytest

from launchers import heartbeats
from tests.launchers.test_agent import finish, start_agent, train, wait_for

AT = 1767225600.0  # 2026-01-01 00:00 UTC
WRITTEN = datetime.fromtimestamp(AT, timezone.utc)


def said(step: int | None = 720, saved: int | None = 708) -> dict:
    return heartbeats.document(step, AT, saved, 3)


def test_a_heartbeat_says_the_step_when_it_was_written_and_the_checkpoint_s() -> None:
    doc = said()
    assert doc["pid"] == os.getpid() and doc["at"] > 0
    assert (doc["step"], doc["step_at"], doc["checkpoint_step"],
            doc["checkpoint_version"]) == (720, AT, 708, 3)
    assert heartbeats.steps(doc) == heartbeats.Steps(720, WRITTEN, 708, 3)


def test_an_old_or_odd_heartbeat_says_no_step() -> None:
    none = heartbeats.Steps(None, None, None, None)
    assert heartbeats.steps({"pid": 9, "at": AT}) == none  # written before steps were
    assert heartbeats.steps(None) == none
    odd = {"pid": 9, "at": AT, "step": "720", "step_at": "soon", "checkpoint_step": -1,
           "checkpoint_version": True}
    assert heartbeats.steps(odd) == none
    assert heartbeats.steps({"at": AT, "step": 5, "step_at": float("nan")}).step_at is None


def test_the_agent_s_heartbeat_carries_the_job_s_step(tmp_path: Path) -> None:
    proc = start_agent(tmp_path, 'echo 42 > "$COSTSCHED_PROGRESS_FILE"; sleep 30',
                       "--attempt", "j7-m1-0", "--heartbeat-seconds", "0.1")
    uri = str(tmp_path / "store")
    try:
        wait_for(lambda: (heartbeats.read(uri, "j7-m1-0") or {}).get("step") == 42)
        said = heartbeats.steps(heartbeats.read(uri, "j7-m1-0"))
        assert said.step == 42 and said.checkpoint_step is None  # nothing published yet
        assert said.step_at is not None and said.checkpoint_version is None
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        finish(proc, tmp_path)


def test_a_version_published_is_said_at_once_and_the_last_one_at_the_end(
        tmp_path: Path) -> None:
    """Written once a minute, the heartbeat is written again as soon as a checkpoint is
    published: a recovery after a preemption reads the step its job resumes from."""
    status, _ = finish(start_agent(tmp_path, train(300), "--attempt", "j7-m1-0",
                                   "--heartbeat-seconds", "3600"), tmp_path)
    assert status["state"] == "succeeded" and status["checkpoint_version"] is not None
    said = heartbeats.steps(heartbeats.read(str(tmp_path / "store"), "j7-m1-0"))
    assert said.checkpoint_version == status["checkpoint_version"]
    assert said.checkpoint_step == status["checkpoint_step"] is not None
    assert said.step == status["step"]


# --- Compute Engine (its client faked) ------------------------------------------------------

def test_a_compute_engine_instance_carries_the_steps_its_heartbeat_says(
        tmp_path: Path) -> None:
    pytest.importorskip("google.cloud.compute_v1")
    from launchers.gcp import GcpLauncher
    from tests.launchers.test_gcp import FakeInstances, spec

    instances = FakeInstances()
    launcher = GcpLauncher(project="proj", instances_client=instances)
    job = dataclasses.replace(spec(attempt="launch-1"), checkpoint_uri=str(tmp_path / "ckpt"))
    got = launcher.launch(job)
    instances.store[tuple(got.id.split("/"))].status = "RUNNING"
    assert launcher.status(got.id).step is None
    heartbeats.publish(job.checkpoint_uri, job.attempt, said())
    seen = launcher.status(got.id)
    assert (seen.step, seen.step_at, seen.checkpoint_step) == (720, WRITTEN, 708)
    assert launcher.statuses([got.id])[got.id] == seen
    assert [(i.step, i.checkpoint_step) for i in launcher.instances(job.job_id)] == [(720, 708)]


# --- Azure (loopback) -----------------------------------------------------------------------

def test_an_azure_vm_carries_the_steps_its_heartbeat_says(azure, tmp_path: Path) -> None:  # noqa: ANN001
    from tests.launchers.test_azure import make, spec

    launcher = make(azure, tmp_path)
    got = launcher.launch(spec())
    assert got.step is None
    uri = "https://costschedckpt.blob.core.windows.net/ckpt/jobs/job-7"
    heartbeats.publish(uri, "move-1-0", said(600, 600))
    seen = launcher.status(got.id)
    assert (seen.step, seen.step_at, seen.checkpoint_step) == (600, WRITTEN, 600)
    assert launcher.statuses([got.id])[got.id] == seen
    assert [(i.step, i.checkpoint_step) for i in launcher.instances(7)] == [(600, 600)]


def test_statuses_read_the_heartbeats_of_the_instances_asked_for_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Compute Engine lists every costsched instance of the project at once: of those, only
    the asked ones' heartbeats are read."""
    pytest.importorskip("google.cloud.compute_v1")
    from launchers.gcp import GcpLauncher
    from tests.launchers.test_gcp import FakeInstances, spec

    launcher = GcpLauncher(project="proj", instances_client=FakeInstances())
    got = []
    for job_id in (7, 8):
        job = dataclasses.replace(spec(attempt="launch-1", job_id=job_id),
                                  checkpoint_uri=str(tmp_path / f"ckpt-{job_id}"))
        got.append(launcher.launch(job))
        heartbeats.publish(job.checkpoint_uri, job.attempt, said(job_id * 100, job_id * 100))
    read = []
    real = heartbeats.read
    monkeypatch.setattr(heartbeats, "read", lambda uri, attempt: read.append(uri) or real(
        uri, attempt))
    seen = launcher.statuses([got[1].id])[got[1].id]
    assert (seen.step, seen.checkpoint_step) == (800, 800)
    assert read == [str(tmp_path / "ckpt-8")]


def test_a_checkpoint_location_too_long_for_a_tag_is_not_tagged() -> None:
    from launchers import cloud_steps

    short = "s3://ckpt/jobs/job-7"
    assert cloud_steps.tag_value(short) == {cloud_steps.TAG_CHECKPOINTS: short}
    assert cloud_steps.tag_value("s3://ckpt/" + "x" * 300) == {}
    tags = {"costsched-job": "7", "costsched-attempt": "launch-1", **cloud_steps.tag_value(short)}
    assert cloud_steps.tagged(tags) == cloud_steps.Place(7, "launch-1", short)
    assert cloud_steps.tagged({"costsched-job": "7", "costsched-attempt": "launch-1"}) is None
    assert cloud_steps.tagged(None) is None

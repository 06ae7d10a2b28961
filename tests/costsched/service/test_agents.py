"""costsched/service/agents.py with an in-memory launcher: a gone agent is told once in the
job's log; a backend that cannot recover it leaves the job running (its status says so);
a recovery that fails is told once, and the job left as it was."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest

from costsched.migration.launcher import Instance
from costsched.model import InvalidInput
from costsched.service.jobs import agents
from costsched.service.jobs.agents import look_after
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import T0, FakeLauncher, launched_on, new_job


def events(store: PriceStore, job: int) -> list[str]:
    frame = store.jobs.events(job)
    return frame[frame["kind"] == "agent"]["detail"].tolist()


def gone(launcher: FakeLauncher, instance_id: str) -> Instance:
    return replace(launcher.status(instance_id), agent="the agent (pid 9) is gone")


def test_a_backend_that_cannot_recover_leaves_the_job_running_and_says_it_once(
        store: PriceStore) -> None:
    launcher = FakeLauncher()
    job = new_job(store)
    instance_id = launched_on(store, launcher, job)
    for _ in range(3):
        after = look_after(store, launcher, job, gone(launcher, instance_id), T0)
        assert after.state == "running" and after.agent
    assert events(store, job) == [f"instance {instance_id}: the agent (pid 9) is gone"]
    healthy = launcher.status(instance_id)
    assert look_after(store, launcher, job, healthy, T0) is healthy


def test_a_recovery_that_fails_is_said_once(store: PriceStore,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    launcher = FakeLauncher()
    job = new_job(store)
    instance_id = launched_on(store, launcher, job)

    def unreachable(_instance_id: str) -> bool:
        raise InvalidInput("checkpoint store s3://b/j: unreachable")

    monkeypatch.setattr(launcher, "recover_agent", unreachable, raising=False)
    for _ in range(3):
        assert look_after(store, launcher, job, gone(launcher, instance_id), T0).agent
    assert events(store, job) == [
        f"instance {instance_id}: the agent (pid 9) is gone",
        f"instance {instance_id}: not recovered: checkpoint store s3://b/j: unreachable"]


def test_recovered_instances_come_back_as_the_backend_says(store: PriceStore,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    launcher = FakeLauncher()
    job = new_job(store)
    instance_id = launched_on(store, launcher, job)

    def recover(victim: str) -> bool:
        launcher.set(victim, "stopped")
        return True

    monkeypatch.setattr(launcher, "recover_agent", recover, raising=False)
    assert look_after(store, launcher, job, gone(launcher, instance_id), T0).state == "stopped"


def test_a_stale_heartbeat_beside_the_checkpoints_says_a_cloud_agent_is_gone(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A backend that cannot see processes (as EC2's and Compute Engine's): the heartbeat
    the agent writes beside the checkpoints says it."""
    from launchers import heartbeats

    launcher = FakeLauncher()
    assert not launcher.sees_agents
    job = new_job(store)
    instance_id = launched_on(store, launcher, job)
    attempt = launcher.status(instance_id).attempt
    uri = str(tmp_path / "checkpoints")
    monkeypatch.setattr(agents, "_read", {})
    running = launcher.status(instance_id)
    # none yet (the instance is still installing): not judged
    assert look_after(store, launcher, job, running, T0, uri) == running
    heartbeats.publish(uri, attempt, {"pid": 1, "at": time.time() - 60})
    monkeypatch.setattr(agents, "_read", {})
    assert look_after(store, launcher, job, running, T0, uri) == running
    heartbeats.publish(uri, attempt, {"pid": 1, "at": time.time() - 3600})
    assert look_after(store, launcher, job, running, T0, uri) == running  # read 2 min ago
    monkeypatch.setattr(agents, "_read", {})
    said = look_after(store, launcher, job, running, T0, uri)
    assert said.state == "running"
    assert "not written its heartbeat for 60 min" in said.agent
    assert said.checkpoint_error == said.agent
    assert events(store, job) == [f"instance {instance_id}: {said.agent}"]

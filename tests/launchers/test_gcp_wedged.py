"""A wedged Compute Engine instance: RUNNING, its agent's heartbeat beside the checkpoints
stale. Within `wedged.WEDGED_SECONDS` the instance's supervisor is trusted (nothing done);
beyond, `recover_agent` deletes the instance (the reconcile then relaunches the job from
its checkpoint, as the EC2 test shows end to end)."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest

pytest.importorskip("google.cloud.compute_v1")

from launchers import heartbeats, wedged  # noqa: E402
from launchers.gcp import GcpLauncher  # noqa: E402
from tests.launchers.test_gcp import FakeInstances, spec  # noqa: E402


def test_only_a_heartbeat_older_than_the_wedged_limit_ends_the_instance(
        tmp_path: Path) -> None:
    instances = FakeInstances()
    launcher = GcpLauncher(project="proj", instances_client=instances)
    job = dataclasses.replace(spec(attempt="launch-1"), checkpoint_uri=str(tmp_path / "ckpt"))
    got = launcher.launch(job)
    instances.store[tuple(got.id.split("/"))].status = "RUNNING"
    assert launcher.recover_agent(got.id) is False  # no heartbeat yet: still installing
    heartbeats.publish(job.checkpoint_uri, job.attempt, {"pid": 9, "at": time.time() - 400})
    assert launcher.recover_agent(got.id) is False  # its supervisor restarts the agent
    assert instances.deleted == []
    heartbeats.publish(job.checkpoint_uri, job.attempt,
                       {"pid": 9, "at": time.time() - wedged.WEDGED_SECONDS - 60})
    assert launcher.recover_agent(got.id) is True
    assert instances.deleted == [("proj", *got.id.split("/"))]
    assert launcher.status(got.id).state == "terminated"

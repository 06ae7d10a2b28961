"""launchers/heartbeats.py: the agent's heartbeat beside the job's checkpoints, written by a
real agent subprocess (a local checkpoint store) and read back; the same object on S3
under moto; a missing or unreadable one reads as none."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from launchers import heartbeats
from tests.launchers.checkpoints.conftest import (  # noqa: F401 - fixtures
    BUCKET,
    hermetic_aws,
    s3,
)
from tests.launchers.test_agent import finish, start_agent, wait_for


def test_the_agent_writes_its_heartbeat_beside_the_checkpoints(tmp_path: Path) -> None:
    proc = start_agent(tmp_path, "sleep 30", "--attempt", "j7-m1-0",
                       "--heartbeat-seconds", "0.2")
    uri = str(tmp_path / "store")
    try:
        wait_for(lambda: heartbeats.read(uri, "j7-m1-0"))
        first = heartbeats.read(uri, "j7-m1-0")
        assert first is not None and first["pid"] == proc.pid
        wait_for(lambda: heartbeats.read(uri, "j7-m1-0")["at"] > first["at"])
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        finish(proc, tmp_path)
    # beside the checkpoints, never taken for one
    from launchers.checkpoints import open_store

    assert open_store(uri).list() == []
    assert heartbeats.read(uri, "another-attempt") is None


def test_without_an_attempt_no_heartbeat_is_written_beside_the_checkpoints(
        tmp_path: Path) -> None:
    status, _ = finish(start_agent(tmp_path, "true", "--heartbeat-seconds", "0.1"), tmp_path)
    assert status["state"] == "succeeded"
    assert not (tmp_path / "store" / heartbeats.FOLDER).exists()
    assert heartbeats.read_local(tmp_path / "work")["at"] > 0  # its own file, always


def test_on_s3(s3) -> None:  # noqa: ANN001, F811 - the fixture
    uri = f"s3://{BUCKET}/jobs/job-7"
    assert heartbeats.read(uri, "a1") is None
    heartbeats.publish(uri, "a1", {"pid": 5, "at": 1767225600.0})
    assert heartbeats.read(uri, "a1") == {"pid": 5, "at": 1767225600.0}
    key = "jobs/job-7/agents/a1.json"
    assert s3.get_object(Bucket=BUCKET, Key=key)["Body"].read()
    s3.put_object(Bucket=BUCKET, Key=key, Body=b"not json")
    assert heartbeats.read(uri, "a1") is None


@pytest.mark.parametrize("attempt", ["", "..", "a/b", "x" * 101])
def test_an_attempt_that_is_no_name_is_refused(tmp_path: Path, attempt: str) -> None:
    with pytest.raises(ValueError, match="attempt"):
        heartbeats.uri(str(tmp_path), attempt)

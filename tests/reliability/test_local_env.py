"""A local job's environment is its own: costsched's settings and secrets (a webhook URL
with a token, cloud credentials, the agent's import path) never reach the job, its output
or `costsched logs`; the job gets its envs and the contract's variables."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from costsched.model import Offering
from launchers.base import LaunchSpec
from launchers.local import LocalLauncher
from tests.launchers.test_local import wait_for

OFFERING = Offering("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "V100", 1)
TOKEN = "tok-3f9c2a7e51"


def test_costsched_secrets_never_reach_a_local_job(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_NOTIFY_WEBHOOK", f"https://hooks.example.com/x?token={TOKEN}")
    monkeypatch.setenv("COSTSCHED_DB", f"postgresql://u:{TOKEN}@db/costsched")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", f"aws-{TOKEN}")
    monkeypatch.setenv("SOME_OTHER_TOOL_API_KEY", f"other-{TOKEN}")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "agent-path"))
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=5, poll_seconds=0.1)
    # The job prints its whole environment, and proves python still works for it.
    command = f"env; {sys.executable} -c 'print(\"python ok\")'"
    instance = launcher.launch(LaunchSpec(
        job_id=3, job_name="envy", command=command, offering=OFFERING,
        checkpoint_uri=str(tmp_path / "store"), attempt="a0", envs={"LR": "0.1"}))
    wait_for(lambda: launcher.status(instance.id).state == "succeeded")
    output = launcher.logs(instance.id, tail=10_000)
    job_env = dict(line.split("=", 1) for line in output.splitlines() if "=" in line)
    assert "python ok" in output
    assert TOKEN not in output
    for name in ("COSTSCHED_NOTIFY_WEBHOOK", "COSTSCHED_DB", "AWS_SECRET_ACCESS_KEY",
                 "SOME_OTHER_TOOL_API_KEY", "PYTHONPATH", "COSTSCHED_AGENT_ONLY"):
        assert name not in job_env
    assert job_env["LR"] == "0.1"
    assert job_env["COSTSCHED_JOB_ID"] == "3"
    assert job_env["COSTSCHED_CHECKPOINT_DIR"].endswith("checkpoints")
    assert job_env["COSTSCHED_PROGRESS_FILE"].endswith("progress")
    assert "PATH" in job_env and "HOME" in job_env
    # Nor are they in anything the launcher keeps on disk.
    for path in (tmp_path / "instances").rglob("*"):
        if path.is_file():
            assert TOKEN not in path.read_text(errors="replace"), path

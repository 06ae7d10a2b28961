"""The agent measures how long its instance's setup took and says it in status.json once
setup has ended, while the job runs and at its end (0 without a setup); an agent started
again on the instance, its setup done already, says what the first one measured. The
local launcher reads it as `Instance.setup_seconds`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from launchers.status_file import setup_seconds
from tests.launchers.test_agent import finish, start_agent, wait_for

# Reports step 5 at once, then waits for a file (so that a look can come while it runs).
JOB = (f"{sys.executable} -c \"import os, pathlib, time; "
       "open(os.environ['COSTSCHED_PROGRESS_FILE'], 'w').write('5'); "
       "go = pathlib.Path('../go'); "
       "[time.sleep(0.05) for _ in range(2000) if not go.exists()]\"")


def _status(tmp_path: Path) -> dict:
    try:
        return json.loads((tmp_path / "work" / "status.json").read_text())
    except (OSError, ValueError):
        return {}


def test_the_setup_took_is_said_while_the_job_runs_and_at_its_end(tmp_path: Path) -> None:
    agent = start_agent(tmp_path, JOB, "--setup", "sleep 0.6")
    wait_for(lambda: _status(tmp_path).get("step") == 5)
    running = _status(tmp_path)
    assert "setup_since" not in running
    took = setup_seconds(running)
    assert took is not None and took >= 0.6, running
    (tmp_path / "work" / "go").touch()
    status, out = finish(agent, tmp_path)
    assert status["state"] == "succeeded", out
    assert setup_seconds(status) == took
    assert float((tmp_path / "work" / ".setup-done").read_text()) == took
    # Started again on the same instance: its setup done already, what it took is kept.
    again, out = finish(start_agent(tmp_path, f"{sys.executable} -c pass", "--setup",
                                    "sleep 0.6"), tmp_path)
    assert again["state"] == "succeeded" and setup_seconds(again) == took, out


def test_a_job_without_a_setup_says_it_took_none(tmp_path: Path) -> None:
    status, out = finish(start_agent(tmp_path, f"{sys.executable} -c pass"), tmp_path)
    assert status["state"] == "succeeded" and setup_seconds(status) == 0.0, out


def test_a_status_file_without_one_says_none() -> None:
    assert setup_seconds({"state": "running", "setup_since": 1.0}) is None
    assert setup_seconds({"setup_seconds": -1}) is None
    assert setup_seconds({"setup_seconds": True}) is None
    assert setup_seconds({"setup_seconds": 2}) == 2.0

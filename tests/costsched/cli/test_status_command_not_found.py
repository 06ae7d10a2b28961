"""A job whose `run` names a command the shell cannot find (exit code 127): `status` does
not offer `start`, which runs the same stored command again and fails again, but says the
command comes from the job file, and the launch of the fixed file, which runs it."""

from __future__ import annotations

import json
import re
import shlex
import time
from pathlib import Path

import pytest

from tests.costsched.cli.test_launch_written_secret import _state

TASK = """\
name: typo
workdir: .
resources:
  accelerators: V100:1
run: pyhton-not-a-command train.py
"""


def _ended(cli, job_id: int, state: str) -> None:  # noqa: ANN001
    deadline = time.monotonic() + 90  # a stop for a job that never ends, not a bound
    while _state(cli, job_id) != state and time.monotonic() < deadline:
        time.sleep(0.3)
    assert _state(cli, job_id) == state


def test_a_command_not_found_is_sent_to_the_job_file_not_to_start(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    (tmp_path / "task.yaml").write_text(TASK)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    launched = cli("launch", "task.yaml", "--launcher", "local", "--wait", "0", "--json")
    [job] = json.loads(launched.stdout)
    # Exit code 1 where the launch's own look found the job failed already (a busy machine
    # lets the launch's last reads come after the command's instant failure).
    assert launched.exit_code == 0 or (launched.exit_code, job["state"]) == (1, "failed"), \
        launched.output
    _ended(cli, job["id"], "failed")

    said = " ".join(cli("status", str(job["id"])).stdout.split())
    assert (f"its command (the job file's `run`, as launched) could not run (exit code 127): "
            f"`costsched start {job['id']}` runs the same command again; fix `run` in "
            "task.yaml, then `costsched launch task.yaml` (the file it was launched from) "
            "runs it again as a new job, started afresh") in said, said
    # the file fixed, the launch the hint names runs it
    (tmp_path / "task.yaml").write_text(TASK.replace("pyhton-not-a-command train.py",
                                                     "python -c pass"))
    command = re.search(r"`(costsched launch [^`]+)`", said).group(1)
    again = cli(*shlex.split(command)[1:], "--launcher", "local", "--wait", "0", "--json")
    assert again.exit_code == 0, again.output
    [second] = json.loads(again.stdout)
    _ended(cli, second["id"], "succeeded")

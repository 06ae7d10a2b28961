"""An env named like a secret, left without a value, is refused at launch with two plain
steps; following them as written launches the job, with the value in its environment."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest

VALUE = "wb-key-0123456789abcdef"
TASK = """\
name: wb
workdir: .
resources:
  accelerators: V100:1
envs:
  WANDB_API_KEY: null
  STEPS: "10"
run: python check.py
"""
CHECK = """import hashlib, os, pathlib
value = os.environ.get("WANDB_API_KEY", "")
pathlib.Path("seen.txt").write_text(hashlib.sha256(value.encode()).hexdigest())
"""
STEPS = ("move WANDB_API_KEY from envs: to secrets: in the task, then pass its value with "
         "--secret WANDB_API_KEY (named like a secret; an env's value is stored with the "
         "job, a secret's never is)")


def test_the_secret_hint_is_two_steps_that_work_as_written(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    project = tmp_path / "proj"
    project.mkdir()
    (project / "check.py").write_text(CHECK)
    task = project / "sky.yaml"
    task.write_text(TASK)
    monkeypatch.chdir(project)
    monkeypatch.setenv("WANDB_API_KEY", VALUE)

    refused = cli("launch", "sky.yaml", "--launcher", "local", "--wait", "0")
    assert refused.exit_code == 2
    assert refused.output.strip().endswith(f"; or {STEPS}"), refused.output
    alone = cli("launch", "sky.yaml", "--launcher", "local", "--secret", "WANDB_API_KEY",
                "--wait", "0")  # the second step without the first: refused the same way
    assert alone.exit_code == 2 and STEPS in alone.output

    # Step 1: move it from envs: to secrets: in the task. Step 2: pass --secret NAME.
    task.write_text(TASK.replace("envs:\n  WANDB_API_KEY: null\n",
                                 "secrets:\n  WANDB_API_KEY: null\nenvs:\n"))
    launched = cli("launch", "sky.yaml", "--launcher", "local", "--secret", "WANDB_API_KEY",
                   "--wait", "0", "--json")
    assert launched.exit_code == 0, launched.output
    [job] = json.loads(launched.stdout)
    deadline = time.monotonic() + 90  # a stop for a job that never ends, not a bound
    while (state := _state(cli, job["id"])) not in ("succeeded", "failed") \
            and time.monotonic() < deadline:
        time.sleep(0.3)
    assert state == "succeeded", cli("logs", str(job["id"])).output
    [seen] = list(tmp_path.rglob("seen.txt"))
    assert seen.read_text() == hashlib.sha256(VALUE.encode()).hexdigest()


def _state(cli, job_id: int) -> str:  # noqa: ANN001
    shown = json.loads(cli("status", str(job_id), "--json").stdout)
    return (shown["jobs"] if isinstance(shown, dict) else shown)[0]["state"]

"""`plan --json` and `launch --json` carry every warning and note the command prints on
stderr, under "messages": the lines are one list, printed and serialised, so a script reads
what a person reads (a task's env named like a secret, a file mount the local launcher
places elsewhere, a setup that installs with pip into costsched's environment)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

TASK = """\
name: mfrec
workdir: .
resources:
  accelerators: {L4: 1, A10G: 1}
  use_spot: true
envs:
  STEPS: 4000
  WANDB_API_KEY: wandbsk-T48-7f3a9c2e51d4b6
file_mounts:
  /data/ratings: ./data
setup: echo pip install numpy
run: "true"
costsched:
  throughputs: {L4: 20, A10G: 20}
  steps: 4000
"""


@pytest.fixture()
def task(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "local")
    (tmp_path / "data").mkdir()
    path = tmp_path / "sky.yaml"
    path.write_text(TASK)
    return path


def _printed(stderr: str) -> list[dict[str, str]]:
    """The warnings and notes a command printed, as --json lists them."""
    out = []
    for line in stderr.splitlines():
        level, _, text = line.partition(": ")
        if level in ("warning", "note", "error", "throughput"):
            out.append({"level": level, "text": text})
    return out


def _said_of_the_file(messages: list[dict[str, str]], path: Path) -> None:
    texts = [m["text"] for m in messages]
    assert any(t.startswith(f"{path}: envs.WANDB_API_KEY is named like a secret")
               and m["level"] == "warning" for t, m in zip(texts, messages, strict=True))
    assert any(t.startswith(f"{path}: file_mounts /data/ratings: the local launcher does "
                            "not place it at /data/ratings") for t in texts)
    assert any(t.startswith(f"{path}: setup runs on this machine") for t in texts)
    assert not any("wandbsk-T48" in t for t in texts)  # the value never said


def test_plan_json_lists_each_warning_and_note_it_prints(cli, task: Path) -> None:  # noqa: ANN001
    planned = cli("plan", task, "--json")
    assert planned.exit_code == 0, planned.output
    messages = json.loads(planned.stdout)["messages"]
    _said_of_the_file(messages, task)
    assert messages == _printed(planned.stderr)  # every line printed, in its order


def test_plan_json_of_an_offering_explained_lists_them_too(cli, task: Path) -> None:  # noqa: ANN001
    explained = cli("plan", task, "--explain", "1", "--json")
    assert explained.exit_code == 0, explained.output
    _said_of_the_file(json.loads(explained.stdout)["messages"], task)


def test_launch_json_lists_them_for_each_job_of_the_file(
        cli, task: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.chdir(task.parent)
    launched = cli("launch", task.name, "--wait", "0", "--json", "--env", "MY_TOKEN=abcdef",
                   "--env", "STEP=3")
    assert launched.exit_code == 0, launched.output
    [job] = json.loads(launched.stdout)
    cli("stop", str(job["id"]))
    _said_of_the_file(job["messages"], Path(task.name))
    texts = [m["text"] for m in job["messages"]]
    assert ("sky.yaml: --env STEP adds an env the task has not, beside its env STEPS, which "
            "keeps its own value (--env STEPS=VALUE gives that one)") in texts
    assert any(t.startswith("MY_TOKEN is stored with the job like every env") for t in texts)
    printed = _printed(launched.stderr)
    assert printed and all(m in job["messages"] for m in printed if m["level"] == "warning")

"""`plan` of a task with a Docker image says, as a note, what `launch` on the local
launcher would refuse on this machine: the same check (`Launcher.cannot_run`) and words,
whatever Docker the machine has (a fake `docker` here, or none on PATH)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

TASK = ("name: dk\nresources: {accelerators: L4:1, image_id: 'docker:python:3.11-slim'}\n"
        "run: python -c 'print(1)'\ncostsched: {model: ResNet-50 (batch size 64), "
        "steps: 100}\n")


def _words(text: str) -> str:
    return " ".join(text.split())


def _fake_docker(folder: Path) -> None:
    """A `docker` whose daemon does not answer, as `docker version` says it."""
    folder.mkdir()
    script = folder / "docker"
    script.write_text("#!/bin/sh\necho 'Cannot connect to the Docker daemon at "
                      "unix:///var/run/docker.sock. Is the docker daemon running?' >&2\n"
                      "exit 1\n")
    script.chmod(0o755)


@pytest.mark.parametrize("docker", ["absent", "not answering"])
def test_plan_notes_what_launch_refuses_of_a_docker_image(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, docker: str) -> None:  # noqa: ANN001
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "local")
    tools = tmp_path / "bin"
    if docker == "absent":
        tools.mkdir()
    else:
        _fake_docker(tools)
    python = Path(os.__file__).parents[2] / "bin"
    monkeypatch.setenv("PATH", f"{tools}{os.pathsep}{python}")
    path = tmp_path / "dk.yaml"
    path.write_text(TASK)
    launched = cli("launch", path, "--wait", "0")
    assert launched.exit_code == 2, launched.output
    refused = _words(launched.output).removeprefix("error: ")
    assert refused.startswith(f"{path}: field resources.image_id: docker:python:3.11-slim"), \
        refused
    planned = cli("plan", path)
    assert planned.exit_code == 0, planned.output
    notes = [_words(line) for line in planned.stderr.splitlines() if "image_id" in line]
    assert notes == [f"note: launch needs: {refused}"], planned.stderr
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "aws")
    assert "image_id" not in cli("plan", path).stderr


def test_plan_says_nothing_of_a_task_without_an_image(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "local")
    monkeypatch.setenv("PATH", str(tmp_path))  # no docker: not asked for
    path = tmp_path / "job.yaml"
    path.write_text(TASK.replace(", image_id: 'docker:python:3.11-slim'", ""))
    planned = cli("plan", path)
    assert planned.exit_code == 0 and "docker" not in planned.stderr.lower(), planned.output

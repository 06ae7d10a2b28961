"""A machine whose Docker daemon hangs (a stand-in `docker` on PATH that never answers,
tests/launchers/fake_docker): `plan` of a task with a Docker image notes what the local
launcher's `launch` refuses, and `launch` refuses it, in one line each, asking the daemon
once (a sweep's jobs alike) and killing the client; a task without an image never calls
docker at all."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.costsched.cli.test_launch_written_secret import _state
from tests.launchers import fake_docker
from tests.launchers.test_container_runtime import left_running

TASK = ("name: dk\nresources: {accelerators: L4:1, image_id: 'docker:python:3.11-slim'}\n"
        "run: python -c 'print(1)'\ncostsched: {model: ResNet-50 (batch size 64), "
        "steps: 100, sweep: {LR: [0.1, 0.01, 0.001]}}\n")
HUNG = ("field resources.image_id: docker:python:3.11-slim: the local launcher runs the job "
        "on this machine, which has Docker, whose daemon did not answer `docker version` in "
        "3 s; start Docker (sudo systemctl start docker), or launch on aws or gcp")


def _words(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture()
def docker_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "local")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    return tmp_path / "docker.log"


def test_a_hung_docker_daemon_is_noted_by_plan_once_for_a_sweep(
        cli, tmp_path: Path, docker_log: Path) -> None:  # noqa: ANN001
    fake_docker.install(tmp_path / "bin", docker_log, hung=True)
    path = tmp_path / "dk.yaml"
    path.write_text(TASK)
    planned = cli("plan", path)
    assert planned.exit_code == 0, planned.output
    notes = [_words(line) for line in planned.stderr.splitlines() if "image_id" in line]
    assert notes == [f"note: launch needs: {path}: {HUNG}"], planned.stderr
    assert [c["cmd"] for c in fake_docker.calls(docker_log)] == ["version"]  # 3 jobs, asked once
    assert left_running(docker_log) == []


def test_a_hung_docker_daemon_refuses_launch_in_one_line(
        cli, tmp_path: Path, docker_log: Path) -> None:  # noqa: ANN001
    fake_docker.install(tmp_path / "bin", docker_log, hung=True)
    path = tmp_path / "dk.yaml"
    path.write_text(TASK)
    launched = cli("launch", path, "--wait", "0")
    assert launched.exit_code == 2, launched.output
    assert _words(launched.output) == f"error: {path}: {HUNG}"
    assert [c["cmd"] for c in fake_docker.calls(docker_log)] == ["version"]
    assert left_running(docker_log) == []
    assert not list((tmp_path / "instances").glob("*/instance.json"))


def test_a_task_without_an_image_never_calls_docker(
        cli, tmp_path: Path, docker_log: Path) -> None:  # noqa: ANN001
    fake_docker.install(tmp_path / "bin", docker_log, hung=True)
    path = tmp_path / "plain.yaml"
    path.write_text(TASK.replace(", image_id: 'docker:python:3.11-slim'", ""))
    planned = cli("plan", path)
    assert planned.exit_code == 0 and "docker" not in planned.stderr.lower(), planned.output
    launched = cli("launch", path, "--wait", "0", "--json")
    assert launched.exit_code == 0, launched.output
    jobs = json.loads(launched.stdout)
    assert len(jobs) == 3
    deadline = time.monotonic() + 90  # a stop for a job that never ends, not a bound
    while any(_state(cli, j["id"]) not in ("succeeded", "failed") for j in jobs) \
            and time.monotonic() < deadline:
        time.sleep(0.3)
    assert [_state(cli, j["id"]) for j in jobs] == ["succeeded"] * 3
    assert fake_docker.calls(docker_log) == []


def test_a_sweep_launched_asks_a_docker_daemon_that_answers_once_a_check(
        cli, tmp_path: Path, docker_log: Path) -> None:  # noqa: ANN001
    """Once before the store is opened, once as the jobs are launched: not once a job."""
    fake_docker.install(tmp_path / "bin", docker_log)
    path = tmp_path / "dk.yaml"
    path.write_text(TASK)
    launched = cli("launch", path, "--wait", "0", "--json")
    assert launched.exit_code == 0, launched.output
    jobs = json.loads(launched.stdout)
    assert len(jobs) == 3
    deadline = time.monotonic() + 90  # a stop for a job that never ends, not a bound
    while any(_state(cli, j["id"]) not in ("succeeded", "failed") for j in jobs) \
            and time.monotonic() < deadline:
        time.sleep(0.3)
    assert [_state(cli, j["id"]) for j in jobs] == ["succeeded"] * 3
    assert [c["cmd"] for c in fake_docker.calls(docker_log)
            if c["cmd"] == "version"] == ["version"] * 2

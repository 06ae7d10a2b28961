"""Whether this machine can run a task's Docker image (`containers.runtime_missing`, what
the local launcher refuses by): asked of the real client, a stand-in `docker` on PATH here
(tests/launchers/fake_docker), as a subprocess of its own. A daemon that does not answer
is said within `DAEMON_TIMEOUT`, the client and whatever it started killed; the answer is
asked once in a pass (a sweep's jobs, one command)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from costsched.passes import one_pass
from launchers import containers
from tests.launchers import fake_docker


def _docker_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **kind: bool) -> Path:
    log = tmp_path / "docker.log"
    fake_docker.install(tmp_path / "bin", log, **kind)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    return log


def left_running(log: Path) -> list[int]:
    """The live (not zombie) processes a stand-in logging to `log` started: it and what
    it started (they share its environment)."""
    mark = f"FAKE_DOCKER_LOG={log}".encode()
    found = []
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if mark in environ.split(b"\0") and state != "Z":
            found.append(int(entry.name))
    return found


def test_a_daemon_that_does_not_answer_is_said_and_the_client_killed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _docker_on_path(tmp_path, monkeypatch, hung=True)
    said = containers.runtime_missing()
    assert said == (f"Docker, whose daemon did not answer `docker version` in "
                    f"{containers.DAEMON_TIMEOUT:g} s; start Docker (sudo systemctl start "
                    "docker)")
    [call] = fake_docker.calls(log)  # it ran, and started a helper of its own
    assert call["argv"] == ["docker", "version", "--format", "{{.Server.Version}}"]
    # the client and its helper: killed, not left waiting (a killed process takes a moment
    # to end on a loaded machine; one left running sleeps for an hour)
    deadline = time.monotonic() + 30  # a hang's bound, not a speed
    while left_running(log) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert left_running(log) == []


def test_the_daemon_is_asked_within_a_few_seconds() -> None:
    assert 0 < containers.DAEMON_TIMEOUT <= 5


def test_a_daemon_that_answers_is_asked_once_in_a_pass(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _docker_on_path(tmp_path, monkeypatch)
    with one_pass():
        assert [containers.runtime_missing() for _ in range(3)] == ["", "", ""]
    assert [c["cmd"] for c in fake_docker.calls(log)] == ["version"]
    assert containers.runtime_missing() == ""  # outside a pass: asked afresh
    assert [c["cmd"] for c in fake_docker.calls(log)] == ["version", "version"]


def test_a_stopped_daemon_is_said_in_the_clients_words(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _docker_on_path(tmp_path, monkeypatch, stopped=True)
    assert containers.runtime_missing() == (
        f"Docker, whose daemon does not answer ({fake_docker.STOPPED}); start Docker (sudo "
        "systemctl start docker)")

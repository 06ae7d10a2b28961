"""A job in a Docker image, through the real agent (a subprocess) and a stand-in `docker`
on PATH that records what it is asked and runs the command (tests/launchers/fake_docker):
the exact `docker run` the agent issues for setup and for the job, setup's changes kept
(`docker commit`), a stop forwarded into the container as SIGTERM and the checkpoint kept,
private registries logged in to with the password on stdin only, and an image that cannot
be pulled failing the attempt in one line."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from launchers import containers
from launchers.checkpoints import open_store
from tests.launchers import fake_docker
from tests.launchers.test_agent import finish, step_of, train, wait_for

IMAGE = "nvcr.io/nvidia/pytorch:24.07-py3"
SECRET = "dckr_pat_Zq8Wn3Kx5Lp2Rt7Vb4"


@pytest.fixture()
def docker(tmp_path: Path) -> Path:
    """The stand-in's log; its `docker` first on PATH."""
    log = tmp_path / "docker.log"
    fake_docker.install(tmp_path / "bin", log)
    return log


def agent(tmp_path: Path, command: str, image: dict, *extra: str,
          env: dict[str, str] | None = None) -> subprocess.Popen:
    argv = [sys.executable, "-m", "launchers.agent", "--job-id", "7", "--checkpoint-uri",
            str(tmp_path / "store"), "--workdir", str(tmp_path / "work"), "--poll", "0.1",
            "--image", json.dumps(image), *extra, "--", command]
    path = f"{tmp_path / 'bin'}:{os.environ['PATH']}"
    return subprocess.Popen(argv, env={**os.environ, "PATH": path, **(env or {})},
                            start_new_session=True, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def spec(**more: Any) -> dict:
    return {"ref": IMAGE, "envs": ["GREETING"], "gpus": True, "checkpoints_at": "",
            **more}


def test_setup_and_run_go_through_the_exact_docker_run(tmp_path: Path,
                                                       docker: Path) -> None:
    work = tmp_path / "work"
    status, out = finish(agent(
        tmp_path, 'echo "$GREETING from $COSTSCHED_JOB_ID" > "$CHECKPOINT_DIR/out.txt"',
        spec(checkpoints_at="/checkpoint"), "--setup", "echo set up > ../setup-ran",
        env={"GREETING": "hello", "NOT_THE_JOBS": "x"}), tmp_path)
    assert status["state"] == "succeeded", (status, out)
    assert (work / "checkpoints" / "out.txt").read_text() == "hello from 7\n"
    assert (work / "setup-ran").exists()

    calls = fake_docker.calls(docker)
    assert [c["cmd"] for c in calls] == ["pull", "run", "commit", "rm", "run"]
    assert calls[0]["argv"][-2:] == ["pull", IMAGE] and not calls[0]["logged_in"]
    setup, job = calls[1], calls[4]
    key = hashlib.sha256(str(work).encode()).hexdigest()[:10]
    user = [] if os.geteuid() == 0 else ["--user", f"{os.geteuid()}:{os.getegid()}"]
    envs = f"/dev/shm/costsched-{key}/env"
    common = ["--network", "host", "--ipc", "host", "-v", f"{work}:{work}",
              "-v", f"{envs}:{envs}:ro", "-v", f"{work / 'checkpoints'}:/checkpoint",
              "-w", str(work / "code"), "--gpus", "all", *user, "--entrypoint", "/bin/sh"]
    assert setup["argv"] == ["docker", "run", "--name", f"costsched-{key}-setup", *common,
                             IMAGE, "-c", containers.WRAPPER, "echo set up > ../setup-ran",
                             envs, "1"]  # setup: the first command, which says the shell
    assert calls[2]["argv"] == ["docker", "commit", f"costsched-{key}-setup",
                                f"costsched-{key}:setup"]
    assert job["argv"] == ["docker", "run", "--rm", "--name", f"costsched-{key}-run",
                           *common, f"costsched-{key}:setup", "-c", containers.WRAPPER,
                           'echo "$GREETING from $COSTSCHED_JOB_ID" > '
                           '"$CHECKPOINT_DIR/out.txt"', envs, ""]
    # the envs reach the job through the file only (docker keeps none of them, nor does
    # the image setup's changes were committed to), and the file is gone once it ends
    assert set(job["env"]) == set() and not Path(envs).exists()


def test_the_envs_file_holds_the_jobs_envs_only_for_its_owner(tmp_path: Path) -> None:
    box = containers.Container(IMAGE, tmp_path, env_names=("SECRET_TOKEN", "B-AD"))
    env = {"SECRET_TOKEN": "it's a $secret", "B-AD": "x", "PATH": os.environ["PATH"],
           "COSTSCHED_JOB_ID": "7"}
    path = box.env_file(env)
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    shown = subprocess.run(["/bin/sh", "-c", f'set -a; . "{path}"; set +a; '
                            'printf "%s|%s" "$SECRET_TOKEN" "$COSTSCHED_JOB_ID"'],
                           capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"})
    assert shown.stdout == "it's a $secret|7"  # quoted as it is, nothing expanded
    assert "B-AD" not in path.read_text()  # not a name a shell can set: left out
    box.forget_envs()
    assert not path.exists()


def test_a_stop_reaches_the_job_in_its_container_and_the_checkpoint_is_kept(
        tmp_path: Path, docker: Path) -> None:
    proc = agent(tmp_path, train(100_000), spec(gpus=False))
    store = open_store(str(tmp_path / "store"))
    wait_for(lambda: store.list(), timeout=60)
    os.kill(proc.pid, signal.SIGTERM)
    status, out = finish(proc, tmp_path)
    assert status["state"] == "stopped" and status["detail"] == "stop requested", (status,
                                                                                  out)
    log = (tmp_path / "work" / "job.log").read_text()
    stopped_at = int(log.split("checkpointed at step")[1].split(",")[0])  # its handler ran
    assert step_of(store, tmp_path) == stopped_at  # its last checkpoint, published
    run = [c for c in fake_docker.calls(docker) if c["cmd"] == "run"]
    assert len(run) == 1 and "--gpus" not in run[0]["argv"]
    # no setup: the job runs in the image as pulled
    assert run[0]["image"] == IMAGE


def test_a_private_registry_gets_the_password_on_stdin_only(tmp_path: Path,
                                                            docker: Path) -> None:
    image = "registry.example.com/team/trainer:2.1"
    status, out = finish(agent(
        tmp_path, "true", spec(ref=image, envs=["SKYPILOT_DOCKER_USERNAME"]),
        env={"SKYPILOT_DOCKER_USERNAME": "robot", "SKYPILOT_DOCKER_PASSWORD": SECRET,
             "SKYPILOT_DOCKER_SERVER": "registry.example.com"}), tmp_path)
    assert status["state"] == "succeeded", (status, out)
    login, pull = [c for c in fake_docker.calls(docker) if c["cmd"] in ("login", "pull")]
    assert login["argv"] == ["docker", "login", "--username", "robot", "--password-stdin",
                             "registry.example.com"]
    assert login["password_sha256"] == hashlib.sha256(SECRET.encode()).hexdigest()
    assert login["config_exists"] and pull["logged_in"]
    assert pull["config"] == login["config"] and not Path(login["config"]).exists()
    for f in [*tmp_path.rglob("*")]:  # never in a log, a status or what docker recorded
        if f.is_file():
            assert SECRET.encode() not in f.read_bytes(), f
    assert SECRET not in out


def test_an_image_that_cannot_be_pulled_fails_the_attempt_in_one_line(
        tmp_path: Path, docker: Path) -> None:
    status, _ = finish(agent(tmp_path, "true", spec(ref="team/no-such-image:1")), tmp_path)
    assert status["state"] == "failed" and status["phase"] == "image"
    assert status["detail"] == ("image team/no-such-image:1: pull failed: Error response "
                                "from daemon: manifest for team/no-such-image:1 not found")
    assert [c["cmd"] for c in fake_docker.calls(docker)] == ["pull"]


def test_ecr_images_log_in_with_the_instances_role(monkeypatch: pytest.MonkeyPatch) -> None:
    moto = pytest.importorskip("moto")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with moto.mock_aws():
        server, user, password = containers.registry_login(
            "123456789012.dkr.ecr.us-west-2.amazonaws.com/team/train:3", {})
    assert server == "123456789012.dkr.ecr.us-west-2.amazonaws.com" and user == "AWS"
    assert password  # ECR's token, from the role's credentials


@pytest.fixture()
def google_metadata(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict]]:
    asked: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            asked.append({"path": self.path, "flavor": self.headers.get("Metadata-Flavor")})
            body = json.dumps({"access_token": "ya29.token", "expires_in": 3599}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    monkeypatch.setenv("GCE_METADATA_HOST", f"127.0.0.1:{server.server_address[1]}")
    yield asked
    server.shutdown()
    server.server_close()


def test_google_registries_log_in_with_the_service_account(
        google_metadata: list[dict]) -> None:
    login = containers.registry_login("us-docker.pkg.dev/proj/repo/train:1", {})
    assert login == ("us-docker.pkg.dev", "oauth2accesstoken", "ya29.token")
    assert google_metadata == [{
        "path": "/computeMetadata/v1/instance/service-accounts/default/token",
        "flavor": "Google"}]
    assert containers.registry_login("ubuntu:20.04", {}) is None  # Docker Hub, public
    assert containers.registry_of("ubuntu:20.04") == "docker.io"
    assert containers.registry_of("localhost:5000/x") == "localhost:5000"


def test_the_wrapper_spares_the_shell_and_forwards_to_its_processes(tmp_path: Path) -> None:
    """WRAPPER on its own, as the container's first process: SIGTERM reaches the job's
    processes (a trap in the job writes its checkpoint), the shell waits, and the exit
    code is the job's."""
    ready = tmp_path / "ready"
    job = (f"{sys.executable} -c \"import signal, sys, time, pathlib; "
           "signal.signal(signal.SIGTERM, lambda *a: (pathlib.Path('done').write_text('ckpt'),"
           f" sys.exit(0))); pathlib.Path('{ready}').touch(); time.sleep(60)\"; echo $? > code")
    proc = subprocess.Popen(["/bin/sh", "-c", containers.WRAPPER, job], cwd=tmp_path,
                            start_new_session=True)
    wait_for(ready.exists)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    assert (tmp_path / "done").read_text() == "ckpt"
    assert (tmp_path / "code").read_text().strip() == "0"  # the shell lived to say it


def test_agent_args_carry_the_image_env_names_and_checkpoint_path() -> None:
    task = {"image_id": f"docker:{IMAGE}", "checkpoint_mount": "/ckpt"}
    [flag, document] = containers.agent_args(task, ["B", "A", "B"], gpus=True)
    assert flag == "--image" and json.loads(document) == {
        "ref": IMAGE, "envs": ["A", "B"], "gpus": True, "checkpoints_at": "/ckpt"}
    assert containers.agent_args({"image_id": "ami-123"}, [], gpus=True) == []

"""launchers/agent.py as a real subprocess around real jobs, with a local checkpoint store."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from launchers.checkpoints import CheckpointStore, open_store

TRAIN = Path(__file__).resolve().parents[2] / "examples" / "train.py"


def start_agent(tmp_path: Path, command: str, *extra: str,
                env: dict[str, str] | None = None) -> subprocess.Popen:
    argv = [sys.executable, "-m", "launchers.agent", "--job-id", "7", "--checkpoint-uri",
            str(tmp_path / "store"), "--workdir", str(tmp_path / "work"), "--poll", "0.1",
            *extra, "--", command]
    return subprocess.Popen(argv, env={**os.environ, **(env or {})}, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def finish(proc: subprocess.Popen, tmp_path: Path) -> tuple[dict, str]:
    """(status.json, the agent's output) once the agent has exited."""
    out, _ = proc.communicate(timeout=60)
    return json.loads((tmp_path / "work" / "status.json").read_text()), out


def wait_for(predicate: Callable[[], object], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def train(steps: int = 400) -> str:
    return (f"{sys.executable} {TRAIN} --steps {steps} --step-seconds 0.004 "
            "--checkpoint-every 0.1")


def step_of(store: CheckpointStore, tmp_path: Path) -> int:
    newest = store.newest_verified()
    assert newest is not None
    dest = tmp_path / f"fetched-{newest.version}"
    return int(np.load(store.fetch(newest, dest) / "checkpoint.npz")["step"])


def test_a_finished_job_is_published_verified_and_pruned(tmp_path: Path) -> None:
    status, _ = finish(start_agent(tmp_path, train(300)), tmp_path)
    assert status["state"] == "succeeded" and status["exit_code"] == 0
    store = open_store(str(tmp_path / "store"))
    versions = store.list()
    assert 1 <= len(versions) <= 3  # published every 0.1 s, pruned to the last 3
    assert all(store.verify(c) for c in versions)
    assert status["checkpoint_version"] == versions[-1].version
    assert step_of(store, tmp_path) == 300
    local = tmp_path / "work" / "checkpoints" / "checkpoint.npz"
    fetched = store.fetch(versions[-1], tmp_path / "f") / "checkpoint.npz"
    assert fetched.read_bytes() == local.read_bytes()
    assert "done: 300 steps" in (tmp_path / "work" / "job.log").read_text()


def test_the_job_gets_the_contract_environment_and_temp_files_stay_local(
        tmp_path: Path) -> None:
    command = ('printf "%s|%s|%s|%s" "$COSTSCHED_JOB_ID" "$COSTSCHED_CHECKPOINT_DIR" '
               '"$CHECKPOINT_DIR" "$SKYPILOT_TASK_ID" > "$CHECKPOINT_DIR/env.txt"; '
               'echo half > "$CHECKPOINT_DIR/model.pt.tmp"; sleep 0.4')
    status, _ = finish(start_agent(tmp_path, command), tmp_path)
    assert status["state"] == "succeeded"
    store = open_store(str(tmp_path / "store"))
    assert [c.name for c in store.list()] == ["env.txt"]
    ckpt = str((tmp_path / "work" / "checkpoints").resolve())
    fetched = store.fetch(store.list()[0], tmp_path / "out")
    assert fetched.read_text() == f"7|{ckpt}|{ckpt}|costsched-job-7"


def test_a_touched_but_unchanged_file_is_not_published_again(tmp_path: Path) -> None:
    command = ('echo a > "$CHECKPOINT_DIR/f"; sleep 0.4; touch "$CHECKPOINT_DIR/f"; '
               'sleep 0.4; echo b > "$CHECKPOINT_DIR/f"; sleep 0.4')
    status, _ = finish(start_agent(tmp_path, command), tmp_path)
    store = open_store(str(tmp_path / "store"))
    assert [c.size for c in store.list()] == [2, 2]  # "a\n" once, then "b\n"
    assert status["checkpoint_version"] == 2


def test_restores_the_newest_verified_checkpoint(tmp_path: Path) -> None:
    store = open_store(str(tmp_path / "store"))
    for text in ("old", "good", "bad"):
        (tmp_path / "state.txt").write_text(text)
        store.publish(tmp_path / "state.txt")
    newest = store.list()[-1]
    data = next((tmp_path / "store").glob(f"v*{newest.version}/state.txt"))
    data.write_text("BAD")  # same size, other bytes: the newest no longer verifies
    command = 'cp "$CHECKPOINT_DIR/state.txt" "$CHECKPOINT_DIR/../seen.txt"'
    status, out = finish(start_agent(tmp_path, command), tmp_path)
    assert (tmp_path / "work" / "seen.txt").read_text() == "good"
    assert status["checkpoint_version"] == 2  # restored, and nothing new to publish
    assert len(store.list()) == 3
    assert "version 3 does not verify" in out


def test_sigterm_stops_the_job_with_a_final_checkpoint(tmp_path: Path) -> None:
    proc = start_agent(tmp_path, train(5000))
    store = open_store(str(tmp_path / "store"))
    wait_for(store.list)
    proc.send_signal(signal.SIGTERM)
    status, out = finish(proc, tmp_path)
    assert proc.returncode == 0
    assert status["state"] == "stopped" and status["exit_code"] == 0
    log = (tmp_path / "work" / "job.log").read_text()
    stopped_at = int(log.split("checkpointed at step ")[1].split(",")[0])
    assert 0 < stopped_at < 5000
    assert step_of(store, tmp_path) == stopped_at  # the final publish holds the last step
    assert status["checkpoint_version"] == store.list()[-1].version
    assert status["checkpoint_step"] == status["step"] == stopped_at  # where a start resumes


class Metadata(BaseHTTPRequestHandler):
    """A cloud's metadata server: AWS (404 until a notice, then JSON) or GCP (FALSE/TRUE)."""

    noticed = threading.Event()
    style = "aws"

    def do_GET(self) -> None:  # noqa: N802 - the http.server API
        if self.style == "gcp":
            body, code = (b"TRUE" if self.noticed.is_set() else b"FALSE"), 200
        elif self.noticed.is_set():
            body, code = b'{"action": "terminate", "time": "2026-01-01T00:02:00Z"}', 200
        else:
            body, code = b"Not Found", 404
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(params=["aws", "gcp"])
def metadata(request: pytest.FixtureRequest) -> Iterator[tuple[str, threading.Event]]:
    handler = type("Handler", (Metadata,), {"noticed": threading.Event(),
                                            "style": request.param})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/notice", handler.noticed
    server.shutdown()
    server.server_close()


def test_a_preemption_notice_stops_the_job(tmp_path: Path,
                                           metadata: tuple[str, threading.Event]) -> None:
    url, noticed = metadata
    proc = start_agent(tmp_path, train(5000), "--notice-url", url)
    store = open_store(str(tmp_path / "store"))
    wait_for(store.list)
    time.sleep(0.3)
    assert proc.poll() is None  # no notice yet: the job trains on
    noticed.set()
    status, _ = finish(proc, tmp_path)
    assert status["state"] == "stopped" and status["detail"] == "preemption notice"
    assert "SIGTERM: checkpointed at step" in (tmp_path / "work" / "job.log").read_text()
    assert status["checkpoint_version"] == store.list()[-1].version


def test_a_command_that_does_not_exist_fails_with_127(tmp_path: Path) -> None:
    status, _ = finish(start_agent(tmp_path, "no-such-command-costsched --now"), tmp_path)
    assert status["state"] == "failed" and status["exit_code"] == 127
    assert "command not found" in status["detail"]
    assert "no-such-command-costsched" in status["detail"]


def test_credentials_in_the_environment_are_not_printed_or_stored(tmp_path: Path) -> None:
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYSECRETKEY"
    status, out = finish(start_agent(tmp_path, "exit 3",
                                     env={"AWS_SECRET_ACCESS_KEY": secret}), tmp_path)
    assert status["state"] == "failed" and status["exit_code"] == 3
    written = [p.read_text(errors="replace") for p in (tmp_path / "work").rglob("*")
               if p.is_file()]
    assert secret not in out and not any(secret in text for text in written)

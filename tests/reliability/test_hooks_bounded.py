"""Hooks bounded in wall time (one deadline per call, not per read), output (discarded, not
buffered) and process lifetime (the command's whole process group ends with the call)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched import daemon as scheduled
from costsched.cli import app
from costsched.config import Config
from costsched.notify import notify

ROOT = Path(__file__).resolve().parents[2]

# A bound that tells a call ended at its deadline from one that did not (the alternatives
# take 120 s or more); never a speed limit: a busy machine may be slow around the call.
HANG = 60.0


@pytest.fixture()
def dribbling_server() -> Iterator[str]:
    """A webhook that reads the request, then answers one byte a second, forever."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=dribble, args=(conn,), daemon=True).start()

    def dribble(conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            for byte in b"HTTP/1.1 200 OK\r\n" + b"X-Slow: " + b"x" * 1000:
                if stop.is_set():
                    return
                try:
                    conn.sendall(bytes([byte]))
                except OSError:
                    return
                time.sleep(1.0)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/hook?token=dribble-secret"
    stop.set()
    thread.join(5)
    listener.close()


def config(**notify_keys: object) -> Config:
    return Config.model_validate({"notify": notify_keys})


def test_a_dribbling_webhook_is_given_up_at_the_deadline(dribbling_server: str,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    started = time.monotonic()
    result = notify(config(webhook=dribbling_server, timeout_seconds=2), "failure")
    took = time.monotonic() - started
    assert result.webhook is False
    assert 2 <= took < HANG, took  # the dribble would last 1,000 s
    assert "no answer within 2 s" in caplog.text
    assert "dribble-secret" not in caplog.text and "token=***" in caplog.text


def test_daemon_once_returns_within_the_deadline(dribbling_server: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(_daemon: object, _at: object) -> str:
        raise RuntimeError("the price source is down")

    monkeypatch.setitem(scheduled.TASK_FUNCTIONS, "collect", fail)
    monkeypatch.setitem(scheduled.TASK_FUNCTIONS, "replan", lambda _d, _a: "nothing to do")
    monkeypatch.setitem(scheduled.TASK_FUNCTIONS, "catalog", lambda _d, _a: "up to date")
    path = tmp_path / "config.toml"
    path.write_text(f'db = "{tmp_path / "store.sqlite"}"\n[notify]\nwebhook = '
                    f'"{dribbling_server}"\ntimeout_seconds = 2\n')
    started = time.monotonic()
    result = CliRunner().invoke(app, ["daemon", "--once", "--config", str(path)])
    took = time.monotonic() - started
    assert result.exit_code == 1, result.output
    assert "collect: failed: RuntimeError: the price source is down" in result.stdout
    assert took < HANG, took  # one 2 s notification, not one per byte (1,000 s)


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"  # a zombie has ended; only its parent (init here) has to reap it


def spawner(pid_file: Path, *, then: str) -> list[str]:
    """A command that starts a sleeping child (writing its pid), then does `then`."""
    code = ("import subprocess, sys, time, pathlib\n"
            "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
            f"pathlib.Path({str(pid_file)!r}).write_text(str(child.pid))\n{then}\n")
    return [sys.executable, "-c", code]


def wait_for_file(path: Path) -> int:
    deadline = time.monotonic() + HANG
    while time.monotonic() < deadline:
        if path.exists() and path.read_text():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} was not written")


def test_a_hanging_command_and_its_children_are_killed_at_the_deadline(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    started = time.monotonic()
    result = notify(config(command=spawner(pid_file, then="time.sleep(120)"), timeout_seconds=2),
                    "failure")
    took = time.monotonic() - started
    assert result.command is False
    assert took < HANG, took  # the command would sleep 120 s
    child = wait_for_file(pid_file)
    time.sleep(0.2)
    assert not alive(child), f"the hook's child {child} outlived the call"


def test_a_command_that_leaves_a_child_behind_has_it_ended(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    result = notify(config(command=spawner(pid_file, then="pass"), timeout_seconds=10),
                    "failure")
    assert result.command is True
    child = wait_for_file(pid_file)
    time.sleep(0.2)
    assert not alive(child), f"the hook's child {child} outlived the call"


def test_a_command_printing_a_gigabyte_keeps_memory_small(tmp_path: Path) -> None:
    """The hook writes 1 GiB to stderr and 256 MiB to stdout; the process running it (a
    subprocess, so that its peak is its own) stays small. The peak is read as VmHWM: the
    rusage peak of a process started from a large one (a test worker) keeps the parent's."""
    writer = ("import sys\nchunk = b'x' * (1 << 20)\n"
              "for _ in range(1024): sys.stderr.buffer.write(chunk)\n"
              "for _ in range(256): sys.stdout.buffer.write(chunk)\n"
              "sys.stderr.buffer.write(b'\\nlast words\\n'); sys.exit(3)\n")
    runner = ("import sys, json\nfrom costsched.config import Config\n"
              "from costsched.notify import notify\n"
              "cfg = Config.model_validate({'notify': {'command': json.loads(sys.argv[1]),"
              " 'timeout_seconds': 120}})\n"
              "print(notify(cfg, 'failure').command)\n"
              "status = open('/proc/self/status').read()\n"
              "print(int(status.split('VmHWM:')[1].split()[0]) // 1024)\n")
    done = subprocess.run([sys.executable, "-c", runner,
                           json.dumps([sys.executable, "-c", writer])],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    said, peak_mib = done.stdout.split()
    assert said == "False"
    assert "exit status 3: last words" in done.stderr
    assert int(peak_mib) < 400, f"peak RSS {peak_mib} MiB"
    print(f"peak RSS of the process running the hook: {peak_mib} MiB")


def test_notify_timeout_is_configured(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    path.write_text("[notify]\ntimeout_seconds = inf\n")
    result = CliRunner().invoke(app, ["config", "show", "--config", str(path)])
    assert result.exit_code == 2
    assert "notify.timeout_seconds inf: expected a finite number" in result.stderr
    assert os.environ.get("COSTSCHED_NOTIFY_TIMEOUT_SECONDS") is None

"""The agent's supervisor with a stand-in agent, as real processes: a supervisor started
again while the agent of a dead supervisor still runs waits for that agent (one agent at a
time); once it is gone, the job it left (its process group) is stopped before a new agent
starts; an agent that ends by itself is not started again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from launchers.procfs import group_members, has_proc, proc_stat

REAL = Path(__file__).resolve().parents[2]

# A stand-in agent: leads its process group, says it started, writes its heartbeat, starts
# a "job" in its group; the first one runs on until killed, the next one succeeds.
AGENT = """
import json, os, subprocess, sys, time
from pathlib import Path
os.setpgid(0, 0)
work = Path(sys.argv[1])
runs = work / "runs"
runs.write_text(runs.read_text() + f"{os.getpid()} {time.time()}\\n" if runs.exists()
                else f"{os.getpid()} {time.time()}\\n")
(work / "heartbeat").write_text(json.dumps({"pid": os.getpid(), "at": time.time()}))
if len(runs.read_text().splitlines()) == 1:
    job = subprocess.Popen(["sleep", "60"])
    (work / "job").write_text(str(job.pid))
    time.sleep(60)
(work / "status.json").write_text(json.dumps({"state": "succeeded"}))
"""


def supervisor(launch: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "launchers.agent_supervisor", str(launch)],
                            cwd=REAL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)


def wait_for(predicate, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


@pytest.mark.skipif(not has_proc(), reason="needs /proc")
def test_one_agent_at_a_time_and_a_dead_agents_job_stopped_first(tmp_path: Path) -> None:
    work = tmp_path / "work"
    launch = tmp_path / "launch.json"
    launch.write_text(json.dumps({
        "argv": [sys.executable, "-c", AGENT, str(work)], "workdir": str(work),
        "env": {"PATH": os.environ["PATH"], "PYTHONPATH": str(REAL)},
        "checkpoint_uri": str(tmp_path / "ckpt"), "publish": False, "grace_seconds": 2}))
    first = supervisor(launch)
    wait_for(lambda: (work / "job").exists())
    [(agent, _)] = [line.split() for line in (work / "runs").read_text().splitlines()]
    job = int((work / "job").read_text())
    os.killpg(first.pid, signal.SIGKILL)  # the supervisor dies; its agent lives on
    first.wait()
    second = supervisor(launch)
    time.sleep(1.5)
    assert second.poll() is None
    assert len((work / "runs").read_text().splitlines()) == 1  # it waits for that agent
    killed_at = time.time()
    os.kill(int(agent), signal.SIGKILL)
    assert second.wait(timeout=30) == 0, second.stderr.read().decode()
    runs = (work / "runs").read_text().splitlines()
    assert len(runs) == 2 and float(runs[1].split()[1]) >= killed_at
    assert not group_members(int(agent))  # the dead agent's job was stopped
    ended = proc_stat(job)
    assert ended is None or ended.state == "Z"  # gone (or dead, its parent gone too)
    assert json.loads((work / "status.json").read_text())["state"] == "succeeded"


@pytest.mark.skipif(not has_proc(), reason="needs /proc")
def test_a_heartbeat_from_before_the_machine_started_names_no_process(tmp_path: Path) -> None:
    from launchers.agent_supervisor import _previous_agent

    up = float(Path("/proc/uptime").read_text().split()[0])
    (tmp_path / "heartbeat").write_text(json.dumps({"pid": os.getpid(), "at": time.time()}))
    assert _previous_agent(tmp_path) == os.getpid()
    (tmp_path / "heartbeat").write_text(json.dumps({"pid": os.getpid(),
                                                    "at": time.time() - up - 60}))
    assert _previous_agent(tmp_path) is None  # written before a reboot: not signalled
    (tmp_path / "heartbeat").unlink()
    assert _previous_agent(tmp_path) is None

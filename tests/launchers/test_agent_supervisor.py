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


@pytest.mark.skipif(not has_proc(), reason="needs /proc")
def test_a_dead_agents_container_is_stopped_and_checkpointed_before_an_agent_starts_again(
        tmp_path: Path) -> None:
    """The supervisor's whole unit killed (systemd ending its cgroup: the supervisor, the
    agent and its docker client): the job's container, in the runtime's care, runs on. The
    supervisor started again stops it as a stop ends a job (SIGTERM: the job checkpoints),
    publishes that checkpoint, and only then starts an agent, whose container resumes from
    it: one container at a time, and no step done twice."""
    from launchers.checkpoints import open_store
    from tests.launchers import fake_docker
    from tests.launchers.test_agent import train

    docker = tmp_path / "docker.log"
    fake_docker.install(tmp_path / "bin", docker)
    work, store_uri = tmp_path / "work", str(tmp_path / "store")
    image = {"ref": "nvcr.io/nvidia/pytorch:24.07-py3", "envs": [], "gpus": False,
             "checkpoints_at": ""}
    launch = tmp_path / "launch.json"
    launch.write_text(json.dumps({
        "argv": [sys.executable, "-m", "launchers.agent", "--job-id", "7", "--checkpoint-uri",
                 store_uri, "--workdir", str(work), "--poll", "0.1", "--image",
                 json.dumps(image), "--", train(1_000_000)],
        "workdir": str(work), "checkpoint_uri": store_uri, "publish": True,
        "grace_seconds": 60,  # a bound: the job checkpoints and exits at once
        "env": {"PATH": f"{tmp_path / 'bin'}:{os.environ['PATH']}", "PYTHONPATH": str(REAL),
                "HOME": str(tmp_path)}}))
    store = open_store(store_uri)
    first = supervisor(launch)
    wait_for(lambda: store.list(), timeout=120)
    agent = int(json.loads((work / "heartbeat").read_text())["pid"])
    [running] = docker.with_suffix(".containers").glob("*-run.pid")
    container = int(running.read_text())
    os.killpg(first.pid, signal.SIGKILL)  # the unit's processes, all of them
    os.killpg(agent, signal.SIGKILL)  # the agent led its group: it and the docker client
    first.wait()
    wait_for(lambda: not group_members(agent))
    assert group_members(container)  # the container runs on

    second = supervisor(launch)
    log = work / "job.log"
    wait_for(lambda: "resumed at step" in log.read_text(), timeout=120)
    second.send_signal(signal.SIGTERM)  # then stopped as any job is (it would run long)
    assert second.wait(timeout=120) == 0, second.stderr.read().decode()

    calls = [c["cmd"] for c in fake_docker.calls(docker)]
    assert calls == ["pull", "run", "stop", "pull", "rm", "run"], calls
    stop = fake_docker.calls(docker)[2]
    assert stop["running"] and stop["graceful"]  # ended by its SIGTERM, not killed
    text = log.read_text()
    first_stop = int(text.split("checkpointed at step")[1].split(",")[0])
    assert f"resumed at step {first_stop}\n" in text, text  # from the stop's checkpoint
    assert text.count("resumed at step") == 1 and text.count("SIGTERM: checkpointed") == 2
    assert json.loads((work / "status.json").read_text())["state"] == "stopped"

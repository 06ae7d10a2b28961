"""A gang's node under a real agent subprocess: its job runs in rounds from the gang's
file; a paused round stops the job (killed after the grace period if it ignores SIGTERM)
and the agent waits, the same process, for the next round's addresses."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from launchers import gang_agent

ECHO = ('echo "round=$COSTSCHED_GANG_ROUND ips=$(echo $SKYPILOT_NODE_IPS) '
        'nodes=$SKYPILOT_NUM_NODES"')


def start(tmp_path: Path, command: str, rank: int = 1, wait: float = 60.0
          ) -> subprocess.Popen:
    argv = [sys.executable, "-m", "launchers.agent", "--job-id", "7", "--checkpoint-uri",
            str(tmp_path / "store"), "--workdir", str(tmp_path / "work"), "--poll", "0.1",
            "--gang-file", str(tmp_path / "gang.json"), "--rank", str(rank),
            "--gang-wait", str(wait), "--grace", "1", "--", command]
    return subprocess.Popen(argv, env=dict(os.environ), start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def gang_round(tmp_path: Path, number: int, paused: bool = False,
               ips: tuple[str, ...] = ("10.0.0.1", "10.0.0.2")) -> None:
    gang_agent.write(tmp_path / "gang.json", {"round": number, "paused": paused,
                                              "nodes": len(ips), "ips": list(ips)})


def status(tmp_path: Path) -> dict:
    try:
        return json.loads((tmp_path / "work" / "status.json").read_text())
    except (OSError, ValueError):
        return {}


def log(tmp_path: Path) -> str:
    try:
        return (tmp_path / "work" / "job.log").read_text()
    except OSError:
        return ""


def wait_for(predicate: Callable[[], object], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_a_round_is_told_the_gang_and_a_paused_round_waits_for_the_next(tmp_path) -> None:
    gang_round(tmp_path, 1)
    # round 1's job ignores SIGTERM: a paused round kills it after the grace period
    proc = start(tmp_path, f"{ECHO}; if [ $COSTSCHED_GANG_ROUND = 1 ]; then trap '' TERM; "
                 "while true; do sleep 0.1; done; fi; exec sleep 60")
    wait_for(lambda: "round=1 ips=10.0.0.1 10.0.0.2 nodes=2" in log(tmp_path))
    gang_round(tmp_path, 1, paused=True)
    wait_for(lambda: status(tmp_path).get("phase") == "paused")
    assert status(tmp_path)["round"] == 1 and proc.poll() is None  # the node is kept
    gang_round(tmp_path, 2, ips=("10.0.0.1", "10.0.0.9"))
    wait_for(lambda: "round=2 ips=10.0.0.1 10.0.0.9 nodes=2" in log(tmp_path))
    assert proc.poll() is None
    proc.send_signal(signal.SIGTERM)  # the gang ends: the agent stops its job and goes
    proc.communicate(timeout=30)
    assert status(tmp_path)["state"] == "stopped"


def test_a_job_that_fails_waits_for_the_launchers_word_then_ends_failed(tmp_path) -> None:
    gang_round(tmp_path, 1)
    proc = start(tmp_path, f"{ECHO}; exit 3")
    wait_for(lambda: status(tmp_path).get("phase") == "exited")
    said = status(tmp_path)
    assert said["state"] == "running" and said["outcome"] == "failed" and said["round"] == 1
    gang_round(tmp_path, 2)  # the gang was repaired: the job runs again
    wait_for(lambda: "round=2" in log(tmp_path))
    wait_for(lambda: status(tmp_path).get("round") == 2
             and status(tmp_path).get("phase") == "exited")
    proc.send_signal(signal.SIGTERM)  # the gang ended: its outcome is the round's
    proc.communicate(timeout=30)
    assert status(tmp_path)["state"] == "failed" and status(tmp_path)["exit_code"] == 3


def test_no_word_within_the_wait_ends_the_node_with_its_outcome(tmp_path) -> None:
    gang_round(tmp_path, 1)
    proc = start(tmp_path, f"{ECHO}; exit 0", rank=1, wait=1.0)
    proc.communicate(timeout=30)  # a worker that finished: it goes once nothing comes
    assert status(tmp_path)["state"] == "succeeded"


def test_rank_0_that_succeeds_ends_at_once(tmp_path) -> None:
    gang_round(tmp_path, 1)
    proc = start(tmp_path, f"{ECHO}; exit 0", rank=0, wait=600.0)
    proc.communicate(timeout=30)
    assert status(tmp_path)["state"] == "succeeded" and "round=1" in log(tmp_path)


def test_a_node_started_while_the_gang_is_paused_waits_for_the_next_round(tmp_path) -> None:
    gang_round(tmp_path, 3, paused=True)
    proc = start(tmp_path, f"{ECHO}; exit 0", rank=0)
    time.sleep(1.0)
    assert "round=" not in log(tmp_path) and proc.poll() is None
    gang_round(tmp_path, 4)
    proc.communicate(timeout=30)
    assert "round=4" in log(tmp_path) and "round=3" not in log(tmp_path)


def test_a_replacement_restores_what_rank_0_published_after_it_was_set_up(tmp_path) -> None:
    # A replacement is set up (restoring the newest checkpoint then) while the gang is
    # paused; rank 0 may publish its pause checkpoint only after that: the next round
    # must start from it, not from what the replacement found at its start.
    from launchers.checkpoints import open_store

    store = open_store(str(tmp_path / "store"))
    (tmp_path / "state.txt").write_text("round 1 began")
    store.publish(tmp_path / "state.txt")
    gang_round(tmp_path, 1, paused=True)
    proc = start(tmp_path, 'echo "round=$COSTSCHED_GANG_ROUND state=$(cat '
                           '"$CHECKPOINT_DIR/state.txt")"; exit 0')
    wait_for(lambda: status(tmp_path).get("phase") == "ready")
    (tmp_path / "state.txt").write_text("rank 0 paused")
    store.publish(tmp_path / "state.txt")  # rank 0's checkpoint, published late
    gang_round(tmp_path, 2)
    wait_for(lambda: "round=2" in log(tmp_path))
    os.killpg(proc.pid, signal.SIGTERM)
    proc.communicate(timeout=30)
    assert "round=2 state=rank 0 paused" in log(tmp_path)

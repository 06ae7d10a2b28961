"""A cloud gang's nodes under real agent subprocesses (`--gang-doc`): their rounds come
from the gang's address document beside the checkpoints (a folder store here; S3 and GCS
are the same two calls), as the EC2 and Compute Engine launchers write it. A paused round
stops both jobs, rank 0 checkpointing and saying it left the round; the next round, with a
replacement's address, starts both kept nodes again, the kept worker from rank 0's newest
checkpoint."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from launchers import cloud_gang
from tests.launchers.test_gang_agent import wait_for

DIGEST = "0123456789ab"
JOB = ('echo "round=$COSTSCHED_GANG_ROUND ips=$(echo $SKYPILOT_NODE_IPS) '
       'state=$(cat "$CHECKPOINT_DIR/state.txt" 2>/dev/null)"; '
       'if [ "$SKYPILOT_NODE_RANK" = 0 ] && [ "$COSTSCHED_GANG_ROUND" = 1 ]; then '
       'echo "rank 0 in round $COSTSCHED_GANG_ROUND" > "$CHECKPOINT_DIR/state.txt"; fi; '
       "trap 'exit 0' TERM; while true; do sleep 0.1; done")


def start(tmp_path: Path, rank: int) -> subprocess.Popen:
    work = tmp_path / f"node{rank}"
    argv = [sys.executable, "-m", "launchers.agent", "--job-id", "7", "--checkpoint-uri",
            str(tmp_path / "store"), "--workdir", str(work), "--poll", "0.1",
            "--gang-doc", DIGEST, "--rank", str(rank), "--gang-exit-wait", "0",
            "--grace", "2", *(["--no-publish"] if rank else []),
            "--", JOB]
    env = {**os.environ, "SKYPILOT_NODE_RANK": str(rank)}
    return subprocess.Popen(argv, env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def log(tmp_path: Path, rank: int) -> str:
    try:
        return (tmp_path / f"node{rank}" / "job.log").read_text()
    except OSError:
        return ""


def test_kept_nodes_follow_a_new_round_from_the_store(tmp_path) -> None:
    uri = str(tmp_path / "store")
    cloud_gang.publish_addresses(uri, DIGEST, ["10.0.0.1", "10.0.0.2"])
    procs = [start(tmp_path, 0), start(tmp_path, 1)]
    try:
        for rank in (0, 1):
            wait_for(lambda r=rank: "round=1 ips=10.0.0.1 10.0.0.2" in log(tmp_path, r))
        assert cloud_gang.read_left(uri, DIGEST) == (0, "")
        # Node 1 lost: the launcher pauses the round; rank 0 checkpoints and says so.
        cloud_gang.publish_addresses(uri, DIGEST, ["10.0.0.1", "10.0.0.2"], 1, paused=True)
        wait_for(lambda: cloud_gang.read_left(uri, DIGEST) == (1, "paused"))
        assert all(p.poll() is None for p in procs)  # the agents are kept
        # The replacement is up: round 2, with its address.
        cloud_gang.publish_addresses(uri, DIGEST, ["10.0.0.1", "10.0.0.9"], 2)
        for rank in (0, 1):
            wait_for(lambda r=rank: "round=2 ips=10.0.0.1 10.0.0.9" in log(tmp_path, r))
        # The kept worker restarted from rank 0's newest checkpoint (written in round 1).
        assert "round=2 ips=10.0.0.1 10.0.0.9 state=rank 0 in round 1" in log(tmp_path, 1)
        assert all(p.poll() is None for p in procs)
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
            proc.communicate(timeout=30)


def test_a_replacement_waits_set_up_and_says_so(tmp_path) -> None:
    uri = str(tmp_path / "store")
    cloud_gang.publish_addresses(uri, DIGEST, ["10.0.0.1", "10.0.0.2"], 3, paused=True)
    proc = start(tmp_path, 1)
    try:
        wait_for(lambda: cloud_gang.read_ready(uri, DIGEST, 1) == 3)
        assert "round=" not in log(tmp_path, 1)
        cloud_gang.publish_addresses(uri, DIGEST, ["10.0.0.1", "10.0.0.9"], 4)
        wait_for(lambda: "round=4 ips=10.0.0.1 10.0.0.9" in log(tmp_path, 1))
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.communicate(timeout=30)


def test_a_document_written_before_rounds_is_round_1(tmp_path) -> None:
    from launchers.checkpoints import open_store
    from launchers.heartbeats import put_doc

    uri = str(tmp_path / "store")
    put_doc(open_store(f"{uri}/gangs"), f"{DIGEST}.json", {"nodes": 2, "ips": ["a", "b"]})
    assert cloud_gang.read_round(uri, DIGEST) == {"round": 1, "paused": False, "nodes": 2,
                                                  "ips": ["a", "b"]}
    assert cloud_gang.read_addresses(uri, DIGEST) == ["a", "b"]
    assert cloud_gang.read_round(str(tmp_path / "none"), DIGEST) == {}

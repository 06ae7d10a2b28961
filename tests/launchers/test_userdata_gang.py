"""A gang node's startup script, run for real under bash with a stand-in agent: it waits for
the gang's addresses beside the checkpoints, then starts the agent with SkyPilot's and
costsched's variables; rank 0 alone publishes checkpoints and heartbeats. A node whose
addresses never come writes a failed status and starts nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from costsched.clouds import aws as aws_cloud
from costsched.model import Offering
from launchers import cloud_gang
from launchers.base import LaunchSpec
from launchers.status_file import STATUS
from launchers.userdata import read_payload, startup_script

REAL = Path(cloud_gang.__file__).resolve().parent


def spec(checkpoints: Path, nodes: int = 2) -> LaunchSpec:
    return LaunchSpec(9, "gang", "torchrun train.py",
                      Offering("aws", "us-east-1", "us-east-1a", "p3.8xlarge", "spot",
                               "V100", 4), str(checkpoints), "a1", envs={"LR": "0.1"},
                      task={"num_nodes": nodes})


def boot(tmp_path: Path, job: LaunchSpec, rank: int) -> dict:
    """Run node `rank`'s startup script with a stand-in `launchers.agent` (the rest of
    `launchers` is the real one) that records its argv and environment."""
    root = tmp_path / f"root{rank}"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "python").symlink_to(sys.executable)  # stands for the made venv
    fake = tmp_path / f"fake{rank}" / "launchers"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(f"__path__.append({str(REAL)!r})\n")
    out = tmp_path / f"agent{rank}.json"
    (fake / "agent.py").write_text(
        "import json, os, sys\n"
        "from pathlib import Path\n"
        "STATUS, CHECKPOINTS = 'status.json', 'checkpoints'\n"
        "def write_status(workdir, doc):\n"
        "    Path(workdir, 'status.json').write_text(json.dumps(doc))\n"
        "if __name__ == '__main__':\n"
        "    seen = {'argv': sys.argv[1:], 'env': dict(os.environ)}\n"
        f"    Path({str(out)!r}).write_text(json.dumps(seen))\n")
    script = startup_script(job, install="true", notice_url=aws_cloud.SPOT_NOTICE_URL,
                            root=str(root), node=cloud_gang.node_payload(job, rank))
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path),
           "PYTHONPATH": os.pathsep.join([str(fake.parent), str(REAL.parent)])}
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


def test_each_node_waits_for_the_addresses_then_gets_the_gangs_variables(tmp_path) -> None:
    job = spec(tmp_path / "ckpt")
    digest = cloud_gang.digest(9, "a1")
    ips = ["10.0.0.7", "10.0.0.9"]
    # The launcher writes the addresses once every node is accepted: after boot began.
    later = threading.Timer(0.5, cloud_gang.publish_addresses,
                            (str(tmp_path / "ckpt"), digest, ips))
    later.start()
    try:
        seen = [boot(tmp_path, job, rank) for rank in (0, 1)]
    finally:
        later.cancel()
    for rank, node in enumerate(seen):
        env = node["env"]
        for prefix in ("SKYPILOT", "COSTSCHED"):
            assert env[f"{prefix}_NODE_RANK"] == str(rank)
            assert env[f"{prefix}_NUM_NODES"] == "2"
            assert env[f"{prefix}_NODE_IPS"] == "10.0.0.7\n10.0.0.9"
            assert env[f"{prefix}_NUM_GPUS_PER_NODE"] == "4"
        assert env["LR"] == "0.1"
        assert node["argv"][-2:] == ["--", "torchrun train.py"]
    # Rank 0 alone publishes checkpoints and its heartbeat; rank 1 restores only.
    assert "--no-publish" not in seen[0]["argv"]
    assert seen[0]["argv"][seen[0]["argv"].index("--heartbeat-seconds") + 1] == "60"
    assert "--no-publish" in seen[1]["argv"] and "--heartbeat-seconds" not in seen[1]["argv"]


def test_the_payload_says_the_node_and_a_single_job_says_none(tmp_path) -> None:
    job = spec(tmp_path / "ckpt")
    node = cloud_gang.node_payload(job, 1)
    assert node == {"rank": 1, "nodes": 2, "gpus": 4, "digest": cloud_gang.digest(9, "a1")}
    script = startup_script(job, install="true", notice_url="http://x/", node=node)
    assert read_payload(script)["gang"] == node
    alone = startup_script(spec(tmp_path / "ckpt", nodes=1), install="true",
                           notice_url="http://x/")
    assert read_payload(alone)["gang"] is None


def test_addresses_that_never_come_fail_the_node_in_one_line(tmp_path, capsys) -> None:
    workdir = tmp_path / "work"
    job = {"checkpoint_uri": str(tmp_path / "ckpt"), "workdir": str(workdir),
           "gang": {"rank": 1, "nodes": 2, "gpus": 1, "digest": "0123456789ab"}}
    # A gang of another size is not this gang's: waited past, as if absent.
    cloud_gang.publish_addresses(str(tmp_path / "ckpt"), "0123456789ab", ["10.0.0.1"])
    with pytest.raises(SystemExit) as ended:
        cloud_gang.boot_node(job, wait_seconds=0.2, step=0.05)
    assert ended.value.code == 1
    status = json.loads((workdir / STATUS).read_text())
    assert status["state"] == "failed"
    assert status["detail"] == "node 1: the gang's 2 addresses did not come within 0 seconds"
    assert capsys.readouterr().err.strip().count("\n") == 0

"""A job of one node gets SkyPilot's node variables as SkyPilot sets them on every task
(rank 0 of 1, its own address, its GPUs), and costsched's names of them, on every launcher:
a SkyPilot `run` that tests `$SKYPILOT_NODE_RANK` does its work on one node too."""

from __future__ import annotations

from pathlib import Path

from launchers.base import LaunchSpec
from launchers.local import LocalLauncher
from tests.launchers.test_gang import offering, wait_state

SAID = ('echo "rank=$SKYPILOT_NODE_RANK nodes=$SKYPILOT_NUM_NODES '
        'ips=$SKYPILOT_NODE_IPS gpus=$SKYPILOT_NUM_GPUS_PER_NODE '
        'own=$COSTSCHED_NODE_RANK/$COSTSCHED_NUM_NODES/$COSTSCHED_NODE_IPS/'
        '$COSTSCHED_NUM_GPUS_PER_NODE"')
EXPECTED = "rank=0 nodes=1 ips=127.0.0.1 gpus=1 own=0/1/127.0.0.1/1"


def test_a_job_of_one_node_on_the_local_launcher_is_rank_0_of_1(tmp_path: Path) -> None:
    launcher = LocalLauncher(tmp_path / "instances", grace_seconds=3, poll_seconds=0.2,
                             pass_env=())
    spec = LaunchSpec(job_id=7, job_name="one", command=f"{SAID} > {tmp_path}/said",
                      offering=offering(), checkpoint_uri=str(tmp_path / "ckpt"),
                      attempt="a1")
    instance = launcher.launch(spec)
    try:
        assert wait_state(launcher, instance.id, ("succeeded", "failed")) == "succeeded"
    finally:
        launcher.terminate(instance.id)
    assert (tmp_path / "said").read_text().splitlines() == [EXPECTED]


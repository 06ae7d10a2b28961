"""A two-node gang through the EC2 boot path on moto's server (real HTTP on loopback):
costsched launches a SkyPilot task with `num_nodes: 2`, EC2 holds two instances, and the
test plays both: each node's user data runs under bash in a sandbox of its own (its own
disk: the root the user data names is moved into the sandbox), waits for the gang's
addresses beside the checkpoints in moto's S3, runs setup and the job with SkyPilot's
variables. Both nodes see their rank, SKYPILOT_NUM_NODES=2 and both addresses; only rank
0's checkpoint is published; the job succeeds on both."""

from __future__ import annotations

import base64
import json
import sysconfig
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("flask", reason="moto's server mode needs moto[server]")

from costsched.service import jobs as service  # noqa: E402
from costsched.store import PriceStore  # noqa: E402
from launchers import cloud_gang  # noqa: E402
from launchers.aws import AwsLauncher  # noqa: E402
from launchers.checkpoints import open_store  # noqa: E402
from launchers.userdata import checkout_install, read_payload  # noqa: E402
from tests.launchers.moto_images import IMAGE
from tests.launchers.test_boot_path import (  # noqa: E402, F401  (fixtures)
    AT,
    Instance,
    Metadata,
    metadata,
    moto_server,
)

BUCKET = "gang-ckpts"
TASK = """\
name: gang-on-ec2
num_nodes: 2
resources:
  infra: aws/us-east-1
  accelerators: V100:1
  use_spot: true
setup: echo "setup ran on node $SKYPILOT_NODE_RANK" > ../setup-ran
run: |
  python - <<'EOF'
  import json, os, pathlib
  names = ("SKYPILOT_NODE_RANK", "SKYPILOT_NUM_NODES", "SKYPILOT_NODE_IPS",
           "SKYPILOT_NUM_GPUS_PER_NODE", "COSTSCHED_NODE_RANK", "COSTSCHED_NODE_IPS")
  seen = {name: os.environ[name] for name in names}
  pathlib.Path("../seen.json").write_text(json.dumps(seen))
  rank = os.environ["SKYPILOT_NODE_RANK"]
  pathlib.Path(os.environ["CHECKPOINT_DIR"], f"rank{rank}.txt").write_text(rank)
  print("node", rank, "done")
  EOF
"""


def relocated(script: str, old_root: str, new_root: str) -> str:
    """The user data with its root moved (both the shell's and the job payload's)."""
    job = read_payload(script)
    encoded = base64.b64encode(json.dumps(job, sort_keys=True).encode()).decode()
    job["workdir"] = job["workdir"].replace(old_root, new_root, 1)
    moved = base64.b64encode(json.dumps(job, sort_keys=True).encode()).decode()
    assert encoded in script and f'root="{old_root}"' in script
    return script.replace(encoded, moved).replace(f'root="{old_root}"', f'root="{new_root}"')


def test_two_nodes_boot_see_ranks_and_addresses_and_finish(
        tmp_path: Path, moto_server: str, metadata: Metadata) -> None:  # noqa: F811
    import boto3

    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket=BUCKET)
    ec2 = boto3.client("ec2", region_name="us-east-1")
    image = IMAGE
    root = str(tmp_path / "launch-root")
    # moto has no placement groups: this gang goes without one (tests/launchers/test_aws_gang
    # covers the group)
    launcher = AwsLauncher(image_id=image, root=root, gang_placement="off",
                           install=checkout_install(sysconfig.get_paths()["purelib"]))
    store = PriceStore(f"sqlite:///{tmp_path / 'store.sqlite'}")
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=0.9, effective_at=AT, source="test")]))
    path = tmp_path / "task.yaml"
    path.write_text(TASK)

    [job] = service.launch(store, [path], launcher=launcher, at=AT,
                           checkpoint_root=f"s3://{BUCKET}/jobs")
    gang_id = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    assert "/gang-" in gang_id
    nodes = launcher.nodes(gang_id)
    assert [n.rank for n in nodes] == [0, 1] and all(n.address for n in nodes)
    assert len({n.id for n in nodes}) == 2

    played = []
    try:
        for node in nodes:
            answer = ec2.describe_instance_attribute(InstanceId=node.id.split("/")[1],
                                                     Attribute="userData")
            script = base64.b64decode(answer["UserData"]["Value"]).decode()
            sandbox = tmp_path / f"node{node.rank}"
            played.append(Instance(relocated(script, root, str(sandbox / "root")), sandbox, {
                "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": moto_server,
                "AWS_EC2_METADATA_SERVICE_ENDPOINT": metadata.url,
                "AWS_CONFIG_FILE": str(sandbox / "none"),
                "AWS_SHARED_CREDENTIALS_FILE": str(sandbox / "none")}, image_has_env=True))
        statuses = [node.wait() for node in played]
    finally:
        for node in played:
            node.kill()
    assert [s["state"] for s in statuses] == ["succeeded", "succeeded"], statuses
    ips = "\n".join(n.address for n in nodes)
    for rank, node in enumerate(played):
        seen = json.loads((node.workdir / "seen.json").read_text())
        assert seen == {"SKYPILOT_NODE_RANK": str(rank), "SKYPILOT_NUM_NODES": "2",
                        "SKYPILOT_NODE_IPS": ips, "SKYPILOT_NUM_GPUS_PER_NODE": "1",
                        "COSTSCHED_NODE_RANK": str(rank), "COSTSCHED_NODE_IPS": ips}
        assert (node.workdir / "setup-ran").read_text() == f"setup ran on node {rank}\n"
        assert f"node {rank} done" in (node.workdir / "job.log").read_text()
    # Rank 0 alone publishes: its checkpoint is in the store, rank 1's is not.
    names = {c.name for c in open_store(store.jobs.get(job.id).checkpoint_location).list()}
    assert "rank0.txt" in names and "rank1.txt" not in names
    digest = cloud_gang.parse(gang_id.split("/")[1])[2]
    assert cloud_gang.read_addresses(store.jobs.get(job.id).checkpoint_location,
                                     digest) == [n.address for n in nodes]
    # Terminating the job's instance ends both nodes.
    launcher.terminate(gang_id)
    assert {n.state for n in launcher.nodes(gang_id)} == {"terminated"}
    store.dispose()


# Rank 0 checkpoints when the pause stops it, as a job in a gang would: a job that wrote at
# its start, with no rendezvous to wait at, could publish before a node booted later had
# restored, and that node would start round 1 from it.
REPAIR_TASK = """\
name: gang-repaired
num_nodes: 2
resources:
  infra: aws/us-east-1
  accelerators: V100:1
  use_spot: true
run: |
  python - <<'EOF'
  import os, pathlib, signal, sys, time
  number, rank = os.environ["COSTSCHED_GANG_ROUND"], os.environ["SKYPILOT_NODE_RANK"]
  checkpoint = pathlib.Path(os.environ["CHECKPOINT_DIR"], "progress.txt")
  before = checkpoint.read_text() if checkpoint.exists() else "none"
  ips = " ".join(os.environ["SKYPILOT_NODE_IPS"].split())
  with open("../rounds.txt", "a") as out:
      out.write(f"round={number} ips={ips} from={before}\\n")
  if number != "1":
      sys.exit(0)
  def pause(*_):
      if rank == "0":
          checkpoint.write_text(f"round {number}")
      sys.exit(0)
  signal.signal(signal.SIGTERM, pause)
  while True:
      time.sleep(0.1)
  EOF
"""


def test_a_lost_node_is_replaced_and_the_gang_resumes_through_the_boot_path(
        tmp_path: Path, moto_server: str, metadata: Metadata) -> None:  # noqa: F811
    """Both nodes' user data run as processes; node 1 is taken away (EC2 terminates its
    instance, its processes die); the reconcile pass pauses the gang and starts one
    replacement with node 1's user data in the same zone; rank 0's agent checkpoints and
    says so, the replacement's (played from the user data EC2 holds) is set up and says
    so; the next pass starts round 2: rank 0, kept, and the new node run again with the
    new node's address, the new node from rank 0's checkpoint; the job ends on both."""
    import boto3
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.ec2.models import ec2_backends
    from moto.ec2.models.instances import StateReason

    from tests.launchers.test_boot_path import wait_for

    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket=BUCKET)
    ec2 = boto3.client("ec2", region_name="us-east-1")
    image = IMAGE
    root = str(tmp_path / "launch-root")
    launcher = AwsLauncher(image_id=image, root=root, gang_placement="off",
                           install=checkout_install(sysconfig.get_paths()["purelib"]))
    store = PriceStore(f"sqlite:///{tmp_path / 'store.sqlite'}")
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=0.9, effective_at=AT, source="test")]))
    path = tmp_path / "task.yaml"
    path.write_text(REPAIR_TASK)
    [job] = service.launch(store, [path], launcher=launcher, at=AT,
                           checkpoint_root=f"s3://{BUCKET}/jobs")
    gang_id = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    uri = store.jobs.get(job.id).checkpoint_location
    digest = cloud_gang.parse(gang_id.split("/")[1])[2]
    nodes = launcher.nodes(gang_id)

    def play(instance_id: str, name: str) -> Instance:
        answer = ec2.describe_instance_attribute(InstanceId=instance_id.split("/")[1],
                                                 Attribute="userData")
        script = base64.b64decode(answer["UserData"]["Value"]).decode()
        sandbox = tmp_path / name
        return Instance(relocated(script, root, str(sandbox / "root")), sandbox, {
            "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": moto_server,
            "AWS_EC2_METADATA_SERVICE_ENDPOINT": metadata.url,
            "AWS_CONFIG_FILE": str(sandbox / "none"),
            "AWS_SHARED_CREDENTIALS_FILE": str(sandbox / "none")}, image_has_env=True)

    def rounds(played: Instance) -> str:
        try:
            return (played.workdir / "rounds.txt").read_text()
        except OSError:
            return ""

    played: list[Instance] = []
    try:
        played = [play(n.id, f"node{n.rank}") for n in nodes]
        first_ips = " ".join(n.address for n in nodes)
        for node in played:
            wait_for(lambda n=node: f"round=1 ips={first_ips} from=none" in rounds(n))
        # Node 1 taken away by EC2: its instance ends, its processes with it.
        lost = nodes[1].id.split("/")[1]
        backend = ec2_backends[DEFAULT_ACCOUNT_ID]["us-east-1"]
        backend.terminate_instances([lost])
        backend.get_instance(lost).state_reason = StateReason(
            "Server.SpotInstanceTermination: Spot instance termination",
            "Server.SpotInstanceTermination")
        played[1].kill()
        service.reconcile(store, launcher)
        new = launcher.nodes(gang_id)
        assert new[0].id == nodes[0].id and new[1].id != nodes[1].id
        live = [r for res in ec2.describe_instances()["Reservations"] for r in res["Instances"]
                if r["State"]["Name"] in ("pending", "running")]
        assert len(live) == 2
        wait_for(lambda: cloud_gang.read_left(uri, digest) == (1, "paused"))  # rank 0 checkpointed
        played.append(play(new[1].id, "replacement"))
        wait_for(lambda: cloud_gang.read_ready(uri, digest, 1) == 1)
        service.reconcile(store, launcher)
        assert cloud_gang.read_round(uri, digest)["round"] == 2
        statuses = [played[0].wait(), played[2].wait()]
    finally:
        for node in played:
            node.kill()
    assert [s["state"] for s in statuses] == ["succeeded", "succeeded"], statuses
    new_ips = " ".join(n.address for n in new)
    assert rounds(played[0]).splitlines() == [
        f"round=1 ips={first_ips} from=none", f"round=2 ips={new_ips} from=round 1"]
    assert rounds(played[2]).splitlines() == [f"round=2 ips={new_ips} from=round 1"]
    assert launcher.nodes(gang_id)[0].id == nodes[0].id
    launcher.terminate(gang_id)
    store.dispose()

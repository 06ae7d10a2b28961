"""One launcher for every cloud (`--launcher clouds`): a job launched on EC2 (moto) moves to
Azure (the loopback Resource Manager) when Azure's price pays for the move, the move priced
with the checkpoint's egress out of AWS, and that egress charged once in the job's cost."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import boto3
import pandas as pd
import pytest
import yaml

from costsched import clouds
from costsched.costs import job_cost
from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.store import PriceStore
from launchers.aws import AwsLauncher
from launchers.checkpoints import open_store
from launchers.clouds import CloudsLauncher, owner
from tests.conftest import moto_regions
from tests.job_folders import folder_of
from tests.launchers.test_azure import make

moto = pytest.importorskip("moto")
GB = 0.002  # the job's checkpoint, as its spec says and as published (2 MB)
NOW = datetime.now(timezone.utc).replace(microsecond=0)


def price(cloud: str, region: str, size: str, usd: float, at: datetime) -> dict:
    return dict(cloud=cloud, region=region, zone="us-east-1a" if cloud == "aws" else "",
                instance_type=size, market="spot", os="linux", gpu_model="V100", gpu_count=1,
                vcpus=8, memory_gb=61.0, usd_per_hour=usd, effective_at=at, source="test")


def job_file(tmp_path: Path) -> Path:
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump({
        "name": "long-train", "run": "python train.py", "steps": 1_000_000,
        "throughputs": {"V100": 10.0}, "checkpoint": {"size_gb": GB, "interval_minutes": 30},
        "constraints": {"regions": ["us-east-1", "eastus"], "markets": ["spot"]}}))
    return path


def test_handles_are_told_apart_by_their_cloud() -> None:
    assert owner("us-east-1/i-0123456789abcdef0") == "aws"
    assert owner("us-central1-a/costsched-7-0123456789ab") == "gcp"
    assert owner("eastus/costsched/costsched-7-0123456789ab") == "azure"
    assert owner("eastus/costsched/gang-7-2-0123456789ab") == "azure"
    with pytest.raises(InvalidInput, match="not a handle of an aws"):
        owner("nowhere")
    assert not CloudsLauncher(clouds=("aws",)).can_launch(
        clouds_offering := type("O", (), {"cloud": "azure"})())  # noqa: F841
    with pytest.raises(InvalidInput, match="expected some of aws, gcp, azure"):
        CloudsLauncher(clouds=("ibm",))


def test_a_job_moves_from_aws_to_azure_when_it_pays_and_its_egress_is_charged_once(
        azure: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                        "AWS_DEFAULT_REGION": "us-east-1",
                        # Azure's VMs read their checkpoints from Blob: carried there.
                        "COSTSCHED_LAUNCH_CHECKPOINT_ROOTS": "azure=az://ckpt/jobs"}.items():
        monkeypatch.setenv(name, value)
    moto_regions(monkeypatch)
    with moto.mock_aws():
        session = boto3.session.Session(region_name="us-east-1")
        session.client("s3").create_bucket(Bucket="ckpt-bucket")
        launcher = CloudsLauncher({"aws": AwsLauncher(session=session, image_id="ami-12c6146b"),
                                   "azure": make(azure, tmp_path)})
        store = PriceStore(f"sqlite:///{tmp_path / 'store.sqlite'}")
        start = NOW - timedelta(hours=3)
        store.ingest(pd.DataFrame([
            price("aws", "us-east-1", "p3.2xlarge", 0.90, start),
            price("azure", "eastus", "Standard_NC6s_v3", 1.60, start)]))
        [job] = service.launch(store, [job_file(tmp_path)], launcher=launcher,
                               checkpoint_root="s3://ckpt-bucket/jobs", at=start)
        first = str(store.jobs.placements(job.id)["instance"].iloc[-1])
        assert owner(first) == "aws"  # AWS was the cheaper then
        ckpt = tmp_path / "state.npz"
        ckpt.write_bytes(b"w" * int(GB * 1e9))  # the size a move copies: measured
        open_store(f"s3://ckpt-bucket/jobs/{folder_of(store, job.id)}").publish(ckpt)

        # Azure's spot price falls: moving pays, the checkpoint's egress out of AWS included.
        store.ingest(pd.DataFrame([price("azure", "eastus", "Standard_NC6s_v3", 0.20,
                                         NOW - timedelta(hours=1))]))
        [advice] = service.migrate(store, launcher, job.id, force=True)
        assert advice.started is not None and advice.move_usd < advice.stay_usd, advice.reason
        egress = clouds.get("aws").egress.internet_usd_per_gb * GB  # AWS's internet rate
        move = advice.started
        assert move.kind == "migration" and move.candidates[0]["key"][0] == "azure"
        assert move.candidates[0]["move"]["egress_usd"] == pytest.approx(egress)
        assert azure.arm.vms() == []  # nothing on Azure until the source has checkpointed
        [command] = session.client("ssm").list_commands()["Commands"]  # the source's stop
        assert command["DocumentName"] == "AWS-RunShellScript"

        session.client("ec2").stop_instances(InstanceIds=[first.split("/")[1]])  # it stopped
        for _ in range(5):
            service.reconcile(store, launcher)
        placed = store.jobs.placements(job.id)
        now_on = str(placed["instance"].iloc[-1])
        assert owner(now_on) == "azure" and placed["end_at"].isna().sum() == 1
        assert store.jobs.get(job.id).state == "running"
        [vm] = azure.arm.vms()
        assert vm["properties"]["priority"] == "Spot"
        moved = store.moves.get(move.id)
        assert (moved.state, moved.checkpoint_version) == ("done", 1)  # carried version 1
        there = store.jobs.get(job.id).checkpoint_location
        assert there == f"az://ckpt/jobs/{folder_of(store, job.id)}"  # the VM reads Blob, not S3
        [copied] = open_store(there).list()
        home = open_store(f"s3://ckpt-bucket/jobs/{folder_of(store, job.id)}")
        assert copied.sha256 == home.list()[0].sha256
        ec2 = session.client("ec2").describe_instances(InstanceIds=[first.split("/")[1]])
        assert ec2["Reservations"][0]["Instances"][0]["State"]["Name"] == "terminated"

        cost = job_cost(store, job.id, now=NOW, checkpoint_gb=GB)
        assert len(cost.moves) == 1  # one move, one copy of the checkpoint
        assert cost.egress_usd == pytest.approx(egress)
        assert cost.moves.iloc[0][["from_cloud", "to_cloud"]].tolist() == ["aws", "azure"]

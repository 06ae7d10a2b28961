"""A SkyPilot task in a Docker image through the EC2 boot path on moto's server: the
instance boots the launcher's own machine image (the Docker image is not an AMI), its user
data starts the agent with the image, and the agent runs setup and the job in containers
through a stand-in `docker` on the instance's PATH (tests/launchers/fake_docker). The
preemption notice reaches the job in its container, which checkpoints; the recovery's
instance pulls the image again and resumes from that checkpoint. Slow (two instances
played end to end, as test_boot_path's): the done-when of Docker images on EC2."""

from __future__ import annotations

import base64
import shutil
import sys
import sysconfig
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("flask", reason="moto's server mode needs moto[server]")

from costsched.service import jobs as service  # noqa: E402
from costsched.store import PriceStore  # noqa: E402
from launchers.aws import AwsLauncher  # noqa: E402
from launchers.checkpoints import open_store  # noqa: E402
from launchers.userdata import checkout_install, read_payload  # noqa: E402
from tests.job_folders import folder_of  # noqa: E402
from tests.launchers import fake_docker  # noqa: E402
from tests.launchers.moto_images import IMAGE as MOTO_IMAGE  # noqa: E402
from tests.launchers.test_boot_path import (  # noqa: E402, F401  (fixtures)
    AT,
    BUCKET,
    PROJECT,
    Instance,
    Metadata,
    metadata,
    moto_server,
    wait_for,
)

IMAGE = "nvcr.io/nvidia/pytorch:24.07-py3"
TASK = """\
name: sky-in-docker
resources:
  infra: aws/us-east-1
  accelerators: V100:1
  use_spot: true
  image_id: docker:{image}
workdir: {workdir}
envs:
  STEPS: 600
setup: test -f requirements.txt && echo set up > ../setup-ran
run: python train.py --steps $STEPS --step-seconds 0.01 --checkpoint-every 0.3
"""


def instance(ec2: object, instance_id: str, sandbox: Path, endpoint: str,
             metadata: Metadata) -> Instance:  # noqa: F811
    """The EC2 instance of test_boot_path, with the stand-in `docker` on its PATH, from an
    image that carries costsched's environment (test_boot_path makes it)."""
    answer = ec2.describe_instance_attribute(  # type: ignore[attr-defined]
        InstanceId=instance_id.split("/")[1], Attribute="userData")
    script = base64.b64decode(answer["UserData"]["Value"]).decode()
    fake_docker.install(sandbox.parent / f"{sandbox.name}-bin", sandbox.parent /
                        f"{sandbox.name}-docker.log")
    path = f"{sandbox.parent / f'{sandbox.name}-bin'}:{Path(sys.executable).parent}:/usr/bin:/bin"
    return Instance(script, sandbox, {
        "PATH": path, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": endpoint,
        "AWS_EC2_METADATA_SERVICE_ENDPOINT": metadata.url,
        "AWS_CONFIG_FILE": str(sandbox / "none"),
        "AWS_SHARED_CREDENTIALS_FILE": str(sandbox / "none")}, image_has_env=True)


@pytest.mark.results
def test_a_docker_image_task_boots_on_ec2_is_preempted_and_resumes_in_its_container(
        tmp_path: Path, moto_server: str, metadata: Metadata) -> None:  # noqa: F811
    import boto3
    from moto.core import DEFAULT_ACCOUNT_ID
    from moto.ec2.models import ec2_backends
    from moto.ec2.models.instances import StateReason

    s3 = boto3.client("s3", region_name="us-east-1")
    s3.create_bucket(Bucket=BUCKET)
    ec2 = boto3.client("ec2", region_name="us-east-1")
    ami = MOTO_IMAGE
    launcher = AwsLauncher(image_id=ami, install=checkout_install(
        sysconfig.get_paths()["purelib"]), root=str(tmp_path / "i1" / "root"))
    store = PriceStore(f"sqlite:///{tmp_path / 'store.sqlite'}")
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=0.9, effective_at=AT, source="test")]))
    project = tmp_path / "tinyproject"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns("checkpoints",
                                                                     "__pycache__"))
    path = tmp_path / "task.yaml"
    path.write_text(TASK.format(image=IMAGE, workdir=project))

    [job] = service.launch(store, [path], launcher=launcher, at=AT,
                           checkpoint_root=f"s3://{BUCKET}/jobs")
    first_id = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    record = ec2.describe_instances(InstanceIds=[first_id.split("/")[1]])[
        "Reservations"][0]["Instances"][0]
    assert record["ImageId"] == ami  # the launcher's machine image runs the container
    script = base64.b64decode(ec2.describe_instance_attribute(
        InstanceId=record["InstanceId"], Attribute="userData")["UserData"]["Value"]).decode()
    assert read_payload(script)["image"] == {"ref": IMAGE, "envs": ["STEPS"], "gpus": True,
                                             "checkpoints_at": ""}

    first = instance(ec2, first_id, tmp_path / "i1", moto_server, metadata)
    checkpoints = open_store(f"s3://{BUCKET}/jobs/{folder_of(store, job.id)}")
    try:
        wait_for(lambda: any(c.part("state.npz") for c in checkpoints.list()))
        metadata.notice = True  # the two-minute warning
        status = first.wait()
    finally:
        first.kill()
    assert status["state"] == "stopped" and status["detail"] == "preemption notice", status
    log = (first.workdir / "job.log").read_text()
    stopped_at = int(log.split("stopped at step")[1].split()[0])  # in its container
    calls = fake_docker.calls(tmp_path / "i1-docker.log")
    runs = [c for c in calls if c["cmd"] == "run"]
    assert [c["cmd"] for c in calls if c["cmd"] in ("pull", "commit")] == ["pull", "commit"]
    assert [r["image"] for r in runs] == [IMAGE, f"{runs[1]['name'].rsplit('-', 1)[0]}:setup"]
    # the command, the envs' file, and '': not the instance's first command (no shell said)
    assert runs[1]["argv"][-3] == ("python train.py --steps $STEPS --step-seconds 0.01 "
                                   "--checkpoint-every 0.3") and runs[1]["argv"][-1] == ""
    assert "--gpus" in runs[1]["argv"] and runs[1]["env"] == {}  # envs through the file

    backend = ec2_backends[DEFAULT_ACCOUNT_ID]["us-east-1"]  # EC2 takes the instance
    ec2_id = first_id.split("/")[1]
    backend.terminate_instances([ec2_id])
    backend.get_instance(ec2_id).state_reason = StateReason(
        "Server.SpotInstanceTermination: Spot instance termination",
        "Server.SpotInstanceTermination")
    metadata.notice = False
    launcher.root = str(tmp_path / "i2" / "root")
    done = service.reconcile(store, launcher)
    assert any("preempted; recovery" in line for line in done), done
    second_id = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    second = instance(ec2, second_id, tmp_path / "i2", moto_server, metadata)
    try:
        status = second.wait()
    finally:
        second.kill()
    assert status["state"] == "succeeded", status
    assert f"resumed at step {stopped_at}" in (second.workdir / "job.log").read_text()
    again = fake_docker.calls(tmp_path / "i2-docker.log")
    assert [c["cmd"] for c in again if c["cmd"] in ("pull", "commit")] == ["pull", "commit"]

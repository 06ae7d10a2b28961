"""A SkyPilot task through the EC2 boot path on moto's server (real HTTP on loopback): the
instance EC2 holds has the task's image, disk size and a security group opening its ports;
its user data, run under bash as the instance would, reads the secret from an SSM
parameter with the instance's role (it is not in the user data), copies one bucket to its
mount (under the launcher's mount root, which the job has as $COSTSCHED_MOUNTS),
checkpoints to the other, and runs the job, whose lines are bash's (as SkyPilot runs
them). The secret is in no byte of the store,
the instance's logs or what `status` says."""

from __future__ import annotations

import hashlib
import sysconfig
from pathlib import Path

import pandas as pd
import pytest

pytest.importorskip("flask", reason="moto's server mode needs moto[server]")

from costsched.service import jobs as service  # noqa: E402
from costsched.store import PriceStore  # noqa: E402
from launchers import cloud_secrets  # noqa: E402
from launchers.aws import AwsLauncher  # noqa: E402
from launchers.userdata import checkout_install, read_payload  # noqa: E402
from tests.launchers.moto_images import IMAGE
from tests.launchers.test_boot_path import (  # noqa: E402, F401  (fixtures)
    AT,
    Metadata,
    ec2_instance,
    metadata,
    moto_server,
)

SECRET = "hf_Wb7Kd3Lq9Xz2Rm5Tn8Vc1Pj4Ys6Ge0Ha"
TASK = """\
name: sky-on-ec2
resources:
  infra: aws/us-east-1
  accelerators: V100:1
  use_spot: true
  ports: [8080, 9000-9005]
  disk_size: 120
  image_id: {image}
envs:
  GREETING: hello
secrets:
  HF_TOKEN:
file_mounts:
  /ckpt:
    name: sky-ckpts
    store: s3
    mode: MOUNT
  /data:
    source: s3://sky-data/set
    mode: COPY
run: |
  set -o pipefail
  source /dev/null
  [[ "${{GREETING:0:3}}" == hel ]] || exit 9
  python - <<'EOF'
  import hashlib, os, pathlib
  data = pathlib.Path(os.environ["COSTSCHED_MOUNTS"] + "/data/hello.txt").read_text()
  out = hashlib.sha256(os.environ["HF_TOKEN"].encode()).hexdigest() + " " + data
  pathlib.Path(os.environ["CHECKPOINT_DIR"], "out.txt").write_text(out)
  print("job done,", os.environ["GREETING"])
  print("token is", os.environ["HF_TOKEN"])  # the instance's job log holds no secret
  EOF
"""


def test_a_skypilot_task_boots_on_ec2_with_its_resources_mounts_and_secret(
        tmp_path: Path, moto_server: str, metadata: Metadata) -> None:  # noqa: F811
    import boto3

    s3 = boto3.client("s3", region_name="us-east-1")
    for bucket in ("sky-ckpts", "sky-data"):
        s3.create_bucket(Bucket=bucket)
    s3.put_object(Bucket="sky-data", Key="set/hello.txt", Body=b"hello data")
    ec2 = boto3.client("ec2", region_name="us-east-1")
    image = IMAGE
    mounts = tmp_path / "i1" / "mnt"
    launcher = AwsLauncher(image_id="ami-not-the-tasks",
                           install=checkout_install(sysconfig.get_paths()["purelib"]),
                           root=str(tmp_path / "i1" / "root"), mount_root=str(mounts))
    db = tmp_path / "store.sqlite"
    store = PriceStore(f"sqlite:///{db}")
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=0.9, effective_at=AT, source="test")]))
    path = tmp_path / "task.yaml"
    path.write_text(TASK.format(image=image))

    [job] = service.launch(store, [path], launcher=launcher, at=AT,
                           secrets={"HF_TOKEN": SECRET})
    instance_id = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    record = ec2.describe_instances(InstanceIds=[instance_id.split("/")[1]])[
        "Reservations"][0]["Instances"][0]
    assert record["ImageId"] == image  # the task's image, not the launcher's
    volumes = [m["Ebs"]["VolumeId"] for m in record["BlockDeviceMappings"]]
    sizes = [v["Size"] for v in ec2.describe_volumes(VolumeIds=volumes)["Volumes"]]
    assert sizes == [120], sizes
    [group] = [g for g in record["SecurityGroups"] if g["GroupName"].endswith("-ports")]
    rules = ec2.describe_security_groups(GroupIds=[group["GroupId"]])["SecurityGroups"][0]
    assert sorted((p["FromPort"], p["ToPort"]) for p in rules["IpPermissions"]) == [
        (8080, 8080), (9000, 9005)]
    user_data = ec2.describe_instance_attribute(InstanceId=record["InstanceId"],
                                                Attribute="userData")["UserData"]["Value"]
    import base64

    script = base64.b64decode(user_data).decode()
    # the script starts the agent with bash; the agent runs the task's lines in bash too,
    # and the job reads its mounts under the launcher's mount root as $COSTSCHED_MOUNTS
    assert script.startswith("#!/bin/bash\n") and "[[ " in read_payload(script)["command"]
    assert SECRET not in script and "HF_TOKEN" not in read_payload(script)["envs"]
    key = cloud_secrets.key(job.id, read_payload(script)["attempt"])
    assert read_payload(script)["secret_refs"] == {
        "HF_TOKEN": f"/costsched/job-{job.id}/{key}/HF_TOKEN"}

    instance = ec2_instance(ec2, instance_id, tmp_path / "i1", moto_server, metadata,
                            image_has_env=True)
    try:
        status = instance.wait()
    finally:
        instance.kill()
    assert status["state"] == "succeeded", status
    ssm = boto3.client("ssm", region_name="us-east-1")
    assert ssm.describe_parameters()["Parameters"] == []  # deleted once read
    checkpoint = store.jobs.get(job.id).checkpoint_location
    assert checkpoint.startswith("s3://sky-ckpts")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket="sky-ckpts")["Contents"]]
    [out_key] = [k for k in keys if k.endswith("out.txt")]
    out = s3.get_object(Bucket="sky-ckpts", Key=out_key)["Body"].read().decode()
    assert out == f"{hashlib.sha256(SECRET.encode()).hexdigest()} hello data"
    console = (instance.sandbox / "console.log").read_text()
    assert "mount: copied s3://sky-data/set to" in console

    shown = service.status(store, launcher, job.id)
    store.dispose()
    secret = SECRET.encode()
    for f in [db, *db.parent.glob("store.sqlite*"), *instance.sandbox.rglob("*")]:
        if f.is_file():
            assert secret not in f.read_bytes(), f
    assert SECRET not in repr(shown)
    [job_log] = instance.sandbox.rglob("job.log")
    assert "token is ***" in job_log.read_text()

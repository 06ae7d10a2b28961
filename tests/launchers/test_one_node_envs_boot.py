"""A job of one node on a cloud instance (the startup script EC2 holds, moto in server
mode, run under bash in a sandbox as in tests/launchers/test_boot_path) gets SkyPilot's
node variables as every task does: rank 0 of 1, its GPUs, and costsched's names of them."""

from __future__ import annotations

import sys
import sysconfig
from pathlib import Path

import pytest

pytest.importorskip("flask", reason="moto's server mode needs moto[server]")

from launchers.aws import AwsLauncher  # noqa: E402
from launchers.base import LaunchSpec  # noqa: E402
from launchers.userdata import checkout_install  # noqa: E402
from tests.launchers import test_boot_path as boot  # noqa: E402
from tests.launchers.moto_images import IMAGE  # noqa: E402
from tests.launchers.test_aws import offering  # noqa: E402
from tests.launchers.test_boot_path import BUCKET, Metadata, ec2_instance  # noqa: E402
from tests.launchers.test_one_node_envs import EXPECTED, SAID  # noqa: E402

metadata, moto_server = boot.metadata, boot.moto_server  # the fixtures


@pytest.mark.results
def test_a_job_of_one_node_on_a_cloud_instance_is_rank_0_of_1(
        tmp_path: Path, moto_server: str, metadata: Metadata) -> None:
    import boto3

    boto3.client("s3", region_name="us-east-1").create_bucket(Bucket=BUCKET)
    ec2 = boto3.client("ec2", region_name="us-east-1")
    launcher = AwsLauncher(image_id=IMAGE,
                           install=checkout_install(sysconfig.get_paths()["purelib"]),
                           root=str(tmp_path / "i1" / "root"))
    job = LaunchSpec(1, "one", f"{SAID} > ../said; {sys.executable} -c pass", offering(),
                     f"s3://{BUCKET}/jobs/job-1", "launch-1")
    got = launcher.launch(job)
    instance = ec2_instance(ec2, got.id, tmp_path / "i1", moto_server, metadata,
                            image_has_env=True)
    try:
        status = instance.wait()
    finally:
        instance.kill()
    console = (instance.sandbox / "console.log").read_text(errors="replace")
    assert status["state"] == "succeeded", (status, console)
    assert (instance.workdir / "said").read_text().splitlines() == [EXPECTED], console

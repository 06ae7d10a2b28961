"""An on-demand EC2 offering is priced for its whole region: a job that keeps to one zone
of it (`zone: us-east-1c`) is started there, in that zone's subnet, not where EC2 likes."""

from __future__ import annotations

import dataclasses

import pytest

pytest.importorskip("moto")

from launchers.aws import AwsLauncher  # noqa: E402
from tests.launchers.test_aws import aws, describe, launcher, spec  # noqa: E402, F401


def test_a_regional_offering_is_placed_in_the_zone_the_job_keeps_to(
        aws, launcher: AwsLauncher) -> None:  # noqa: ANN001, F811
    kept = dataclasses.replace(spec("on_demand", zone=""), zones=("us-west-2a", "us-east-1c"))
    assert launcher.run_request(kept)["Placement"] == {"AvailabilityZone": "us-east-1c"}
    got = launcher.launch(kept)
    assert describe(aws, got.id.split("/")[1])["Placement"]["AvailabilityZone"] == "us-east-1c"
    subnets = AwsLauncher(session=aws, image_id="ami-12c6146b",
                          subnet_ids={"us-east-1": "subnet-region", "us-east-1c": "subnet-c"})
    assert subnets.run_request(kept)["SubnetId"] == "subnet-c"
    assert subnets.run_request(spec("on_demand", zone=""))["SubnetId"] == "subnet-region"

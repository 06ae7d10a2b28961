"""The launchers tell the account's quota from the cloud's capacity: EC2's vCPU limit and
spot request count codes (botocore's Stubber; a gang under moto, its started node ended),
Compute Engine's QUOTA_EXCEEDED naming its metric, become QuotaErrors with the instances
asked for; a capacity error stays one."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("moto")
from botocore.awsrequest import AWSResponse  # noqa: E402
from botocore.stub import Stubber  # noqa: E402

from launchers.aws import AwsLauncher  # noqa: E402
from launchers.base import CapacityError, QuotaError  # noqa: E402
from tests.launchers.test_aws import aws, spec  # noqa: E402, F401 - a fixture by name
from tests.launchers.test_aws_gang import Calls, ec2_records  # noqa: E402
from tests.launchers.test_aws_gang import spec as gang_spec  # noqa: E402


@pytest.mark.parametrize(("code", "quota"), [
    ("VcpuLimitExceeded", True), ("MaxSpotInstanceCountExceeded", True),
    ("InstanceLimitExceeded", True), ("InsufficientInstanceCapacity", False)])
def test_ec2_quota_codes_are_quota_errors(aws, code: str, quota: bool) -> None:  # noqa: ANN001, F811
    launcher = AwsLauncher(session=aws, image_id="ami-12c6146b")
    ec2 = launcher._client("ec2", "us-east-1")
    with Stubber(ec2) as stub:
        stub.add_response("describe_instances", {"Reservations": []})
        stub.add_client_error("run_instances", service_error_code=code,
                              service_message="You have requested more vCPU capacity than "
                                              "your current vCPU limit of 0 allows")
        with pytest.raises(CapacityError) as caught:
            launcher.launch(spec())
    assert isinstance(caught.value, QuotaError) is quota
    assert caught.value.reason.startswith(f"{code}: ")
    if quota:
        assert (caught.value.quota, caught.value.instances) == ("", 1)


class QuotaCalls(Calls):
    """The gang's second run_instances refused for the spot request count."""

    def _maybe_fail(self, **_: Any) -> tuple[AWSResponse, dict] | None:
        if self.fail_run is not None and len(self.runs) == self.fail_run:
            return self._answer(400, {"Error": {"Code": "MaxSpotInstanceCountExceeded",
                                                "Message": "Max spot instance count "
                                                           "exceeded"}})
        return None


def test_a_gang_refused_by_quota_asked_for_all_its_nodes(aws) -> None:  # noqa: ANN001, F811
    calls = QuotaCalls(aws)
    calls.fail_run = 2
    launcher = AwsLauncher(session=aws, image_id="ami-12c6146b", gang_placement="off")
    with pytest.raises(QuotaError) as caught:
        launcher.launch(gang_spec(nodes=3))
    assert caught.value.instances == 3 and "node 1 of 3" in caught.value.reason
    assert [r["State"]["Name"] for r in ec2_records(aws)] == ["terminated"]


compute_v1 = pytest.importorskip("google.cloud.compute_v1")


def test_compute_engine_quota_exceeded_names_its_metric() -> None:
    from google.api_core import exceptions

    from launchers.gcp import GcpLauncher
    from tests.launchers.test_gcp import FakeInstances
    from tests.launchers.test_gcp import spec as gcp_spec

    fake = FakeInstances()
    launcher = GcpLauncher(project="proj", instances_client=fake)
    fake.fail_insert = exceptions.from_http_status(
        403, "Quota 'NVIDIA_V100_GPUS' exceeded.  Limit: 0.0 in region us-central1.",
        errors=[compute_v1.Errors(code="QUOTA_EXCEEDED",
                                  message="Quota 'NVIDIA_V100_GPUS' exceeded.")])
    with pytest.raises(QuotaError) as caught:
        launcher.launch(gcp_spec())
    assert (caught.value.quota, caught.value.instances) == ("NVIDIA_V100_GPUS", 1)
    fake.fail_insert = exceptions.from_http_status(
        400, "The zone does not have enough resources available",
        errors=[compute_v1.Errors(code="ZONE_RESOURCE_POOL_EXHAUSTED", message="details")])
    with pytest.raises(CapacityError) as other:
        launcher.launch(gcp_spec(attempt="again"))
    assert not isinstance(other.value, QuotaError)

"""`collect --booked`: EC2 asked for the capacity blocks that fit the GPU models asked for
and for the reservations held (botocore's Stubber fed the documented bodies), stored with
their age; a shape EC2 does not sell is a line, not a failure of the rest."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest

boto3 = pytest.importorskip("boto3")
from botocore.stub import Stubber  # noqa: E402

from costsched.service.booked_collect import collect_booked  # noqa: E402
from costsched.store import PriceStore  # noqa: E402
from tests.costsched.service.booked_world import FIXTURES, NOW  # noqa: E402


def test_blocks_that_fit_the_gpu_and_reservations_held_are_stored(tmp_path: Path) -> None:
    store = PriceStore(f"sqlite:///{tmp_path}/s.db")
    ec2 = boto3.session.Session(aws_access_key_id="t", aws_secret_access_key="t").client(
        "ec2", region_name="us-east-1")
    body = json.loads((FIXTURES / "describe_capacity_block_offerings.json").read_text())
    two_days, three_days = body["CapacityBlockOfferings"]
    end = NOW + timedelta(days=56)
    with Stubber(ec2) as stub:
        for hours, found in ((24, None), (48, [two_days]), (72, [three_days]), (168, [])):
            request = {"InstanceType": "p5.48xlarge", "InstanceCount": 1,
                       "CapacityDurationHours": hours, "StartDateRange": NOW,
                       "EndDateRange": end}
            if found is None:  # a length EC2 does not offer now
                stub.add_client_error("describe_capacity_block_offerings",
                                      "InvalidParameterValue", "no offering", 400,
                                      expected_params=request)
            else:
                stub.add_response("describe_capacity_block_offerings",
                                  {"CapacityBlockOfferings": found}, request)
        stub.add_response("describe_capacity_reservations", {"CapacityReservations": [{
            "CapacityReservationId": "cr-held", "InstanceType": "p5.48xlarge",
            "AvailabilityZone": "us-east-1b", "State": "active", "AvailableInstanceCount": 2,
            "InstancePlatform": "Linux/UNIX", "EndDate": NOW + timedelta(days=10)}]},
            {"Filters": [{"Name": "state", "Values": ["active", "scheduled"]}]})
        found = collect_booked(store, at=NOW, regions=["us-east-1"], gpus=["H100"],
                               clouds=["aws"], ec2=lambda region: ec2)
        stub.assert_no_pending_responses()
    assert (found.asked, found.offerings, found.added) == (5, 3, 3)
    assert len(found.errors) == 1 and found.errors[0].startswith(
        "aws us-east-1 p5.48xlarge x1 24 h: An error occurred (InvalidParameterValue)")
    offered = {b.offering_id: b for b in store.booked.offered(NOW)}
    assert set(offered) == {"cb-0123456789abcdef0", "cb-0fedcba9876543210", "cr-held"}
    assert offered["cr-held"].offering.market == "reservation"
    assert all(b.observed_at == NOW for b in offered.values())

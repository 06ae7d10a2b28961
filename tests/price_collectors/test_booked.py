"""Booked capacity read from the clouds' answers: DescribeCapacityBlockOfferings and
DescribeCapacityReservations bodies (recorded, and live through botocore's Stubber) and
Compute Engine's reservations."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from costsched.model import InvalidInput
from price_collectors.booked import (
    ask_capacity_blocks,
    block_durations,
    capacity_blocks,
    capacity_reservations,
    gce_reservations,
    read_body,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "booked"
SEEN = datetime(2026, 12, 1, 7, 55, tzinfo=timezone.utc)


def offerings() -> list[dict]:
    body = json.loads((FIXTURES / "describe_capacity_block_offerings.json").read_text())
    return body["CapacityBlockOfferings"]


def test_a_capacity_block_offering_becomes_a_booked_offering_with_its_age() -> None:
    found, tenancy = capacity_blocks(offerings(), SEEN)
    first = found[0]
    o = first.offering
    assert (o.cloud, o.region, o.zone, o.instance_type, o.market) == (
        "aws", "us-east-1", "us-east-1a", "p5.48xlarge", "capacity_block")
    assert (o.gpu_model, o.gpu_count) == ("H100", 8)
    assert first.offering_id == "cb-0123456789abcdef0" and first.instance_count == 1
    assert first.start == datetime(2026, 12, 2, 11, 30, tzinfo=timezone.utc)
    assert first.hours == 48 and first.upfront_usd == 1887.84
    assert first.observed_at == SEEN and tenancy == ["default", "default"]


@pytest.mark.parametrize(("change", "message"), [
    ({"CurrencyCode": "EUR"}, "item 1: CurrencyCode 'EUR': expected USD"),
    ({"AvailabilityZone": "mars-1a"}, "AvailabilityZone 'mars-1a': expected a zone"),
    ({"UpfrontFee": "lots"}, "UpfrontFee 'lots': expected an amount of USD >= 0"),
    ({"InstanceCount": 0}, "InstanceCount 0: expected a whole number >= 1"),
    ({"CapacityBlockDurationHours": 24}, "CapacityBlockDurationHours 24: expected the hours"),
    ({"EndDate": "2026-12-01T11:30:00Z", "CapacityBlockDurationHours": None},
     "is not after its start"),
    ({"InstanceType": "p9.huge"}, "p9.huge"),
])
def test_a_bad_offering_is_one_line_naming_the_item_and_field(change: dict,
                                                              message: str) -> None:
    with pytest.raises(InvalidInput, match=message.replace("(", r"\(")):
        capacity_blocks([{**offerings()[0], **change}], SEEN, where="body.json")


def test_a_body_of_neither_kind_or_not_json_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{"Something": []}')
    with pytest.raises(InvalidInput, match='expected {"CapacityBlockOfferings"'):
        read_body(bad, SEEN)
    bad.write_text("{")
    with pytest.raises(InvalidInput, match="not valid JSON"):
        read_body(bad, SEEN)


def test_reservations_held_are_offered_free_while_usable() -> None:
    items = [
        {"CapacityReservationId": "cr-1", "InstanceType": "p4d.24xlarge",
         "AvailabilityZone": "us-east-2b", "State": "active", "InstancePlatform": "Linux/UNIX",
         "TotalInstanceCount": 4, "AvailableInstanceCount": 2,
         "StartDate": "2026-11-01T00:00:00Z", "EndDateType": "unlimited"},
        {"CapacityReservationId": "cr-2", "InstanceType": "p5.48xlarge",
         "AvailabilityZone": "us-east-1a", "State": "scheduled", "ReservationType":
         "capacity-block", "AvailableInstanceCount": 1,
         "StartDate": "2026-12-03T11:30:00Z", "EndDate": "2026-12-05T11:30:00Z"},
        {"CapacityReservationId": "cr-3", "InstanceType": "p5.48xlarge",
         "AvailabilityZone": "us-east-1a", "State": "expired", "AvailableInstanceCount": 1},
        {"CapacityReservationId": "cr-4", "InstanceType": "p5.48xlarge",
         "AvailabilityZone": "us-east-1a", "State": "active", "AvailableInstanceCount": 0},
    ]
    found = {b.offering_id: b for b in capacity_reservations(items, SEEN)}
    assert set(found) == {"cr-1", "cr-2"}  # expired, and full, are not offered
    held = found["cr-1"]
    assert held.offering.market == "reservation" and held.upfront_usd == 0
    assert held.instance_count == 2 and held.hours > 24 * 300  # open-ended: a year
    assert found["cr-2"].offering.market == "capacity_block"  # bought outside: paid


def test_compute_engine_reservations_with_vms_free() -> None:
    items = [{"name": "res-a3", "zone": "projects/p/zones/us-central1-a", "status": "READY",
              "specificReservation": {"count": "4", "inUseCount": "1", "instanceProperties": {
                  "machineType": "a3-highgpu-8g"}}},
             {"name": "busy", "zone": "us-central1-b", "status": "READY",
              "specificReservation": {"count": 2, "inUseCount": 2, "instanceProperties": {
                  "machineType": "a3-highgpu-8g"}}},
             {"name": "v100s", "zone": "us-central1-a", "status": "READY",
              "deleteAtTime": "2026-12-10T00:00:00Z",
              "specificReservation": {"count": 1, "instanceProperties": {
                  "machineType": "n1-standard-8", "guestAccelerators": [{
                      "acceleratorType": "nvidia-tesla-v100", "acceleratorCount": 1}]}}}]
    found = {b.offering_id: b for b in gce_reservations(items, SEEN)}
    assert set(found) == {"res-a3", "v100s"}
    assert found["res-a3"].instance_count == 3
    assert found["res-a3"].offering.key == ("gcp", "us-central1", "us-central1-a",
                                            "a3-highgpu-8g", "reservation", "linux")
    assert found["v100s"].offering.instance_type == "n1-standard-8+1xnvidia-tesla-v100"
    assert found["v100s"].end == datetime(2026, 12, 10, tzinfo=timezone.utc)


def test_asking_ec2_for_blocks_sends_the_shape_and_reads_every_page() -> None:
    boto3 = pytest.importorskip("boto3")
    from botocore.stub import Stubber

    ec2 = boto3.session.Session(aws_access_key_id="t", aws_secret_access_key="t").client(
        "ec2", region_name="us-east-1")
    start, end = SEEN, datetime(2027, 1, 26, 7, 55, tzinfo=timezone.utc)
    request = {"InstanceType": "p5.48xlarge", "InstanceCount": 1,
               "CapacityDurationHours": 48, "StartDateRange": start, "EndDateRange": end}
    first, second = offerings()
    with Stubber(ec2) as stub:
        stub.add_response("describe_capacity_block_offerings",
                          {"CapacityBlockOfferings": [first], "NextToken": "page-2"}, request)
        stub.add_response("describe_capacity_block_offerings",
                          {"CapacityBlockOfferings": [second]},
                          {**request, "NextToken": "page-2"})
        found, _ = ask_capacity_blocks(ec2, "p5.48xlarge", 1, 48, start, end, SEEN)
        stub.assert_no_pending_responses()
    assert [b.offering_id for b in found] == ["cb-0123456789abcdef0", "cb-0fedcba9876543210"]


def test_block_lengths_asked_for_a_job() -> None:
    assert block_durations(60) == [48, 72, 96]
    assert block_durations(5) == [24, 48]
    assert block_durations(24 * 20) == [21 * 24]  # whole weeks past two weeks

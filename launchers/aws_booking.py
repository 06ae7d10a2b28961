"""EC2 Capacity Blocks for ML: buying one for a job, and finding one bought before.

`PurchaseCapacityBlock` takes no idempotency token, so a purchase is tagged with the
booking's token (`TAG_BOOKING`, on the capacity reservation it makes) and a costsched
that may have bought already (it crashed between asking and recording the answer) looks
for a capacity reservation with that tag first (`DescribeCapacityReservations`) instead of
buying again. The booking is recorded in the store before either call
(`costsched.service.booking`).

A capacity block is launched into by its capacity reservation id:
`InstanceMarketOptions.MarketType` "capacity-block" and `CapacityReservationSpecification`
targeting the reservation (`launchers.aws.AwsLauncher.run_request`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from costsched.clouds import aws as aws_cloud
from costsched.model import BookedOffering, InvalidInput, utc
from launchers.base import TAG_JOB, CapacityError, Purchased
from launchers.cloud_errors import translate

TAG_BOOKING = "costsched-booking"
PLATFORM = "Linux/UNIX"
# EC2's answers that mean the offering cannot be bought (gone, sold, not enough quota).
UNAVAILABLE = frozenset({"InvalidCapacityBlockOfferingId.NotFound",
                         "InvalidCapacityBlockOfferingId.Malformed",
                         "CapacityBlockOfferingNotAvailable", "InsufficientCapacity",
                         "ReservationCapacityExceeded", "MaxSpotInstanceCountExceeded"})


def _time(value: Any) -> datetime:
    """A time of an answer: botocore hands datetimes; a recorded body, ISO 8601 text."""
    return utc(value if isinstance(value, datetime) else aws_cloud.parse_timestamp(value))


def _purchased(record: dict[str, Any]) -> Purchased:
    return Purchased(str(record["CapacityReservationId"]), _time(record["StartDate"]),
                     _time(record["EndDate"]), str(record.get("State", "")))


def find(ec2: Any, token: str) -> Purchased | None:
    """The capacity reservation bought under `token` (by its tag), or None."""
    answer = ec2.describe_capacity_reservations(
        Filters=[{"Name": f"tag:{TAG_BOOKING}", "Values": [token]}])
    found = [r for r in answer.get("CapacityReservations", [])
             if r.get("State") not in ("cancelled", "failed", "payment-failed")]
    return _purchased(found[0]) if found else None


def purchase(ec2: Any, booked: BookedOffering, token: str, job_id: int | None) -> Purchased:
    """Buy the capacity block `booked` (its CapacityBlockOfferingId), tagged with `token`
    and the job; CapacityError when EC2 no longer sells it."""
    from botocore.exceptions import ClientError

    tags = [{"Key": TAG_BOOKING, "Value": token}]
    if job_id is not None:
        tags.append({"Key": TAG_JOB, "Value": str(job_id)})
    try:
        answer = ec2.purchase_capacity_block(
            CapacityBlockOfferingId=booked.offering_id, InstancePlatform=PLATFORM,
            TagSpecifications=[{"ResourceType": "capacity-reservation", "Tags": tags}])
    except ClientError as exc:
        err = exc.response.get("Error", {})
        code, message = str(err.get("Code", "")), " ".join(str(err.get("Message", "")).split())
        if code in UNAVAILABLE or code.startswith("InvalidCapacityBlockOffering"):
            raise CapacityError(booked.offering, f"{code}: {message}") from None
        raise translate("aws", f"{booked.offering.region}: purchase_capacity_block "
                        f"{booked.offering_id}", exc) from exc
    record = answer.get("CapacityReservation")
    if not record:
        raise InvalidInput(f"aws {booked.offering.region}: purchase_capacity_block "
                           f"{booked.offering_id}: no capacity reservation in the answer")
    return _purchased(record)


def launch_options(market: str, reservation: str) -> dict[str, Any]:
    """The run_instances arguments that put an instance into booked capacity: a capacity
    block's reservation (MarketType capacity-block), or a reservation held."""
    target = {"CapacityReservationTarget": {"CapacityReservationId": reservation}}
    if market == "capacity_block":
        return {"InstanceMarketOptions": {"MarketType": "capacity-block"},
                "CapacityReservationSpecification": target}
    return {"CapacityReservationSpecification": target}

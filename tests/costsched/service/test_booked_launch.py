"""`launch --book` on the EC2 launcher, botocore's Stubber fed the documented bodies: the
H100 job's plan buys the capacity block (PurchaseCapacityBlock, recorded first), runs on
spot while it waits, moves into the block when it starts (RunInstances into its capacity
reservation, the request asserted) and off it before its end, all through the migration
machine, each step at the time the daemon would take it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

pytest.importorskip("boto3")
import boto3  # noqa: E402
from botocore.stub import ANY, Stubber  # noqa: E402

from costsched.cli.booked import booked_lines  # noqa: E402
from costsched.service import jobs as service  # noqa: E402
from costsched.service.booking import booking_token  # noqa: E402
from costsched.store import PriceStore  # noqa: E402
from launchers.aws import AwsLauncher  # noqa: E402
from launchers.aws_booking import TAG_BOOKING  # noqa: E402
from launchers.base import TAG_JOB  # noqa: E402
from tests.costsched.service.booked_world import NOW, job_spec, world  # noqa: E402

REGION = "us-east-1"
RESERVATION = "cr-0a1b2c3d4e5f60718"
BLOCK_START = datetime(2026, 12, 2, 11, 30, tzinfo=timezone.utc)
BLOCK_END = datetime(2026, 12, 4, 11, 30, tzinfo=timezone.utc)


class Cloud:
    """The launcher's EC2 and SSM clients, each behind a Stubber."""

    def __init__(self) -> None:
        session = boto3.session.Session(region_name=REGION, aws_access_key_id="testing",
                                        aws_secret_access_key="testing")
        self.launcher = AwsLauncher(session=session, image_id="ami-12c6146b")
        self.ec2 = session.client("ec2", region_name=REGION)
        self.ssm = session.client("ssm", region_name=REGION)
        self.launcher._clients[("ec2", REGION)] = self.ec2
        self.launcher._clients[("ssm", REGION)] = self.ssm
        self.stub, self.ssm_stub = Stubber(self.ec2), Stubber(self.ssm)
        self.stub.activate()
        self.ssm_stub.activate()

    def done(self) -> None:
        self.stub.assert_no_pending_responses()
        self.ssm_stub.assert_no_pending_responses()


def instance(ec2_id: str, state: str, job: int, attempt: str, key: tuple, *,
             lifecycle: str | None = None) -> dict:
    """An Instances item of DescribeInstances / RunInstances, as EC2 documents it."""
    record = {"InstanceId": ec2_id, "InstanceType": key[3], "ImageId": "ami-12c6146b",
              "State": {"Code": 16 if state == "running" else 0, "Name": state},
              "Placement": {"AvailabilityZone": key[2]},
              "Tags": [{"Key": TAG_JOB, "Value": str(job)},
                       {"Key": "costsched-attempt", "Value": attempt},
                       {"Key": "costsched-offering", "Value": "|".join(key)}]}
    if lifecycle:
        record["InstanceLifecycle"] = lifecycle
    return record


def described(*records: dict) -> dict:
    return {"Reservations": [{"ReservationId": "r-0123", "OwnerId": "123456789012",
                              "Instances": list(records)}] if records else []}


def spot_key(zone: str = "us-east-1a") -> tuple:
    return ("aws", REGION, zone, "p5.48xlarge", "spot", "linux")


BLOCK_KEY = ("aws", REGION, "us-east-1a", "p5.48xlarge", "capacity_block", "linux")


def run_request(market_options: dict | None, zone: str, **extra: object) -> dict:
    """The RunInstances request costsched makes (its user data and token aside)."""
    request = {"ImageId": "ami-12c6146b", "InstanceType": "p5.48xlarge", "MinCount": 1,
               "MaxCount": 1, "ClientToken": ANY, "UserData": ANY,
               "TagSpecifications": ANY, "InstanceInitiatedShutdownBehavior": "terminate",
               "Placement": {"AvailabilityZone": zone}, **extra}
    if market_options is not None:
        request["InstanceMarketOptions"] = market_options
    return request


SPOT_OPTIONS = {"MarketType": "spot", "SpotOptions": {
    "SpotInstanceType": "one-time", "InstanceInterruptionBehavior": "terminate"}}


def end(cloud: Cloud, ec2_id: str, gone: dict) -> None:
    """TerminateInstances, the record read after it, and the attempt's secrets deleted
    (it had none)."""
    cloud.stub.add_response("terminate_instances", {"TerminatingInstances": [{
        "InstanceId": ec2_id, "CurrentState": {"Code": 32, "Name": "shutting-down"},
        "PreviousState": {"Code": 16, "Name": "running"}}]}, {"InstanceIds": [ec2_id]})
    cloud.stub.add_response("describe_instances", gone, {"InstanceIds": [ec2_id]})
    cloud.ssm_stub.add_response("get_parameters_by_path", {"Parameters": []}, None)


def purchase_body() -> dict:
    """PurchaseCapacityBlock's answer (the documented CapacityReservation)."""
    return {"CapacityReservation": {
        "CapacityReservationId": RESERVATION, "OwnerId": "123456789012",
        "InstanceType": "p5.48xlarge", "InstancePlatform": "Linux/UNIX",
        "AvailabilityZone": "us-east-1a", "Tenancy": "default", "TotalInstanceCount": 1,
        "AvailableInstanceCount": 1, "State": "scheduled", "StartDate": BLOCK_START,
        "EndDate": BLOCK_END, "EndDateType": "limited", "InstanceMatchCriteria": "targeted",
        "ReservationType": "capacity-block", "CreateDate": NOW}}


def test_the_booked_plan_buys_the_block_waits_launches_into_it_and_leaves_before_its_end(
        tmp_path: Path) -> None:
    store = world(PriceStore(f"sqlite:///{tmp_path}/s.db"))
    block = next(b for b in store.booked.offered(NOW) if b.hours == 48)
    token = booking_token("h100-train", block)
    cloud = Cloud()
    # 1. Launch at NOW: the booking found not bought yet under its token, then bought
    # (tagged with it), then the job started on spot until the block starts.
    cloud.stub.add_response("describe_capacity_reservations", {"CapacityReservations": []},
                            {"Filters": [{"Name": f"tag:{TAG_BOOKING}", "Values": [token]}]})
    cloud.stub.add_response("purchase_capacity_block", purchase_body(), {
        "CapacityBlockOfferingId": "cb-0123456789abcdef0", "InstancePlatform": "Linux/UNIX",
        "TagSpecifications": [{"ResourceType": "capacity-reservation",
                               "Tags": [{"Key": TAG_BOOKING, "Value": token}]}]})
    for _ in range(2):  # the job's instances, then this attempt's: none (no crash before)
        cloud.stub.add_response("describe_instances", described(), {"Filters": ANY})
    cloud.stub.add_response("run_instances", {"Instances": [instance(
        "i-0spot000000000001", "pending", 1, "j1-m1-0", spot_key(), lifecycle="spot")]},
        run_request(SPOT_OPTIONS, "us-east-1a"))
    cloud.stub.add_response("describe_instances", described(instance(
        "i-0spot000000000001", "running", 1, "j1-m1-0", spot_key(), lifecycle="spot")),
        {"InstanceIds": ["i-0spot000000000001"]})
    seen_first = []  # the booking as stored when the purchase is asked for

    def recorded_first(**_: object) -> None:
        seen_first.append(store.booked.get(token))

    cloud.ec2.meta.events.register_first("before-parameter-build.ec2.PurchaseCapacityBlock",
                                         recorded_first)
    asked = []
    (job,) = service.launch(store, job_spec(tmp_path), launcher=cloud.launcher, at=NOW,
                            book=lambda plans: asked.append(plans) or True,
                            checkpoint_root=str(tmp_path / "ckpt"))
    cloud.done()
    assert asked[0].best.booked.offering_id == "cb-0123456789abcdef0"  # asked, then bought
    assert seen_first[0] is not None and seen_first[0].state == "purchasing"
    (booking,) = store.booked.of_job(job.id)
    assert (booking.state, booking.reservation_id) == ("scheduled", RESERVATION)
    assert (booking.booked.start, booking.booked.end) == (BLOCK_START, BLOCK_END)
    placed = store.jobs.placements(job.id)
    assert placed["market"].tolist() == ["spot"] and placed["zone"].tolist() == ["us-east-1a"]

    # 2. While it waits for the block, the re-plan keeps it on spot.
    later = NOW + timedelta(hours=12)
    advice = service.migrate(store, cloud.launcher, at=later)
    cloud.done()
    assert advice[0].started is None and advice[0].decision.choice == spot_key()
    (shown,) = service.status(store, None, job.id, at=later)
    assert shown.booked_usd == 1887.84 and shown.bookings[0].reservation_id == RESERVATION
    (line,) = booked_lines(shown, later)
    assert line == (f"booked: capacity block {RESERVATION} (p5.48xlarge x1, us-east-1a) "
                    "2026-12-02 11:30 to 2026-12-04 11:30 UTC, $1,887.84 upfront: starts "
                    "in 16 h")  # by the age rule: whole hours under two days

    # 3. The block starts: the re-plan moves the job there. The spot instance is asked to
    # checkpoint and stop (SSM), and is ended when it has not stopped in time.
    t3 = BLOCK_START + timedelta(minutes=10)
    spot_id = "i-0spot000000000001"
    cloud.ssm_stub.add_response("send_command", {"Command": {
        "CommandId": "0b1c2d3e-4f50-6172-8394-a5b6c7d8e9f0"}}, {
        "InstanceIds": [spot_id], "DocumentName": "AWS-RunShellScript",
        "Comment": ANY, "Parameters": ANY})
    running_spot = described(instance(spot_id, "running", 1, "j1-m1-0", spot_key(),
                                      lifecycle="spot"))
    cloud.stub.add_response("describe_instances", running_spot, {"InstanceIds": [spot_id]})
    advice = service.migrate(store, cloud.launcher, at=t3)
    cloud.done()
    assert advice[0].decision.choice == BLOCK_KEY and advice[0].started is not None
    assert f"capacity-block (booked capacity, reservation {RESERVATION}" in advice[0].reason
    move = advice[0].started
    assert move.candidates[0]["reservation"] == RESERVATION
    assert move.candidates[0]["usd_per_hour"] == 0.0  # paid already

    # ...eleven minutes later the next pass ends it and launches into the block's
    # capacity reservation: the request asserted as EC2 documents a capacity block launch.
    t4 = t3 + timedelta(minutes=11)
    cloud.stub.add_response("describe_instances", running_spot, {"InstanceIds": [spot_id]})
    gone = described(instance(spot_id, "terminated", 1, "j1-m1-0", spot_key(),
                              lifecycle="spot"))
    end(cloud, spot_id, gone)
    for _ in range(2):
        cloud.stub.add_response("describe_instances", described(), {"Filters": ANY})
    block_id = "i-0block00000000001"
    cloud.stub.add_response("run_instances", {"Instances": [instance(
        block_id, "pending", 1, "j1-m2-0", BLOCK_KEY, lifecycle="capacity-block")]},
        run_request({"MarketType": "capacity-block"}, "us-east-1a",
                    CapacityReservationSpecification={"CapacityReservationTarget": {
                        "CapacityReservationId": RESERVATION}}))
    cloud.stub.add_response("describe_instances", described(instance(
        block_id, "running", 1, "j1-m2-0", BLOCK_KEY, lifecycle="capacity-block")),
        {"InstanceIds": [block_id]})
    end(cloud, spot_id, gone)  # the source ended once the target runs (idempotent)
    service.advance_moves(store, cloud.launcher, at=t4)
    cloud.done()
    placed = store.jobs.placements(job.id)
    assert placed["market"].tolist() == ["spot", "capacity_block"]
    assert placed["usd_per_hour"].tolist()[-1] == 0.0

    # 4. On the block, the job reports its steps (spot before it did 14 h of the 60);
    # three hours before the block ends it stays...
    store.jobs.record_progress(job.id, 14 * 3600, at=t4)
    t5 = BLOCK_END - timedelta(hours=3)
    store.jobs.record_progress(job.id, 14 * 3600 + 44.6 * 3600, at=t5)
    advice = service.migrate(store, cloud.launcher, at=t5)
    cloud.done()
    assert advice[0].started is None and advice[0].decision.choice == BLOCK_KEY

    # ...and an hour later, when the next hour would pass the block's end less its margin
    # (EC2 starts ending its instances 30 minutes before its end), it moves off.
    t6 = BLOCK_END - timedelta(hours=2)
    cloud.ssm_stub.add_response("send_command", {"Command": {
        "CommandId": "1b2c3d4e-5f60-7182-93a4-b5c6d7e8f901"}}, {
        "InstanceIds": [block_id], "DocumentName": "AWS-RunShellScript",
        "Comment": ANY, "Parameters": ANY})
    on_block = described(instance(block_id, "running", 1, "j1-m2-0", BLOCK_KEY,
                                  lifecycle="capacity-block"))
    cloud.stub.add_response("describe_instances", on_block, {"InstanceIds": [block_id]})
    advice = service.migrate(store, cloud.launcher, at=t6)
    cloud.done()
    off = advice[0].decision.choice
    assert off != BLOCK_KEY and advice[0].started is not None
    assert "booked capacity left before its end" in advice[0].reason
    t7 = t6 + timedelta(minutes=11)
    cloud.stub.add_response("describe_instances", on_block, {"InstanceIds": [block_id]})
    ended = described(instance(block_id, "terminated", 1, "j1-m2-0", BLOCK_KEY,
                               lifecycle="capacity-block"))
    end(cloud, block_id, ended)
    for _ in range(2):
        cloud.stub.add_response("describe_instances", described(), {"Filters": ANY})
    after_id = "i-0after00000000001"
    market = SPOT_OPTIONS if off[4] == "spot" else None
    cloud.stub.add_response("run_instances", {"Instances": [instance(
        after_id, "pending", 1, "j1-m3-0", off)]}, run_request(market, off[2]) if off[2]
        else {**run_request(market, ""), "Placement": ANY})
    cloud.stub.add_response("describe_instances", described(instance(
        after_id, "running", 1, "j1-m3-0", off)), {"InstanceIds": [after_id]})
    end(cloud, block_id, ended)
    service.advance_moves(store, cloud.launcher, at=t7)
    cloud.done()
    placed = store.jobs.placements(job.id)
    assert placed["market"].tolist() == ["spot", "capacity_block", off[4]]
    left = placed.iloc[1]["end_at"]
    assert left == t7 and left < BLOCK_END - timedelta(minutes=30)

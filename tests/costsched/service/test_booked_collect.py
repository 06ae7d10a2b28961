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


class _Jobs:
    """The job store a live job's blocks are asked from: one open placement of the job on
    p5.48xlarge, its record and the speed its launch was planned with."""

    def __init__(self, record: object, steps_per_second: float) -> None:
        self.record, self.sps = record, steps_per_second

    def placements(self):  # noqa: ANN201
        import pandas as pd

        return pd.DataFrame({"job_id": [1], "cloud": ["aws"], "instance_type": ["p5.48xlarge"],
                             "end_at": [None]})

    def records(self, ids):  # noqa: ANN001, ANN201
        return [self.record]

    def predictions(self, ids):  # noqa: ANN001, ANN201
        import pandas as pd

        return pd.DataFrame({"job_id": [1], "steps_per_second": [self.sps]})


def _asked_hours(spec: dict, steps_total: float, steps_done: float, sps: float) -> set[int]:
    from types import SimpleNamespace

    from costsched.service.booked_collect import block_shapes

    record = SimpleNamespace(id=1, final=False, spec={"spec": spec}, steps_total=steps_total,
                             steps_done=steps_done)
    store = SimpleNamespace(jobs=_Jobs(record, sps))
    return {hours for _, _, hours in block_shapes(store, [], NOW)}


def test_an_hours_jobs_blocks_hold_all_its_hours_whatever_step_it_reports() -> None:
    """60 h of work on 8 H100s (no model: its plan's speed is relative to them, 1): the
    step it reports (150,000 of its own steps) is no share of its 216,000 reference
    seconds, so its hours to go are all 60 (blocks of 2, 3 and 4 days), never 18."""
    spec = {"hours": 60, "reference_gpu": "H100:8"}
    assert _asked_hours(spec, 60 * 3600, 150_000, 1.0) == {48, 72, 96}
    # Before it reports a step, the same.
    assert _asked_hours(spec, 60 * 3600, 0, 1.0) == {48, 72, 96}


def test_a_steps_jobs_blocks_hold_the_steps_it_has_left() -> None:
    spec = {"steps": 216_000, "throughputs": {"H100:8": 1.0}}
    # 150,000 of 216,000 steps done at 1 step/s: 18.3 h to go (blocks of 1 and 2 days).
    assert _asked_hours(spec, 216_000, 150_000, 1.0) == {24, 48}


def test_a_cloud_not_ready_is_its_own_line_and_the_other_cloud_is_asked(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from costsched.clouds.gcp import NoProject

    monkeypatch.setitem(sys.modules, "boto3", None)  # no AWS SDK: EC2 is not asked
    asked: list[str] = []

    def gce():  # noqa: ANN202 - the project's reservations: none named
        asked.append("gce")
        raise NoProject("gcp: no project: name one, or set GOOGLE_CLOUD_PROJECT")

    found = collect_booked(PriceStore(f"sqlite:///{tmp_path}/s.db"), at=NOW,
                           regions=["us-east-1"], gpus=["H100"], gce_reservations=gce)
    assert asked == ["gce"]
    assert found.errors == ["aws: boto3 is not installed: pip install 'costsched[aws]'",
                            "gcp: no project: name one, or set GOOGLE_CLOUD_PROJECT"]

"""Compute Engine booked capacity on the launcher's fake InstancesClient: a flex-start VM
(provisioningModel FLEX_START, maxRunDuration, the time it may wait), shown waiting while
Compute Engine finds capacity, and a VM in a reservation the project holds."""

from __future__ import annotations

import pytest

compute_v1 = pytest.importorskip("google.cloud.compute_v1")

from costsched.model import Offering  # noqa: E402
from launchers.base import CapacityError  # noqa: E402
from launchers.gcp import (  # noqa: E402
    FLEX_START_SECONDS,
    FLEX_START_WAIT_SECONDS,
    RESERVATION_KEY,
    GcpLauncher,
)
from tests.launchers.test_gcp import FakeInstances, spec  # noqa: E402


def a3(market: str) -> Offering:
    return Offering("gcp", "us-central1", "us-central1-a", "a3-highgpu-8g", market, "H100", 8)


@pytest.fixture
def fake() -> FakeInstances:
    return FakeInstances()


@pytest.fixture
def launcher(fake: FakeInstances) -> GcpLauncher:
    return GcpLauncher(project="proj", instances_client=fake,
                       service_account="runner@proj.iam.gserviceaccount.com")


def test_a_flex_start_vm_is_asked_for_and_waits_for_capacity(fake: FakeInstances,
                                                             launcher: GcpLauncher) -> None:
    got = launcher.launch(spec(a3("flex_start")))
    [request] = fake.inserted
    body = request.instance_resource
    assert body.scheduling == compute_v1.Scheduling(
        provisioning_model="FLEX_START", instance_termination_action="DELETE",
        on_host_maintenance="TERMINATE", automatic_restart=False,
        max_run_duration=compute_v1.Duration(seconds=7 * 24 * 3600))
    assert FLEX_START_SECONDS == 7 * 24 * 3600
    assert body.params.request_valid_for_duration.seconds == FLEX_START_WAIT_SECONDS
    assert body.machine_type == "zones/us-central1-a/machineTypes/a3-highgpu-8g"
    assert got.offering_key[4] == "flex_start"
    # Compute Engine holds it PENDING until it finds the capacity: a launch that waits.
    fake.store[tuple(got.id.split("/"))].status = "PENDING"
    waiting = launcher.status(got.id)
    assert (waiting.state, waiting.detail) == ("pending", "flex-start: waiting for capacity")
    fake.store[tuple(got.id.split("/"))].status = "RUNNING"
    assert launcher.status(got.id).state == "running"
    # At its run limit Compute Engine deletes it: gone, not by costsched, as a preemption
    # (the job recovers from its newest checkpoint).
    fake.store.pop(tuple(got.id.split("/")))
    assert launcher.status(got.id).state == "preempted"


def test_a_vm_in_a_reservation_held_targets_it_by_name(fake: FakeInstances,
                                                       launcher: GcpLauncher) -> None:
    import dataclasses

    launcher.launch(dataclasses.replace(spec(a3("reservation")), reservation="res-a3-8"))
    body = fake.inserted[0].instance_resource
    assert body.reservation_affinity == compute_v1.ReservationAffinity(
        consume_reservation_type="SPECIFIC_RESERVATION", key=RESERVATION_KEY,
        values=["res-a3-8"])
    assert body.scheduling == compute_v1.Scheduling(on_host_maintenance="TERMINATE")
    with pytest.raises(CapacityError, match="no reservation to launch into"):
        launcher.launch(spec(a3("reservation"), attempt="b"))

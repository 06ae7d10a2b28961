"""An offering priced for a whole region (as every GCP price is) with no zone given: the
launcher asks Compute Engine which zones of the region have the machine type and the
accelerator type (with enough cards per instance), and tries them in turn when one has no
capacity now; the exact list and insert requests on the fakes."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

compute_v1 = pytest.importorskip("google.cloud.compute_v1")

from google.api_core import exceptions  # noqa: E402

from costsched.migration.launcher import CapacityError, QuotaError  # noqa: E402
from costsched.model import InvalidInput  # noqa: E402
from launchers.gcp import GcpLauncher  # noqa: E402
from tests.launchers.test_gcp import FakeInstances, Operation, offering, spec  # noqa: E402

REGIONAL = offering(zone="")  # n1-standard-8+1xnvidia-tesla-v100, us-central1


class FakeTypes:
    """MachineTypesClient / AcceleratorTypesClient.aggregated_list over {zone: cards}:
    the (scope, scoped list) pairs Compute Engine pages through, every zone of every
    region, the filter applied as the API applies it."""

    def __init__(self, kind: str, name: str, zones: dict[str, int]) -> None:
        self.kind, self.name, self.zones = kind, name, zones
        self.requests: list = []

    def aggregated_list(self, request):
        self.requests.append(request)
        wanted = request.filter.split("=", 1)[1].strip().strip('"')
        for zone, cards in self.zones.items():
            items = [SimpleNamespace(name=self.name, zone=zone, maximum_cards_per_instance=cards)
                     ] if wanted == self.name else []
            yield f"zones/{zone}", SimpleNamespace(**{self.kind: items})


def launcher(fake: FakeInstances, machines: dict[str, int], gpus: dict[str, int]
             ) -> GcpLauncher:
    return GcpLauncher(
        project="proj", instances_client=fake,
        machine_types_client=FakeTypes("machine_types", "n1-standard-8", machines),
        accelerator_types_client=FakeTypes("accelerator_types", "nvidia-tesla-v100", gpus))


# The machine type in b, c, f and another region; the GPU in a, c, f (f with too few cards
# per instance for 4 of them) and the other region.
MACHINES = {"us-central1-b": 0, "us-central1-c": 0, "us-central1-f": 0, "europe-west4-a": 0}
GPUS = {"us-central1-a": 8, "us-central1-f": 8, "us-central1-c": 8, "europe-west4-a": 8}


def test_the_zones_that_have_both_the_machine_and_its_gpus_are_asked_once() -> None:
    fake = FakeInstances()
    gce = launcher(fake, MACHINES, GPUS)
    assert gce.zones_to_try(spec(REGIONAL)) == ["us-central1-c", "us-central1-f"]
    [asked] = gce._machine_types.requests
    assert (asked.project, asked.filter) == ("proj", 'name = "n1-standard-8"')
    assert gce._accelerator_types.requests[0].filter == 'name = "nvidia-tesla-v100"'
    got = gce.launch(spec(REGIONAL))
    assert [r.zone for r in fake.inserted] == ["us-central1-c"]
    assert got.id.startswith("us-central1-c/")
    gce.launch(spec(REGIONAL, attempt="launch-2"))  # the answer is kept, not asked again
    assert len(gce._machine_types.requests) == len(gce._accelerator_types.requests) == 1


def test_too_few_cards_per_instance_leave_a_zone_out() -> None:
    four = dataclasses.replace(REGIONAL, instance_type="n1-standard-8+4xnvidia-tesla-v100")
    gce = launcher(FakeInstances(), MACHINES, {**GPUS, "us-central1-f": 2})
    assert gce.zones_to_try(spec(four)) == ["us-central1-c"]


def test_no_zone_of_the_region_offers_it() -> None:
    gce = launcher(FakeInstances(), {"europe-west4-a": 0}, GPUS)
    with pytest.raises(InvalidInput, match="us-central1: no zone offers n1-standard-8"):
        gce.launch(spec(REGIONAL))


class ZoneStockout(FakeInstances):
    """Compute Engine with no capacity now in the zones named."""

    def __init__(self, *full: str, code: str = "ZONE_RESOURCE_POOL_EXHAUSTED") -> None:
        super().__init__()
        self.full, self.code = set(full), code

    def insert(self, request):
        if request.zone in self.full:
            self.inserted.append(request)
            return Operation(exceptions.from_http_status(
                400, "not enough resources", errors=[compute_v1.Errors(code=self.code)]))
        return super().insert(request)


def test_a_zone_without_capacity_passes_the_launch_to_the_regions_next_zone() -> None:
    fake = ZoneStockout("us-central1-c")
    got = launcher(fake, MACHINES, GPUS).launch(spec(REGIONAL))
    assert [r.zone for r in fake.inserted] == ["us-central1-c", "us-central1-f"]
    assert got.id.startswith("us-central1-f/") and len(fake.store) == 1
    # The second zone's request is its own; a retry after a crash repeats each as it was.
    first, second = fake.inserted
    assert first.request_id != second.request_id
    again = ZoneStockout("us-central1-c")
    launcher(again, MACHINES, GPUS).launch(spec(REGIONAL))
    assert [r.request_id for r in again.inserted] == [first.request_id, second.request_id]


def test_every_zone_without_capacity_is_one_capacity_error_naming_each() -> None:
    fake = ZoneStockout("us-central1-c", "us-central1-f")
    with pytest.raises(CapacityError) as caught:
        launcher(fake, MACHINES, GPUS).launch(spec(REGIONAL))
    assert not isinstance(caught.value, QuotaError) and not fake.store
    said = caught.value.reason
    assert said.startswith("us-central1-c: ZONE_RESOURCE_POOL_EXHAUSTED")
    assert "; us-central1-f: ZONE_RESOURCE_POOL_EXHAUSTED" in said


def test_a_quota_refusal_is_not_tried_in_the_next_zone() -> None:
    fake = ZoneStockout("us-central1-c", code="QUOTA_EXCEEDED")
    with pytest.raises(QuotaError):
        launcher(fake, MACHINES, GPUS).launch(spec(REGIONAL))
    assert [r.zone for r in fake.inserted] == ["us-central1-c"]


def test_a_job_that_keeps_to_a_zone_is_tried_there_only() -> None:
    fake = ZoneStockout("us-central1-f")
    kept = dataclasses.replace(spec(REGIONAL), zones=("us-central1-f",))
    with pytest.raises(CapacityError):
        launcher(fake, MACHINES, GPUS).launch(kept)
    assert [r.zone for r in fake.inserted] == ["us-central1-f"]


def test_an_n1_machine_with_gpus_of_any_allowed_count_is_asked_and_inserted_as_it_is() -> None:
    # n1-highmem-16 with 2 P4s: one of the N1 pairs within GCP's limits the catalog lists.
    p4 = dataclasses.replace(REGIONAL, instance_type="n1-highmem-16+2xnvidia-tesla-p4",
                             gpu_model="P4", gpu_count=2)
    fake = FakeInstances()
    gce = GcpLauncher(
        project="proj", instances_client=fake,
        machine_types_client=FakeTypes("machine_types", "n1-highmem-16", MACHINES),
        accelerator_types_client=FakeTypes("accelerator_types", "nvidia-tesla-p4",
                                           {**GPUS, "us-central1-c": 1}))
    assert gce.zones_to_try(spec(p4)) == ["us-central1-f"]  # c has 1 card per instance
    assert gce._machine_types.requests[0].filter == 'name = "n1-highmem-16"'
    assert gce._accelerator_types.requests[0].filter == 'name = "nvidia-tesla-p4"'
    gce.launch(spec(p4))
    [request] = fake.inserted
    body = request.instance_resource
    assert request.zone == "us-central1-f"
    assert body.machine_type == "zones/us-central1-f/machineTypes/n1-highmem-16"
    assert list(body.guest_accelerators) == [compute_v1.AcceleratorConfig(
        accelerator_count=2,
        accelerator_type="zones/us-central1-f/acceleratorTypes/nvidia-tesla-p4")]

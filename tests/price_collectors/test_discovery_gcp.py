"""GCP discovery with the acceleratorTypes aggregated list and the Cloud Billing Catalog SKUs
(fake clients answering in the APIs' documented JSON shapes, over two pages each, every
request asserted); then the next collection prices the machine type discovered."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched import catalog
from price_collectors import discovery, discovery_gcp
from price_collectors.gcp import COMPUTE_SERVICE, GcpCollector

NEW_TYPE = "a3-highgpu-2g"  # in no bundled file
ZONE_URL = "https://www.googleapis.com/compute/v1/projects/p/zones/"


class Pager:
    """A client whose list call walks its pages and records each request it was given."""

    def __init__(self, pages: list) -> None:
        self.pages = pages
        self.requests: list[dict] = []

    def _walk(self, request: dict, **_: object):
        self.requests.append(request)
        for page in self.pages:
            yield from (page.items() if isinstance(page, dict) else page)

    aggregated_list = list_skus = _walk


def machine(name: str, zone: str, accelerator: str, count: int, cpus: int, mb: int) -> dict:
    return {"kind": "compute#machineType", "name": name, "guestCpus": cpus, "memoryMb": mb,
            "zone": zone, "accelerators": [{"guestAcceleratorType": accelerator,
                                            "guestAcceleratorCount": count}]}


MACHINES = [{"zones/us-east4-a": {"machineTypes": [
    machine(NEW_TYPE, "us-east4-a", "nvidia-h100-80gb", 2, 52, 479_232),
    machine("a4-highgpu-8g", "us-east4-a", "nvidia-b200", 8, 224, 4_063_232)]}}]


def accelerator(name: str, description: str, zone: str, cards: int) -> dict:
    """An acceleratorTypes entry as the Compute Engine API documents it."""
    return {"kind": "compute#acceleratorType", "name": name, "description": description,
            "zone": ZONE_URL + zone, "maximumCardsPerInstance": cards,
            "selfLink": f"{ZONE_URL}{zone}/acceleratorTypes/{name}"}


ACCELERATORS = [
    {"zones/us-east4-a": {"acceleratorTypes": [
        accelerator("nvidia-h100-80gb", "NVIDIA H100 80GB", "us-east4-a", 8),
        accelerator("nvidia-b200", "NVIDIA B200 180GB", "us-east4-a", 8)]}},
    {"zones/us-east4-b": {"acceleratorTypes": [
        accelerator("nvidia-h100-80gb", "NVIDIA H100 80GB", "us-east4-b", 8),
        accelerator("ct5lp", "TPU v5 lite", "us-east4-b", 8)]},
     "zones/europe-west9-c": {"warning": {"code": "NO_RESULTS_ON_PAGE"}}},
]


def sku(description: str, usage: str, unit: str, units: str, nanos: int) -> dict:
    """A Cloud Billing Catalog SKU as the API documents it (prices are test figures)."""
    return {"name": f"{COMPUTE_SERVICE}/skus/{abs(hash(description)) % 10**8}",
            "description": description,
            "category": {"serviceDisplayName": "Compute Engine", "resourceFamily": "Compute",
                         "resourceGroup": "GPU", "usageType": usage},
            "serviceRegions": ["us-east4"],
            "pricingInfo": [{"effectiveTime": "2026-11-01T00:00:00Z", "pricingExpression": {
                "usageUnit": unit, "tieredRates": [{"startUsageAmount": 0, "unitPrice": {
                    "currencyCode": "USD", "units": units, "nanos": nanos}}]}}]}


SKUS = [
    [sku("A3 Instance Core running in Virginia", "OnDemand", "h", "0", 30_000_000),
     sku("A3 Instance Ram running in Virginia", "OnDemand", "GiBy.h", "0", 3_000_000),
     sku("Nvidia H100 80GB GPU running in Virginia", "OnDemand", "h", "10", 0)],
    [sku("Spot Preemptible A3 Instance Core running in Virginia", "Preemptible", "h", "0",
         10_000_000),
     sku("Spot Preemptible A3 Instance Ram running in Virginia", "Preemptible", "GiBy.h", "0",
         1_000_000),
     sku("Nvidia H100 80GB GPU attached to Spot Preemptible VMs running in Virginia",
         "Preemptible", "h", "2", 0)],
    # A4: one SKU per GPU slice; the spot one is filed under OnDemand, named spot.
    [sku("A4 Nvidia B200 (1 gpu slice) running in Virginia", "OnDemand", "h", "16",
         110_000_000),
     sku("Spot Preemptible A4 Nvidia B200 (1 gpu slice) running in Virginia", "OnDemand", "h",
         "4", 954_200_000)],
]


@pytest.fixture
def discovered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(catalog.ENV_DISCOVERED, str(tmp_path / "discovered.csv"))
    catalog.reload()
    yield
    monkeypatch.undo()
    catalog.reload()


def test_accelerator_types_give_memory_zones_and_count_the_unknown() -> None:
    models, ignored = discovery_gcp.accelerator_types(Pager(ACCELERATORS)._walk({}))
    assert models["H100"] == {"memory_gb": 80, "zones": {"us-east4-a", "us-east4-b"}}
    assert models["B200"]["memory_gb"] == 180
    assert ignored == {"gcp: accelerator not in the vocabulary (ct5lp)": 1}


def test_refresh_reads_all_three_apis_and_the_next_collection_prices_the_new_type(
    discovered: None,
) -> None:
    machines, accelerators, billing = Pager(MACHINES), Pager(ACCELERATORS), Pager(SKUS)
    result = discovery.refresh(["gcp"], gcp_client=(machines, "p"),
                               gcp_accelerators=accelerators, gcp_catalog=billing)
    assert machines.requests == [{"project": "p"}]
    assert accelerators.requests == [{"project": "p"}]
    assert billing.requests == [{"parent": COMPUTE_SERVICE, "page_size": 5000}]
    assert result.errors == {}
    found = result.found["gcp"]
    assert found.new == ["gcp a3-highgpu-2g", "gcp a4-highgpu-8g"]
    rows = found.types.set_index("instance_type")
    assert (rows.loc[NEW_TYPE, "gpu_model"], rows.loc[NEW_TYPE, "gpu_count"]) == ("H100", 2)
    # B200 memory per card: the catalog's own B200 rows say it, else the accelerator type.
    assert int(rows.loc["a4-highgpu-8g", "gpu_memory_gb"]) > 0
    assert found.notes == [
        "a3-highgpu-2g: Billing Catalog SKUs price it on-demand in 1 and spot in 1 of its "
        "1 region",
        "a4-highgpu-8g: Billing Catalog SKUs price it on-demand in 1 and spot in 1 of its "
        "1 region"]
    assert any("a3-highgpu-2g: Billing" in line for line in result.lines())

    # The next collection prices it: 52 vCPUs, 468 GiB, 2 GPUs at the SKUs' test figures.
    collector = GcpCollector(gpus=["H100"], project="p", catalog_client=Pager(SKUS),
                             accelerator_client=Pager(ACCELERATORS))
    collection = collector.collect()
    assert collection.failed == {}
    got = collection.observations.query("instance_type == @NEW_TYPE")
    prices = dict(zip(got["market"], got["usd_per_hour"], strict=True))
    assert prices == pytest.approx({"on_demand": 52 * 0.03 + 468 * 0.003 + 2 * 10,
                                    "spot": 52 * 0.01 + 468 * 0.001 + 2 * 2})
    assert set(got["region"]) == {"us-east4"}

    # And the new A4 machine: 8 GPU slices.
    collector = GcpCollector(gpus=["B200"], project="p", catalog_client=Pager(SKUS),
                             accelerator_client=Pager(ACCELERATORS))
    got = collector.collect().observations.query("instance_type == 'a4-highgpu-8g'")
    assert dict(zip(got["market"], got["usd_per_hour"], strict=True)) == pytest.approx(
        {"on_demand": 8 * 16.11, "spot": 8 * 4.9542})

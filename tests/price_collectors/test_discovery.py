"""Discovery: DescribeInstanceTypes pages (botocore's Stubber, documented body shapes,
requests asserted), the discovered types file, and the next collection pricing them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from botocore.stub import Stubber

from costsched import catalog
from price_collectors import discovery
from price_collectors.aws import AwsCollector
from tests.price_collectors.test_aws import StubbedClients

NEW_TYPE = "p5e.48xlarge"  # in no bundled file


def gpu_type(name: str, gpu: str, count: int, mib: int, vcpus: int, memory_mib: int) -> dict:
    return {"InstanceType": name, "CurrentGeneration": True,
            "VCpuInfo": {"DefaultVCpus": vcpus}, "MemoryInfo": {"SizeInMiB": memory_mib},
            "GpuInfo": {"Gpus": [{"Name": gpu, "Manufacturer": "NVIDIA", "Count": count,
                                  "MemoryInfo": {"SizeInMiB": mib}}],
                        "TotalGpuMemoryInMiB": count * mib}}


PAGES = [
    [gpu_type(NEW_TYPE, "H200", 8, 144_384, 192, 2_097_152),
     {"InstanceType": "m6i.xlarge", "CurrentGeneration": True,
      "VCpuInfo": {"DefaultVCpus": 4}, "MemoryInfo": {"SizeInMiB": 16_384}}],
    [gpu_type("p4de.24xlarge", "A100", 8, 81_920, 96, 1_179_648),
     gpu_type("g4ad.xlarge", "Radeon Pro V520", 1, 8_192, 4, 16_384),
     gpu_type("g6e.xlarge", "L40S", 1, 45_776, 4, 32_768)],
]
FILTERS = [{"Name": "current-generation", "Values": ["true"]}]


def stub_region(clients: StubbedClients, region: str, zones: dict[str, list[str]]) -> None:
    ec2 = clients.ec2(region)
    _, stub = clients.stubs["ec2", region]
    for n, page in enumerate(PAGES):
        params = {"Filters": FILTERS, "MaxResults": discovery.PAGE_SIZE}
        if n:
            params["NextToken"] = f"page-{n}"
        answer = {"InstanceTypes": page}
        if n + 1 < len(PAGES):
            answer["NextToken"] = f"page-{n + 1}"
        stub.add_response("describe_instance_types", answer, params)
    names = sorted([NEW_TYPE, "g6e.xlarge", "p4de.24xlarge"])
    stub.add_response(
        "describe_instance_type_offerings",
        {"InstanceTypeOfferings": [
            {"InstanceType": t, "LocationType": "availability-zone", "Location": z}
            for t, zs in zones.items() for z in zs]},
        {"LocationType": "availability-zone",
         "Filters": [{"Name": "instance-type", "Values": names}]})
    assert ec2 is not None


@pytest.fixture
def discovered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    path = tmp_path / "discovered.csv"
    monkeypatch.setenv(catalog.ENV_DISCOVERED, str(path))
    catalog.reload()
    yield path
    monkeypatch.undo()
    catalog.reload()


def test_aws_discovery_finds_a_type_no_bundled_file_names(discovered: Path) -> None:
    assert catalog.lookup("aws", NEW_TYPE) is None
    clients = StubbedClients()
    stub_region(clients, "us-east-1", {NEW_TYPE: ["us-east-1a", "us-east-1b"],
                                       "g6e.xlarge": ["us-east-1a"],
                                       "p4de.24xlarge": ["us-east-1c"]})
    found = discovery.discover_aws(clients, ["us-east-1"])
    clients.assert_all_used()

    rows = found.types.set_index("instance_type")
    assert list(rows.index) == ["g6e.xlarge", "p4de.24xlarge", NEW_TYPE]
    h200 = rows.loc[NEW_TYPE]
    assert (h200["gpu_model"], h200["gpu_count"], h200["gpu_memory_gb"]) == ("H200", 8, 141)
    assert (h200["vcpus"], h200["memory_gb"]) == (192, 2048)
    assert h200["zones"] == "us-east-1a us-east-1b" and h200["regions"] == "us-east-1"
    assert rows.loc["p4de.24xlarge", "gpu_model"] == "A100-80GB"  # 80 GB A100
    assert found.ignored == {"aws: GPU not in the vocabulary (Radeon Pro V520)": 1}
    assert found.new == ["aws g6e.xlarge", f"aws {NEW_TYPE}"]

    discovery.save(found)
    assert catalog.lookup("aws", NEW_TYPE)["gpu_model"] == "H200"
    assert catalog.lookup("aws", "p4de.24xlarge")["vcpus"] == 96  # the bundled row kept
    assert NEW_TYPE in set(catalog.instance_types()["instance_type"])


def test_the_next_collection_prices_the_discovered_type(discovered: Path) -> None:
    clients = StubbedClients()
    stub_region(clients, "us-east-1", {NEW_TYPE: ["us-east-1a"]})
    discovery.save(discovery.discover_aws(clients, ["us-east-1"]))

    pricing = StubbedClients()
    product = {"product": {"attributes": {
        "instanceType": NEW_TYPE, "operatingSystem": "Linux", "tenancy": "Shared",
        "preInstalledSw": "NA", "capacitystatus": "Used", "regionCode": "us-east-1",
        "licenseModel": "No License required", "operation": "RunInstances"}},
        "terms": {"OnDemand": {"T1": {"effectiveDate": "2026-10-01T00:00:00Z",
                                      "priceDimensions": {"D1": {
                                          "unit": "Hrs", "pricePerUnit": {"USD": "70.0"}}}}}}}
    pricing.add_price_list("us-east-1", [product])
    collector = AwsCollector(regions=["us-east-1"], gpus=["H200"], clients=pricing)
    frame, ignored, rejected = collector.on_demand("us-east-1")
    pricing.assert_all_used()
    assert rejected == [] and not ignored
    (row,) = frame.to_dict("records")
    assert (row["instance_type"], row["gpu_model"], row["gpu_count"]) == (NEW_TYPE, "H200", 8)
    assert float(row["usd_per_hour"]) == pytest.approx(70.0)  # a test figure


def test_a_broken_discovered_file_is_one_line_naming_it(discovered: Path) -> None:
    discovered.write_text("cloud,instance_type\naws,x\n")
    catalog.reload()
    with pytest.raises(catalog.InvalidInput, match=r"discovered\.csv: missing field"):
        catalog.instance_types()


def test_discovered_types_file_round_trips(discovered: Path) -> None:
    clients = StubbedClients()
    stub_region(clients, "us-east-1", {NEW_TYPE: ["us-east-1a"]})
    discovery.save(discovery.discover_aws(clients, ["us-east-1"]))
    saved = catalog.discovered_types()
    assert list(saved["instance_type"]) == [NEW_TYPE]
    assert json.loads(json.dumps(saved.to_dict("records")))[0]["source"] == \
        discovery.AWS_SOURCE
    assert Stubber is not None


class FakeMachineTypes:
    """compute_v1.MachineTypesClient's aggregated_list, over two pages of REST bodies."""

    PAGES = [
        {"zones/us-central1-a": {"machineTypes": [
            {"name": "a4-highgpu-8g", "guestCpus": 224, "memoryMb": 4_063_232,
             "zone": "us-central1-a", "accelerators": [
                 {"guestAcceleratorType": "nvidia-b200", "guestAcceleratorCount": 8}]},
            {"name": "n2-standard-8", "guestCpus": 8, "memoryMb": 32_768,
             "zone": "us-central1-a"}]}},
        {"zones/us-central1-b": {"machineTypes": [
            {"name": "a4-highgpu-8g", "guestCpus": 224, "memoryMb": 4_063_232,
             "zone": "us-central1-b", "accelerators": [
                 {"guestAcceleratorType": "nvidia-b200", "guestAcceleratorCount": 8}]},
            {"name": "ct5lp-hightpu-4t", "guestCpus": 112, "memoryMb": 196_608,
             "zone": "us-central1-b", "accelerators": [
                 {"guestAcceleratorType": "tpu-v5-lite-podslice",
                  "guestAcceleratorCount": 4}]}]},
         "zones/europe-west4-b": {"warning": {"code": "NO_RESULTS_ON_PAGE"}}},
    ]

    def __init__(self) -> None:
        self.requests: list[dict] = []

    def aggregated_list(self, request: dict):
        self.requests.append(request)
        for page in self.PAGES:  # the client's pager walks the pages
            yield from page.items()


def test_gcp_discovery_reads_machine_types_with_gpus_attached(discovered: Path) -> None:
    client = FakeMachineTypes()
    found = discovery.discover_gcp(client, "my-project")
    assert client.requests == [{"project": "my-project"}]
    (row,) = found.types.to_dict("records")
    assert (row["instance_type"], row["gpu_model"], row["gpu_count"]) == (
        "a4-highgpu-8g", "B200", 8)  # in no bundled file
    assert (row["vcpus"], row["memory_gb"]) == (224, 3968)
    assert row["zones"] == "us-central1-a us-central1-b" and row["regions"] == "us-central1"
    assert found.ignored == {"gcp: GPU not in the vocabulary (tpu-v5-lite-podslice)": 1}
    assert found.new == ["gcp a4-highgpu-8g"]
    assert catalog.lookup("gcp", "a4-highgpu-8g") is None
    result = discovery.refresh(["gcp"], gcp_client=(client, "my-project"))
    assert result.errors == {} and catalog.lookup("gcp", "a4-highgpu-8g")["gpu_model"] == "B200"

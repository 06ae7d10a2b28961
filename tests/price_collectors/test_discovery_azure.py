"""Azure discovery against a loopback Retail Prices API and Compute resource SKUs endpoint
that page like the real ones (bodies in the documented shapes), every request asserted;
then the next collection prices the size discovered."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from costsched import catalog
from costsched.clouds.azure import http_session
from price_collectors import discovery, discovery_azure
from price_collectors.azure import AzureCollector
from tests.price_collectors.azure_fake import PATH, RetailPrices
from tests.price_collectors.conftest import Loopback

NEW_SIZE = "Standard_ND96isr_H200_v5"  # in no bundled file
SKUS_PATH = "/subscriptions/sub-1/providers/Microsoft.Compute/skus"
RETAIL = discovery_azure.retail_filter()


def meter(size: str, region: str, price: float, *, spot: bool = False,
          windows: bool = False) -> dict:
    """A Retail Prices item as the API documents it (figures are test figures)."""
    name = size.removeprefix("Standard_").replace("_", " ") + (" Spot" if spot else "")
    series = "Virtual Machines Series" + (" Windows" if windows else "")
    return {"currencyCode": "USD", "tierMinimumUnits": 0.0, "retailPrice": price,
            "unitPrice": price, "armRegionName": region, "location": region,
            "effectiveStartDate": "2026-09-01T00:00:00Z", "meterId": f"m-{size}-{spot}",
            "meterName": name, "productId": "P", "skuId": "P/1", "availabilityId": None,
            "productName": series, "skuName": name, "serviceName": "Virtual Machines",
            "serviceId": "S", "serviceFamily": "Compute", "unitOfMeasure": "1 Hour",
            "type": "Consumption", "isPrimaryMeterRegion": True, "armSkuName": size}


ITEMS = [
    meter(NEW_SIZE, "eastus", 90.0),
    meter(NEW_SIZE, "eastus", 30.0, spot=True),
    meter(NEW_SIZE, "eastus", 95.0, windows=True),
    meter(NEW_SIZE, "westus3", 92.0),
    meter("Standard_NC6s_v3", "eastus", 3.06),
    meter("Standard_D4_v5", "eastus", 0.192),  # not a GPU size
    meter("Standard_NG8ads_V620_v1", "eastus", 0.5),  # AMD V620: not in the vocabulary
    meter("Standard_NC40ads_H100_v5", "eastus", 7.0),  # new, but no resource SKU
]


def sku(name: str, gpus: int, vcpus: int, memory_gb: int, zones: dict[str, list[str]],
        kind: str = "virtualMachines") -> dict:
    """A resource SKU as Microsoft.Compute/skus documents it."""
    return {"resourceType": kind, "name": name, "tier": "Standard",
            "size": name.removeprefix("Standard_"), "family": "standardNDISRH200V5Family",
            "locations": [r for r in zones],
            "locationInfo": [{"location": r, "zones": z, "zoneDetails": []}
                             for r, z in zones.items()],
            "capabilities": [{"name": "vCPUs", "value": str(vcpus)},
                             {"name": "MemoryGB", "value": str(memory_gb)},
                             {"name": "GPUs", "value": str(gpus)},
                             {"name": "LowPriorityCapable", "value": "True"}],
            "restrictions": []}


SKU_PAGES = [
    [sku(NEW_SIZE, 8, 96, 1850, {"eastus": ["2", "1"]}),
     sku("Premium_LRS", 0, 0, 0, {"eastus": []}, kind="disks")],
    [sku("Standard_NC6s_v3", 1, 6, 112, {"eastus": ["1"]})],
]


class Skus:
    """GET .../providers/Microsoft.Compute/skus, one page at a time through nextLink."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.requests: list[tuple[str, dict, str]] = []

    def __call__(self, request) -> tuple[int, dict[str, str], bytes]:
        import json

        url = urlsplit(request.path)
        query = parse_qs(url.query)
        self.requests.append((url.path, query, request.headers.get("Authorization", "")))
        page = int(query.get("page", ["0"])[0])
        body = {"value": SKU_PAGES[page]}
        if page + 1 < len(SKU_PAGES):
            body["nextLink"] = (f"{self.base_url}{SKUS_PATH}?api-version="
                                f"{discovery_azure.SKUS_API_VERSION}&page={page + 1}")
        return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()


@pytest.fixture
def served(loopback: Loopback, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from price_collectors.azure import ENV_URL

    monkeypatch.setenv(catalog.ENV_DISCOVERED, str(tmp_path / "discovered.csv"))
    catalog.reload()
    retail, skus = RetailPrices(loopback.url), Skus(loopback.url)
    retail.items = ITEMS
    loopback.handler = lambda r: (skus if r.path.startswith("/subscriptions/") else retail)(r)
    monkeypatch.setenv(ENV_URL, loopback.url + PATH)
    yield loopback, retail, skus
    monkeypatch.undo()
    catalog.reload()


def discover(loopback: Loopback, with_skus: bool = True):
    session = http_session(0, 0)
    found = None
    if with_skus:
        found = discovery_azure.resource_skus(
            session, "sub-1", "test-token",
            url=loopback.url + "/subscriptions/{subscription}/providers/Microsoft.Compute/skus")
        assert "Authorization" not in session.headers  # the token is not kept
    return discovery_azure.discover_azure(session, skus=found,
                                          retail_url=loopback.url + PATH)


def test_azure_discovery_finds_a_size_no_bundled_file_names(served) -> None:
    loopback, retail, skus = served
    assert catalog.lookup("azure", NEW_SIZE) is None
    found = discover(loopback)

    # The Retail Prices API was read page by page (2 items a page) through NextPageLink.
    asked = [(urlsplit(p).path, parse_qs(urlsplit(p).query)) for p in loopback.paths
             if p.startswith(PATH)]
    assert [q["$filter"] for _, q in asked] == [[RETAIL]] * 4
    assert [q.get("$skip", ["0"]) for _, q in asked] == [["0"], ["2"], ["4"], ["6"]]
    # The resource SKUs were read with the token, both pages.
    assert skus.requests == [
        (SKUS_PATH, {"api-version": ["2021-07-01"]}, "Bearer test-token"),
        (SKUS_PATH, {"api-version": ["2021-07-01"], "page": ["1"]}, "Bearer test-token")]

    rows = found.types.set_index("instance_type")
    assert list(rows.index) == ["Standard_NC6s_v3", NEW_SIZE]
    h200 = rows.loc[NEW_SIZE]
    assert (h200["gpu_model"], h200["gpu_count"], h200["gpu_memory_gb"]) == ("H200", 8, 141)
    assert (h200["vcpus"], h200["memory_gb"]) == (96, 1850)
    assert h200["regions"] == "eastus westus3" and h200["zones"] == "eastus-1 eastus-2"
    assert h200["source"] == discovery_azure.SKUS_SOURCE
    assert found.new == [f"azure {NEW_SIZE}"]
    assert found.ignored == {
        "azure: GPU not in the vocabulary (Standard_NG8ads_V620_v1)": 1,
        "azure: new size without its resource SKU (needs credentials)": 1}


def test_without_credentials_only_sizes_the_catalog_knows_are_kept(served) -> None:
    loopback, _, skus = served
    found = discover(loopback, with_skus=False)
    assert skus.requests == []
    assert list(found.types["instance_type"]) == ["Standard_NC6s_v3"]
    assert found.types.iloc[0]["gpu_model"] == "V100" and found.new == []
    assert found.ignored["azure: new size without its resource SKU (needs credentials)"] == 2


def test_the_next_collection_prices_the_discovered_size(served) -> None:
    loopback, _, _ = served
    result = discovery.refresh(["azure"], azure_session=http_session(0, 0),
                               azure_skus=[s for page in SKU_PAGES for s in page],
                               azure_retail_url=loopback.url + PATH)
    assert result.errors == {} and result.found["azure"].new == [f"azure {NEW_SIZE}"]
    assert catalog.lookup("azure", NEW_SIZE)["gpu_count"] == 8

    collection = AzureCollector(gpus=["H200"], backoff=0).collect()
    assert collection.failed == {}
    got = {(r.region, r.instance_type, r.market, r.gpu_model, r.gpu_count, r.usd_per_hour)
           for r in collection.observations.itertuples()}
    assert got == {("eastus", NEW_SIZE, "on_demand", "H200", 8, 90.0),
                   ("eastus", NEW_SIZE, "spot", "H200", 8, 30.0),
                   ("westus3", NEW_SIZE, "on_demand", "H200", 8, 92.0)}


def test_an_api_error_is_one_line_and_other_clouds_go_on(served) -> None:
    loopback, retail, _ = served
    retail.fail = lambda odata, skip, first: (400, {})
    result = discovery.refresh(["azure"], azure_session=http_session(0, 0), azure_skus=[],
                               azure_retail_url=loopback.url + PATH)
    assert result.found == {}
    assert result.errors["azure"].startswith("azure: HTTP 400 from ") and \
        "\n" not in result.errors["azure"]


@pytest.mark.parametrize(("size", "model"), [
    ("Standard_NC40ads_H100_v5", "H100"), ("Standard_ND96isr_H100_v5", "H100"),
    ("Standard_ND96isr_MI300X_v5", "MI300X"), ("Standard_NC24ads_A100_v4", "A100-80GB"),
    ("Standard_ND96amsr_A100_v4", "A100-80GB"), ("Standard_ND96asr_v4", "A100"),
    ("Standard_NV36ads_A10_v5", "A10"), ("Standard_NC4as_T4_v3", "T4"),
    ("Standard_NC24rs_v3", "V100"), ("Standard_NC6s_v2", "P100"), ("Standard_NC24r", "K80"),
    ("Standard_ND128isr_GB200_v6", None), ("Standard_NG8ads_V620_v1", None),
])
def test_gpu_model_of_a_size_name(size: str, model: str | None) -> None:
    assert discovery_azure.gpu_model(size) == model

"""The Azure collector against a loopback Retail Prices server that filters, pages and fails
like the real one."""

from __future__ import annotations

import json
import re
import threading
from urllib.parse import parse_qs, quote, urlsplit

import pandas as pd
import pytest

from costsched.store import PriceStore
from price_collectors import runner
from price_collectors.azure import ENV_URL, AzureCollector, price_filter
from tests.price_collectors.conftest import FIXTURES

PAGE_SIZE = 2
PATH = "/api/retail/prices"


class RetailPrices:
    """Answers GET /api/retail/prices?$filter=... from the fixture items, PAGE_SIZE a page."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self.items = json.loads((FIXTURES / "azure_retail_prices.json").read_text())["Items"]
        self.filters: list[str] = []
        self.fail = lambda odata_filter, skip, first: None  # -> (status, headers) or None
        self._seen: set = set()
        self._lock = threading.Lock()

    def __call__(self, request) -> tuple[int, dict[str, str], bytes]:
        url = urlsplit(request.path)
        if url.path != PATH:
            return 404, {}, b"{}"
        query = parse_qs(url.query)
        odata = query.get("$filter", [""])[0]
        skip = int(query.get("$skip", ["0"])[0])
        with self._lock:
            first = (odata, skip) not in self._seen
            self._seen.add((odata, skip))
            self.filters.append(odata)
        failure = self.fail(odata, skip, first)
        if failure:
            status, headers = failure
            return status, headers, b'{"Error": "injected"}'
        matching = [i for i in self.items if _matches(i, odata)]
        page = matching[skip:skip + PAGE_SIZE]
        more = skip + PAGE_SIZE < len(matching)
        body = {"BillingCurrency": "USD", "CustomerEntityId": "Default",
                "CustomerEntityType": "Retail", "Items": page, "Count": len(page),
                "NextPageLink": (f"{self.base_url}{PATH}?$filter={quote(odata)}"
                                 f"&$skip={skip + PAGE_SIZE}") if more else None}
        return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()


def _matches(item: dict, odata: str) -> bool:
    """The subset of OData the collector uses: eq terms, and-ed, with one or-group."""
    skus = set(re.findall(r"armSkuName eq '([^']+)'", odata))
    regions = set(re.findall(r"armRegionName eq '([^']+)'", odata))
    services = set(re.findall(r"serviceName eq '([^']+)'", odata))
    types = set(re.findall(r"priceType eq '([^']+)'", odata))
    return ((not skus or item["armSkuName"] in skus)
            and (not regions or item["armRegionName"] in regions)
            and (not services or item["serviceName"] in services)
            and (not types or item["type"] in types))


@pytest.fixture()
def prices(loopback, monkeypatch: pytest.MonkeyPatch) -> RetailPrices:
    server = RetailPrices(loopback.url)
    loopback.handler = server
    monkeypatch.setenv(ENV_URL, loopback.url + PATH)
    return server


def rows(frame: pd.DataFrame) -> set[tuple]:
    return {(r.region, r.instance_type, r.market, r.zone, r.usd_per_hour)
            for r in frame.itertuples()}


EXPECTED = {
    ("eastus", "Standard_NC6s_v3", "on_demand", "", 3.06),
    ("eastus", "Standard_NC6s_v3", "spot", "", 0.3492),
    ("eastus", "Standard_NC24s_v3", "on_demand", "", 12.24),
    ("eastus", "Standard_NC24s_v3", "spot", "", 1.3968),
    ("westeurope", "Standard_NC6s_v3", "on_demand", "", 3.305),
    ("westeurope", "Standard_NC6s_v3", "spot", "", 0.661),
    ("eastus", "Standard_NC24ads_A100_v4", "on_demand", "", 3.673),
    ("eastus", "Standard_NC24ads_A100_v4", "spot", "", 0.7346),
    ("southcentralus", "Standard_NC4as_T4_v3", "on_demand", "", 0.526),
    ("southcentralus", "Standard_NC8as_T4_v3", "on_demand", "", 0.752),
    ("southcentralus", "Standard_NC8as_T4_v3", "spot", "", 0.1504),
    ("southcentralus", "Standard_NC16as_T4_v3", "on_demand", "", 1.204),
    ("southcentralus", "Standard_NC16as_T4_v3", "spot", "", 0.2408),
}


def test_pages_are_followed_and_meters_told_apart(prices: RetailPrices) -> None:
    collection = AzureCollector(backoff=0).collect()
    assert collection.failed == {}
    assert rows(collection.observations) == EXPECTED
    # Every unit's query was answered in several pages, each fetched once.
    assert any("&$skip=" not in f for f in prices.filters)
    assert len(prices.filters) > len(collection.units)
    assert sorted(collection.ignored.items()) == [("Low Priority meter", 1), ("Windows meter", 2)]
    reasons = {(r.region, r.instance_type, r.market): r.reason for r in collection.rejected}
    assert reasons[("westeurope", "Standard_NC24s_v3", "spot")].startswith("above ceiling")
    assert reasons[("southcentralus", "Standard_NC4as_T4_v3", "spot")] == "not positive"
    row = collection.observations.query("instance_type == 'Standard_NC6s_v3' and market == 'spot'"
                                        " and region == 'eastus'").iloc[0]
    assert (row["gpu_model"], row["gpu_count"], row["os"]) == ("V100", 1, "linux")
    assert row["effective_at"] == pd.Timestamp("2025-10-01T00:00:00Z")


def test_the_filter_asks_for_consumption_prices_of_the_gpu_sizes(prices: RetailPrices) -> None:
    AzureCollector(gpus=["V100"], backoff=0).collect()
    first = prices.filters[0]
    assert first.startswith("serviceName eq 'Virtual Machines' and priceType eq 'Consumption'")
    assert set(re.findall(r"armSkuName eq '([^']+)'", first)) == {
        "Standard_NC6s_v3", "Standard_NC12s_v3", "Standard_NC24s_v3", "Standard_NC24rs_v3"}
    assert price_filter(["Standard_NC6"], "eastus") == (
        "serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and "
        "armRegionName eq 'eastus' and (armSkuName eq 'Standard_NC6')")


def test_regions_restrict_the_query(prices: RetailPrices) -> None:
    collection = AzureCollector(regions=["westeurope"], backoff=0).collect()
    assert collection.units == ["westeurope"]
    assert all("armRegionName eq 'westeurope'" in f for f in prices.filters)
    assert rows(collection.observations) == {r for r in EXPECTED if r[0] == "westeurope"}


def test_429_and_5xx_are_retried_and_nothing_is_lost(prices: RetailPrices) -> None:
    count = iter(range(10_000))
    lock = threading.Lock()

    def flaky(odata, skip, first):
        with lock:
            n = next(count)
        if first and n % 3 == 0:
            return (429, {"Retry-After": "0"}) if n % 2 else (503, {})
        return None

    prices.fail = flaky
    collection = AzureCollector(backoff=0).collect()
    assert collection.failed == {}
    assert rows(collection.observations) == EXPECTED
    distinct = len(set(prices.filters))
    assert len(prices.filters) > distinct  # some requests were answered only on a retry


def test_a_unit_that_keeps_failing_is_reported_and_the_others_stored(
    prices: RetailPrices, store: PriceStore
) -> None:
    prices.fail = lambda odata, skip, first: (503, {}) if "NC6s_v3" in odata else None
    summary = runner.run([AzureCollector(retries=2, backoff=0)], store)
    azure = summary.clouds["azure"]
    assert list(azure.failed) == ["V100"]
    assert "gave up after retries" in azure.failed["V100"]
    stored = store.history()
    assert set(stored["gpu_model"]) == {"A100-80GB", "T4"}
    assert summary.inserted == len(stored) == 7


def test_collecting_twice_stores_nothing_new(prices: RetailPrices, store: PriceStore) -> None:
    first = runner.run([AzureCollector(backoff=0)], store)
    assert first.inserted == len(EXPECTED) and first.clouds["azure"].rejected == 2
    second = runner.run([AzureCollector(backoff=0)], store)
    assert second.inserted == 0 and second.unchanged == len(EXPECTED)


def test_unreachable_api_fails_every_unit_with_one_line(monkeypatch) -> None:
    monkeypatch.setenv(ENV_URL, "http://127.0.0.1:9/api/retail/prices")  # nothing listens
    collection = AzureCollector(gpus=["K80", "T4"], retries=1, backoff=0).collect()
    assert sorted(collection.failed) == ["K80", "T4"]
    assert all("\n" not in m and m for m in collection.failed.values())

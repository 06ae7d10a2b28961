"""The Azure collector against a loopback Retail Prices server that filters, pages and fails
like the real one."""

from __future__ import annotations

import re
import threading

import pandas as pd

from costsched.store import PriceStore
from price_collectors import runner
from price_collectors.azure import ENV_URL, AzureCollector, price_filter
from tests.price_collectors.azure_fake import RetailPrices


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


def test_pages_are_followed_and_meters_told_apart(azure_prices: RetailPrices) -> None:
    collection = AzureCollector(backoff=0).collect()
    assert collection.failed == {}
    assert rows(collection.observations) == EXPECTED
    # Every unit's query was answered in several pages, each fetched once.
    assert any("&$skip=" not in f for f in azure_prices.filters)
    assert len(azure_prices.filters) > len(collection.units)
    assert sorted(collection.ignored.items()) == [("Low Priority meter", 1), ("Windows meter", 2)]
    reasons = {(r.region, r.instance_type, r.market): r.reason for r in collection.rejected}
    assert reasons[("westeurope", "Standard_NC24s_v3", "spot")].startswith("above ceiling")
    assert reasons[("southcentralus", "Standard_NC4as_T4_v3", "spot")] == "not positive"
    row = collection.observations.query("instance_type == 'Standard_NC6s_v3' and market == 'spot'"
                                        " and region == 'eastus'").iloc[0]
    assert (row["gpu_model"], row["gpu_count"], row["os"]) == ("V100", 1, "linux")
    assert row["effective_at"] == pd.Timestamp("2025-10-01T00:00:00Z")


def test_the_filter_asks_for_consumption_prices_of_the_gpu_sizes(
    azure_prices: RetailPrices,
) -> None:
    AzureCollector(gpus=["V100"], backoff=0).collect()
    first = azure_prices.filters[0]
    assert first.startswith("serviceName eq 'Virtual Machines' and priceType eq 'Consumption'")
    assert set(re.findall(r"armSkuName eq '([^']+)'", first)) == {
        "Standard_NC6s_v3", "Standard_NC12s_v3", "Standard_NC24s_v3", "Standard_NC24rs_v3"}
    assert price_filter(["Standard_NC6"], "eastus") == (
        "serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and "
        "armRegionName eq 'eastus' and (armSkuName eq 'Standard_NC6')")


def test_regions_restrict_the_query(azure_prices: RetailPrices) -> None:
    collection = AzureCollector(regions=["westeurope"], backoff=0).collect()
    assert collection.units == ["westeurope"]
    assert all("armRegionName eq 'westeurope'" in f for f in azure_prices.filters)
    assert rows(collection.observations) == {r for r in EXPECTED if r[0] == "westeurope"}


def test_429_and_5xx_are_retried_and_nothing_is_lost(azure_prices: RetailPrices) -> None:
    count = iter(range(10_000))
    lock = threading.Lock()

    def flaky(odata, skip, first):
        with lock:
            n = next(count)
        if first and n % 3 == 0:
            return (429, {"Retry-After": "0"}) if n % 2 else (503, {})
        return None

    azure_prices.fail = flaky
    collection = AzureCollector(backoff=0).collect()
    assert collection.failed == {}
    assert rows(collection.observations) == EXPECTED
    distinct = len(set(azure_prices.filters))
    assert len(azure_prices.filters) > distinct  # some requests were answered only on a retry


def test_a_unit_that_keeps_failing_is_reported_and_the_others_stored(
    azure_prices: RetailPrices, store: PriceStore
) -> None:
    azure_prices.fail = lambda odata, skip, first: (503, {}) if "NC6s_v3" in odata else None
    summary = runner.run([AzureCollector(retries=2, backoff=0)], store)
    azure = summary.clouds["azure"]
    assert list(azure.failed) == ["V100"]
    assert "gave up after retries" in azure.failed["V100"]
    stored = store.history()
    assert set(stored["gpu_model"]) == {"A100-80GB", "T4"}
    assert summary.inserted == len(stored) == 7


def test_collecting_twice_stores_nothing_new(azure_prices: RetailPrices, store: PriceStore) -> None:
    first = runner.run([AzureCollector(backoff=0)], store)
    assert first.inserted == len(EXPECTED) and first.clouds["azure"].rejected == 2
    second = runner.run([AzureCollector(backoff=0)], store)
    assert second.inserted == 0 and second.unchanged == len(EXPECTED)


def test_unreachable_api_fails_every_unit_with_one_line(monkeypatch) -> None:
    monkeypatch.setenv(ENV_URL, "http://127.0.0.1:9/api/retail/prices")  # nothing listens
    collection = AzureCollector(gpus=["K80", "T4"], retries=1, backoff=0).collect()
    assert sorted(collection.failed) == ["K80", "T4"]
    assert all("\n" not in m and m for m in collection.failed.values())

"""The GCP collector through the real google-cloud-billing and google-cloud-compute clients
(REST transport) against a loopback server answering in the APIs' JSON shapes."""

from __future__ import annotations

import json
import threading
from datetime import datetime, timezone
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest
from google.api_core.client_options import ClientOptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import billing_v1, compute_v1

from costsched import catalog
from costsched.store import PriceStore
from price_collectors import runner
from price_collectors.base import CollectorUnavailable
from price_collectors.gcp import GcpCollector, machine_parts
from tests.price_collectors.conftest import FIXTURES

SKU_PAGE = 4
SKUS_PATH = "/v1/services/6F81-5844-456A/skus"
ACCELERATORS_PATH = "/compute/v1/projects/demo-project/aggregated/acceleratorTypes"


class GcpApis:
    """The two REST endpoints the collector reads; SKU pages of SKU_PAGE with page tokens."""

    def __init__(self) -> None:
        self.skus = json.loads((FIXTURES / "gcp_compute_skus.json").read_text())["skus"]
        self.accelerators = json.loads((FIXTURES / "gcp_accelerator_types.json").read_text())
        self.effective = "2026-11-21T07:41:12.355Z"
        self.paths: list[str] = []
        self.fail = lambda path, first: None  # -> HTTP status or None
        self._seen: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, request) -> tuple[int, dict[str, str], bytes]:
        url = urlsplit(request.path)
        with self._lock:
            first = request.path not in self._seen
            self._seen.add(request.path)
            self.paths.append(request.path)
        status = self.fail(url.path, first)
        if status:
            error = {"error": {"code": status, "message": "injected", "status": "UNAVAILABLE"}}
            return status, {"Content-Type": "application/json"}, json.dumps(error).encode()
        if url.path == SKUS_PATH:
            start = int(parse_qs(url.query).get("pageToken", ["0"])[0])
            page = [self._stamped(s) for s in self.skus[start:start + SKU_PAGE]]
            body = {"skus": page}
            if start + SKU_PAGE < len(self.skus):
                body["nextPageToken"] = str(start + SKU_PAGE)
        elif url.path == ACCELERATORS_PATH:
            body = self.accelerators
        else:
            return 404, {}, b"{}"
        return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()

    def _stamped(self, sku: dict) -> dict:
        """The Catalog API stamps the latest prices with (about) the request time."""
        sku = json.loads(json.dumps(sku))
        sku["pricingInfo"][0]["effectiveTime"] = self.effective
        return sku

    def set_price(self, description: str, units: str, nanos: int) -> None:
        sku = next(s for s in self.skus if s["description"] == description)
        rate = sku["pricingInfo"][0]["pricingExpression"]["tieredRates"][0]["unitPrice"]
        rate.update(units=units, nanos=nanos)


@pytest.fixture()
def apis(loopback) -> GcpApis:
    server = GcpApis()
    loopback.handler = server
    return server


@pytest.fixture()
def make(loopback):
    def collector(**kw) -> GcpCollector:
        options = ClientOptions(api_endpoint=loopback.url)
        return GcpCollector(
            project="demo-project", retry_initial=0.001,
            catalog_client=billing_v1.CloudCatalogClient(
                credentials=AnonymousCredentials(), transport="rest", client_options=options),
            accelerator_client=compute_v1.AcceleratorTypesClient(
                credentials=AnonymousCredentials(), transport="rest", client_options=options),
            **kw)
    return collector


def priced(collection) -> dict[tuple[str, str, str], float]:
    return {(r.region, r.instance_type, r.market): r.usd_per_hour
            for r in collection.observations.itertuples()}


def n1_types(gpu: str, most: int = 8) -> list[str]:
    """The catalog's N1 types with `gpu`, at most `most` of them (every N1 size with every
    count GCP attaches to it)."""
    types = catalog.instance_types()
    n1 = types[types["instance_type"].str.startswith("n1-") & (types["gpu_model"] == gpu)
               & (types["gpu_count"] <= most) & types["retired"].isna()]
    return sorted(n1["instance_type"])


V100, T4, P100 = n1_types("V100"), n1_types("T4"), n1_types("P100")
T4_UP_TO_2 = n1_types("T4", 2)  # what us-east1 offers: T4, at most 2 per VM
V100_1 = "n1-standard-8+1xnvidia-tesla-v100"
T4_1, T4_4 = "n1-standard-4+1xnvidia-tesla-t4", "n1-standard-16+4xnvidia-tesla-t4"
# Offerings the fixtures price: N1 with V100 and T4 in us-central1 (both markets), T4 up to
# 2 per VM in us-east1, A2 on demand in us-central1, G2 on demand in europe-west4.
PRICED = 2 * (len(V100) + len(T4) + len(T4_UP_TO_2)) + 5 + 8
A2 = ["a2-highgpu-1g", "a2-highgpu-2g", "a2-highgpu-4g", "a2-highgpu-8g", "a2-megagpu-16g"]
G2 = ["g2-standard-4", "g2-standard-8", "g2-standard-12", "g2-standard-16", "g2-standard-24",
      "g2-standard-32", "g2-standard-48", "g2-standard-96"]


def test_skus_join_to_offerings_where_zones_offer_them(apis: GcpApis, make) -> None:
    collection = make().collect()
    assert collection.failed == {}
    got = priced(collection)
    expected = (
        {("us-central1", t, m) for t in V100 + T4 for m in ("on_demand", "spot")}
        # us-east1: N1 and GPU SKUs exist, but only T4 is offered, at most 2 per VM.
        | {("us-east1", t, m) for t in T4_UP_TO_2 for m in ("on_demand", "spot")}
        | {("us-central1", t, "on_demand") for t in A2}  # no spot A100 SKU
        | {("europe-west4", t, "on_demand") for t in G2}  # the DWS L4 SKU is not it
    )
    assert set(got) == expected
    # vCPUs x core + GiB x RAM + GPUs x GPU, from the SKUs' units + nanos.
    assert got["us-central1", V100_1, "on_demand"] == pytest.approx(8 * 0.031611 + 30 * 0.004237
                                                                      + 2.48, abs=1e-9)
    assert got["us-central1", V100_1, "spot"] == pytest.approx(8 * 0.00698 + 30 * 0.000936
                                                                 + 0.992, abs=1e-9)
    assert got["us-central1", "a2-highgpu-1g", "on_demand"] == pytest.approx(3.673385, abs=1e-9)
    assert got["europe-west4", "g2-standard-4", "on_demand"] == pytest.approx(0.7588, abs=1e-9)
    row = collection.observations.iloc[0]
    assert (row["zone"], row["os"], row["source"]) == ("", "linux", "collect:gcp:billing-catalog")
    assert str(row["effective_at"]) == "2026-11-21 07:41:12.355000+00:00"
    # The corrupt P100 list price is rejected. (The commitment and DWS SKUs of V100 and L4
    # are not components: the exact prices above show they were not used.)
    assert {(r.instance_type, r.reason.split(" (")[0]) for r in collection.rejected} == {
        (t, "above ceiling") for t in P100}
    # The SKU listing was read page by page.
    assert sum(p.startswith(SKUS_PATH) for p in apis.paths) == -(-len(apis.skus) // SKU_PAGE)


def test_coverage_says_where_offerings_exist_and_why_others_are_unpriced(apis, make) -> None:
    coverage = make().collect().coverage.set_index(["region", "instance_type", "market"])
    assert coverage.loc[("us-central1", T4_1, "on_demand"), "zones"] == (
        "us-central1-a,us-central1-b")
    assert coverage.loc[("us-east1", T4_4, "on_demand"), "status"] == "no zone offers it"
    assert coverage.loc[("us-east1", V100_1, "on_demand"), "status"] == "no zone offers it"
    assert coverage.loc[("us-central1", "a2-highgpu-1g", "spot"), "status"] == "no gpu SKU"


def test_a_collection_stores_the_zones_that_offer_each_offering(apis, make,
                                                               store: PriceStore) -> None:
    collection = make().collect()
    offered = collection.coverage[collection.coverage["zones"] != ""]
    expected = {("gcp", r.region, zone, r.instance_type, r.market)
                for r in offered.itertuples() for zone in r.zones.split(",")}
    assert ("gcp", "us-central1", "us-central1-a", T4_1, "on_demand") in expected
    before = datetime.now(timezone.utc)
    summary = runner.run([make()], store)
    stored = store.zones(cloud="gcp")
    keys = ["cloud", "region", "zone", "instance_type", "market"]
    assert set(stored[keys].itertuples(index=False, name=None)) == expected
    assert len(stored) == len(expected) == summary.clouds["gcp"].zones
    assert summary.to_dict()["clouds"]["gcp"]["zones"] == len(expected)
    assert (stored["last_seen"] >= before.replace(microsecond=0)).all()
    # Zones without the offering (us-east1 offers no V100) are not recorded.
    assert store.zones(cloud="gcp", region="us-east1", instance_type=V100_1).empty
    runner.run([make()], store)
    assert len(store.zones(cloud="gcp")) == len(expected)


def test_regions_and_gpus_restrict_the_offerings(apis, make) -> None:
    got = priced(make(regions=["us-east1"], gpus=["T4"]).collect())
    assert set(got) == {("us-east1", t, m) for t in T4_UP_TO_2 for m in ("on_demand", "spot")}


def test_collecting_twice_stores_only_price_changes(apis, make, store: PriceStore) -> None:
    first = runner.run([make()], store)
    assert first.inserted == PRICED and first.ok
    apis.effective = "2026-11-21T09:00:00.000Z"  # a new request time, the same prices
    second = runner.run([make()], store)
    assert second.inserted == 0 and second.unchanged == PRICED
    apis.effective = "2026-11-21T10:00:00.000Z"
    apis.set_price("Nvidia Tesla T4 GPU running in Americas", "0", 380_000_000)
    third = runner.run([make()], store)
    # The T4 on-demand offerings in us-central1 and us-east1 changed price.
    assert third.inserted == len(T4) + len(T4_UP_TO_2)
    history = store.history(instance_type=[T4_1], market=["on_demand"], region=["us-east1"])
    assert history["usd_per_hour"].round(6).tolist() == [0.539999, 0.569999]


def test_5xx_and_429_are_retried_page_by_page(apis, make) -> None:
    apis.fail = lambda path, first: (503 if path == SKUS_PATH else 429) if first else None
    collection = make().collect()
    assert collection.failed == {}
    assert len(collection.observations) == PRICED
    assert len(apis.paths) == 2 * len(set(apis.paths))  # every request was failed once


def test_an_api_that_keeps_failing_is_reported(apis, make, store: PriceStore) -> None:
    apis.fail = lambda path, first: 503 if path == ACCELERATORS_PATH else None
    collector = make()
    collector.retry_initial = 0.0005  # the deadline scales with it: give up quickly
    summary = runner.run([collector], store)
    assert list(summary.clouds["gcp"].failed) == ["all regions"]
    assert "503" in summary.clouds["gcp"].failed["all regions"]
    assert store.count() == 0


def test_missing_credentials_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    def no_credentials(*args, **kwargs):
        raise DefaultCredentialsError("Your default credentials were not found.")

    monkeypatch.setattr(google.auth, "default", no_credentials)
    with pytest.raises(CollectorUnavailable, match="^gcp: no Google credentials found: run"):
        GcpCollector().plan()


def test_machine_parts_of_catalog_types() -> None:
    assert machine_parts({"instance_type": "n1-standard-8+1xnvidia-tesla-v100",
                          "gpu_model": "V100"}) == ("n1 predefined", "nvidia-tesla-v100")
    assert machine_parts({"instance_type": "a3-highgpu-8g", "gpu_model": "H100"}) == (
        "a3", "nvidia-h100-80gb")
    assert machine_parts({"instance_type": "g2-standard-4", "gpu_model": "L4"}) == (
        "g2", "nvidia-l4")


def test_effective_time_is_never_naive() -> None:
    from price_collectors.gcp import _time

    assert _time("2026-11-21T07:41:12Z").tzinfo is not None
    assert _time(datetime(2026, 1, 1)).tzinfo == timezone.utc


def _sku(description: str, usage_type: str, dollars: float) -> dict:
    """A Billing Catalog SKU in the API's JSON shape (one hourly USD rate)."""
    units, nanos = int(dollars), round((dollars - int(dollars)) * 1e9)
    return {"description": description,
            "category": {"resourceFamily": "Compute", "resourceGroup": "GPU",
                         "usageType": usage_type},
            "serviceRegions": ["us-central1", "europe-west4"],
            "pricingInfo": [{"effectiveTime": "2026-11-21T07:41:12.355Z", "pricingExpression": {
                "usageUnit": "h", "tieredRates": [{"startUsageAmount": 0, "unitPrice": {
                    "currencyCode": "USD", "units": str(units), "nanos": nanos}}]}}]}


def test_an_a4_machine_is_priced_per_gpu_slice_and_its_spot_sku_by_its_name() -> None:
    """A4 (B200) has no core or RAM SKU: one SKU per GPU slice prices the machine. Google
    files the spot slice SKU under usage type OnDemand; its description says spot."""
    from price_collectors.gcp import price_offerings, sku_components

    skus = [_sku("A4 Nvidia B200 (1 gpu slice) running in Americas", "OnDemand", 16.11),
            _sku("Spot Preemptible A4 Nvidia B200 (1 gpu slice) running in Americas",
                 "OnDemand", 4.9542),
            _sku("Commitment v1: A4 Nvidia B200 (1 gpu slice) in Americas for 1 Year",
                 "Commit1Yr", 9.0)]
    components, _ = sku_components(skus, set())
    assert components[("us-central1", "on_demand", "slice", "a4")][0] == pytest.approx(16.11)
    assert components[("us-central1", "spot", "slice", "a4")][0] == pytest.approx(4.9542)
    assert len(components) == 4  # two markets in two regions; the commitment is left out
    types = pd.DataFrame([{"cloud": "gcp", "instance_type": "a4-highgpu-8g",
                           "gpu_model": "B200", "gpu_count": 8, "vcpus": 224,
                           "memory_gb": 3968.0}])
    zones = {"nvidia-b200": {"us-central1-b": 8, "europe-west4-b": 4}}
    rows, coverage = price_offerings(types, components, zones)
    priced = {(r.region, r.market): r.usd_per_hour for r in rows.itertuples()}
    assert priced == {("us-central1", "on_demand"): pytest.approx(8 * 16.11),
                      ("us-central1", "spot"): pytest.approx(8 * 4.9542)}
    # Europe's zones offer 4 B200s per VM at most: not the 8 this machine has.
    europe = coverage[coverage["region"] == "europe-west4"]
    assert set(europe["status"]) == {"no zone offers it"}
    assert machine_parts({"instance_type": "a4-highgpu-8g", "gpu_model": "B200"}) == (
        "a4", "nvidia-b200")


def test_flex_start_skus_price_a_market_of_their_own() -> None:
    """A3's Dynamic Workload Scheduler SKUs ("... (DWS Defined Duration)") price flex-start
    VMs, beside on-demand (calendar-mode SKUs are not flex-start)."""
    from price_collectors.gcp import price_offerings, sku_components

    def ram(description: str, dollars: float) -> dict:  # billed per GiB-hour
        sku = _sku(description, "OnDemand", dollars)
        sku["pricingInfo"][0]["pricingExpression"]["usageUnit"] = "GiBy.h"
        return sku

    skus = [_sku("A3 Instance Core running in Americas", "OnDemand", 0.03),
            ram("A3 Instance Ram running in Americas", 0.003),
            _sku("Nvidia H100 80GB GPU running in Americas", "OnDemand", 10.0),
            _sku("A3 Instance Core running in Americas (DWS Defined Duration)", "OnDemand",
                 0.015),
            ram("A3 Instance Ram running in Americas (DWS Defined Duration)", 0.0015),
            _sku("Nvidia H100 80GB GPU running in Americas (DWS Defined Duration)",
                 "OnDemand", 5.0),
            _sku("Nvidia H100 80GB GPU running in Americas (DWS Calendar Mode)", "OnDemand",
                 4.0)]
    components, _ = sku_components(skus, {"us-central1"})
    assert components[("us-central1", "flex_start", "gpu", "H100")][0] == pytest.approx(5.0)
    assert components[("us-central1", "on_demand", "gpu", "H100")][0] == pytest.approx(10.0)
    types = pd.DataFrame([{"cloud": "gcp", "instance_type": "a3-highgpu-8g",
                           "gpu_model": "H100", "gpu_count": 8, "vcpus": 208,
                           "memory_gb": 1872.0}])
    rows, _ = price_offerings(types, components, {"nvidia-h100-80gb": {"us-central1-a": 8}})
    priced = {r.market: r.usd_per_hour for r in rows.itertuples()}
    assert priced["flex_start"] == pytest.approx(208 * 0.015 + 1872 * 0.0015 + 8 * 5.0)
    assert priced["on_demand"] == pytest.approx(208 * 0.03 + 1872 * 0.003 + 8 * 10.0)
    assert "spot" not in priced  # no spot SKU given

"""The AWS collector: recorded bodies through botocore's Stubber, Price List items in AWS's
shape, botocore's adaptive retries against injected throttling and 5xx, failing regions,
watermarks, atomic batches, and moto's EC2."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import boto3
import pandas as pd
import pytest
from botocore.stub import Stubber
from dateutil.tz import tzutc

from costsched.store import OBSERVATION_COLUMNS, PriceStore
from price_collectors import recorded, runner
from price_collectors.aws import SPOT_PRODUCTS, AwsCollector
from price_collectors.base import CollectorUnavailable
from tests.price_collectors.aws_fake import FakeAws, always_failing, flaky

NOW = datetime(2020, 3, 24, tzinfo=timezone.utc)
START = NOW - timedelta(days=90)  # all the history EC2 keeps
KEY = [c for c in OBSERVATION_COLUMNS if c != "source"]


def canonical(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows sorted on every column but `source`, with plain dtypes, for exact comparison."""
    out = frame[KEY].copy()
    out["effective_at"] = pd.to_datetime(out["effective_at"], utc=True)
    out = out.astype({"gpu_count": int, "vcpus": int, "memory_gb": float, "usd_per_hour": float,
                      **{c: object for c in ["cloud", "region", "zone", "instance_type", "market",
                                             "os", "gpu_model"]}})
    return out.sort_values(KEY, kind="mergesort").reset_index(drop=True)


def as_boto_returns(item: dict) -> dict:
    """A recorded item as boto3 hands it over: Timestamp parsed to an aware datetime."""
    parsed = pd.Timestamp(item["Timestamp"]).to_pydatetime().replace(tzinfo=tzutc())
    return {**item, "Timestamp": parsed}


class StubbedClients:
    """Per-region EC2 and Price List clients with botocore Stubbers holding the pages."""

    def __init__(self) -> None:
        self.session = boto3.session.Session(aws_access_key_id="testing",
                                             aws_secret_access_key="testing",
                                             region_name="us-east-1")
        self.stubs: dict[tuple[str, str], tuple[object, Stubber]] = {}

    def _client(self, service: str, region: str):
        if (service, region) not in self.stubs:
            client = self.session.client(
                service, region_name=region if service == "ec2" else "us-east-1")
            stub = Stubber(client)
            stub.activate()
            self.stubs[service, region] = (client, stub)
        return self.stubs[service, region]

    def ec2(self, region: str):
        return self._client("ec2", region)[0]

    def pricing(self, region: str):
        return self._client("pricing", region)[0]

    def add_spot_pages(self, region: str, items: list[dict], types: list[str],
                       start: datetime, page_size: int = 1000) -> int:
        _, stub = self._client("ec2", region)
        pages = [items[i:i + page_size] for i in range(0, len(items), page_size)] or [[]]
        for n, page in enumerate(pages):
            params = {"InstanceTypes": types, "ProductDescriptions": list(SPOT_PRODUCTS),
                      "StartTime": start, "MaxResults": page_size}
            if n:
                params["NextToken"] = f"token-{n}"
            token = f"token-{n + 1}" if n + 1 < len(pages) else ""
            stub.add_response("describe_spot_price_history",
                              {"SpotPriceHistory": [as_boto_returns(i) for i in page],
                               "NextToken": token}, params)
        return len(pages)

    def add_price_list(self, region: str, products: list[dict]) -> None:
        _, stub = self._client("pricing", region)
        stub.add_response("get_products", {"FormatVersion": "aws_v1",
                                           "PriceList": [json.dumps(p) for p in products]})

    def assert_all_used(self) -> None:
        for _, stub in self.stubs.values():
            stub.assert_no_pending_responses()


def collector_for(clients, regions, **kw) -> AwsCollector:
    return AwsCollector(regions=regions, clients=clients, now=NOW, **kw)


def test_recorded_bodies_through_stubber_equal_import(
    dispa: Path, recorded_spot: dict[str, list[dict]], store: PriceStore, tmp_path: Path
) -> None:
    clients = StubbedClients()
    collector = collector_for(clients, sorted(recorded_spot))
    types = sorted(collector.instance_types()["instance_type"])
    pages = 0
    for region, items in recorded_spot.items():
        pages += clients.add_spot_pages(region, items, types, START)
        clients.add_price_list(region, [])
    assert pages > len(recorded_spot)  # several regions really are split into pages

    collection = collector.collect(since=START)

    clients.assert_all_used()
    assert collection.failed == {} and collection.rejected == []
    imported = recorded.read_paths([dispa / "aws" / "cost"]).observations()
    collected = collection.observations
    assert len(collected) == len(imported) == sum(len(v) for v in recorded_spot.values())
    pd.testing.assert_frame_equal(canonical(collected), canonical(imported))
    assert set(collected["source"]) == {"collect:aws:spot-price-history"}

    # ... and so are the stores: `collect` and `prices import` leave the same rows.
    clients = StubbedClients()
    for region, items in recorded_spot.items():
        clients.add_spot_pages(region, items, types, START)
        clients.add_price_list(region, [])
    summary = runner.run([collector_for(clients, sorted(recorded_spot))], store, since=START)
    other = PriceStore(str(tmp_path / "imported.sqlite"))
    other.ingest(imported)
    assert summary.inserted == other.count() > 15_000
    pd.testing.assert_frame_equal(canonical(store.observations()),
                                  canonical(other.observations()))


def test_price_list_entries_as_aws_returns_them(price_list: dict[str, list[dict]]) -> None:
    clients = StubbedClients()
    for region in ("us-east-1", "us-east-2"):
        clients.add_price_list(region, price_list[region])
        clients.add_spot_pages(region, [], sorted(collector_for(None, [])._specs), START)
    collection = collector_for(clients, ["us-east-1", "us-east-2"]).collect(since=START)
    clients.assert_all_used()
    od = collection.observations.set_index(["region", "instance_type"])
    assert sorted(od.index) == [("us-east-1", "g4dn.xlarge"), ("us-east-1", "p2.xlarge"),
                                ("us-east-1", "p3.2xlarge"), ("us-east-1", "p3.8xlarge"),
                                ("us-east-2", "p2.xlarge"), ("us-east-2", "p3.2xlarge")]
    row = od.loc[("us-east-1", "p3.2xlarge")]
    assert (row["market"], row["zone"], row["os"], row["usd_per_hour"]) == (
        "on_demand", "", "linux", 3.06)
    assert (row["gpu_model"], row["gpu_count"], row["vcpus"]) == ("V100", 1, 8)
    assert row["effective_at"] == pd.Timestamp("2025-11-01T00:00:00Z")  # the term's date
    assert od.loc[("us-east-1", "g4dn.xlarge"), "usd_per_hour"] == 0.526
    # The Windows product and the type the catalog does not know are left out, and said so.
    assert collection.ignored == {"price list: type not in catalog": 1,
                                  "price list: not plain Linux, shared tenancy, in this region": 1}


def test_get_products_request_pins_linux_shared_no_software(price_list) -> None:
    fake = FakeAws(products={"us-east-1": price_list["us-east-1"]}, spot={"us-east-1": []})
    AwsCollector(regions=["us-east-1"], clients=fake.clients(), now=NOW).collect(since=START)
    request = next(r for r in fake.requests if r["operation"] == "GetProducts")
    assert request["ServiceCode"] == "AmazonEC2" and request["FormatVersion"] == "aws_v1"
    terms = {(f["Type"], f["Field"], f["Value"]) for f in request["Filters"]}
    assert terms == {("TERM_MATCH", "operatingSystem", "Linux"),
                     ("TERM_MATCH", "tenancy", "Shared"),
                     ("TERM_MATCH", "preInstalledSw", "NA"),
                     ("TERM_MATCH", "capacitystatus", "Used"),
                     ("TERM_MATCH", "instanceFamily", "GPU instance"),
                     ("TERM_MATCH", "regionCode", "us-east-1")}
    spot = next(r for r in fake.requests if r["operation"] == "DescribeSpotPriceHistory")
    assert spot["ProductDescription.1"] == "Linux/UNIX" and spot["MaxResults"] == "1000"
    assert spot["StartTime"].startswith("2019-12-25T00:00:00")


def small_fake(recorded_spot, price_list, **kw) -> FakeAws:
    """Three regions of recorded spot history and two of price list items."""
    regions = ["eu-west-1", "us-east-1", "us-east-2"]
    return FakeAws(spot={r: recorded_spot[r] for r in regions},
                   products={r: price_list.get(r, []) for r in regions}, **kw)


def test_throttling_and_5xx_are_retried_by_botocore_and_nothing_is_lost(
    recorded_spot, price_list, tmp_path: Path
) -> None:
    clean = small_fake(recorded_spot, price_list)
    expected = AwsCollector(clients=clean.clients(), now=NOW).collect(since=START)
    assert expected.failed == {} and len(expected.observations) > 5_000

    faulty = small_fake(recorded_spot, price_list, fault=flaky(0.3, seed=5))
    got = AwsCollector(clients=faulty.clients(), now=NOW).collect(since=START)

    injected = sum(faulty.faults.values())
    assert injected == 7  # of 17 calls: which ones depends on the seed, not on timing
    assert {k[1] for k in faulty.faults} == {"DescribeRegions", "DescribeSpotPriceHistory",
                                             "GetProducts"}
    # Every injected fault cost exactly one extra call: botocore retried it.
    assert sum(faulty.calls.values()) == sum(clean.calls.values()) + injected
    assert got.failed == {}
    pd.testing.assert_frame_equal(canonical(got.observations), canonical(expected.observations))


def test_a_region_that_keeps_failing_is_reported_and_the_others_stored(
    recorded_spot, price_list, store: PriceStore
) -> None:
    fake = small_fake(recorded_spot, price_list, fault=always_failing("us-east-2"))
    summary = runner.run([AwsCollector(clients=fake.clients(), now=NOW)], store, since=START)
    aws = summary.clouds["aws"]
    assert list(aws.failed) == ["us-east-2"]
    assert "Unavailable" in aws.failed["us-east-2"] and "retries" in aws.failed["us-east-2"]
    assert fake.calls["ec2", "DescribeSpotPriceHistory", "us-east-2"] == 10  # total_max_attempts
    assert not summary.ok
    stored = store.history()
    assert set(stored["region"]) == {"eu-west-1", "us-east-1"}
    assert summary.inserted == len(stored) > 0


def test_collecting_twice_stores_nothing_new_and_starts_at_the_watermark(
    recorded_spot, price_list, store: PriceStore
) -> None:
    fake = small_fake(recorded_spot, price_list)
    first = runner.run([AwsCollector(clients=fake.clients(), now=NOW)], store, since=START)
    assert first.inserted > 5_000 and first.ok
    newest = store.history(cloud=["aws"], market=["spot"]).groupby("region")["effective_at"].max()

    fake.requests.clear()
    second = runner.run([AwsCollector(clients=fake.clients(), now=NOW)], store)

    assert second.inserted == 0 and second.unchanged > 0 and second.ok
    starts = {r["region"]: pd.Timestamp(r["StartTime"]) for r in fake.requests
              if r["operation"] == "DescribeSpotPriceHistory" and "NextToken" not in r}
    assert starts == {region: ts for region, ts in newest.items()}


def test_first_collection_without_watermark_looks_back_seven_days(recorded_spot, store) -> None:
    fake = FakeAws(spot={"us-east-1": []})
    runner.run([AwsCollector(clients=fake.clients(), now=NOW)], store)
    request = next(r for r in fake.requests if r["operation"] == "DescribeSpotPriceHistory")
    assert pd.Timestamp(request["StartTime"]) == pd.Timestamp(NOW - timedelta(days=7))


def test_a_watermark_older_than_ec2_history_asks_for_all_of_it(store) -> None:
    fake = FakeAws(spot={"us-east-1": []})
    AwsCollector(clients=fake.clients(), now=NOW).collect(since=datetime(2019, 1, 1,
                                                                          tzinfo=timezone.utc))
    request = next(r for r in fake.requests if r["operation"] == "DescribeSpotPriceHistory")
    assert pd.Timestamp(request["StartTime"]) == pd.Timestamp(START)


def test_a_crash_mid_collection_leaves_no_partial_batch(
    recorded_spot, price_list, store: PriceStore
) -> None:
    fake = small_fake(recorded_spot, price_list)

    def crash(service, operation, region, attempt_key):
        if region == "us-east-2":
            raise KeyboardInterrupt  # the user hits Ctrl-C while us-east-2 is being read
        return None

    fake.fault = crash
    with pytest.raises(KeyboardInterrupt):
        runner.run([AwsCollector(clients=fake.clients(), now=NOW)], store, since=START)
    assert store.count() == 0


def test_a_crash_while_storing_rolls_the_whole_batch_back(
    recorded_spot, price_list, store: PriceStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = small_fake(recorded_spot, price_list)
    real_insert = PriceStore._insert_prices

    def insert_then_die(self, conn, rows):
        real_insert(self, conn, rows)  # the rows are written inside the transaction...
        raise OSError("disk full")  # ...and then the process fails

    monkeypatch.setattr(PriceStore, "_insert_prices", insert_then_die)
    with pytest.raises(OSError):
        runner.run([AwsCollector(clients=fake.clients(), now=NOW)], store, since=START)
    assert store.count() == 0 and store.offerings().empty


def test_regions_come_from_describe_regions(recorded_spot) -> None:
    fake = FakeAws(spot={"us-west-2": []}, regions=["ap-south-1", "us-west-2"])
    collection = AwsCollector(clients=fake.clients(), now=NOW).collect()
    assert collection.units == ["ap-south-1", "us-west-2"]
    assert fake.calls["ec2", "DescribeRegions", "us-east-1"] == 1


def test_endpoints_follow_boto3_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    from price_collectors.aws import AwsClients

    monkeypatch.setenv("AWS_ENDPOINT_URL_EC2", "http://127.0.0.1:9/ec2")
    monkeypatch.setenv("AWS_ENDPOINT_URL_PRICING", "http://127.0.0.1:9/pricing")
    clients = AwsClients()
    assert clients.ec2("eu-west-1").meta.endpoint_url == "http://127.0.0.1:9/ec2"
    assert clients.pricing("eu-west-1").meta.endpoint_url == "http://127.0.0.1:9/pricing"
    retries = clients.ec2("eu-west-1").meta.config.retries
    assert retries["mode"] == "adaptive" and retries["total_max_attempts"] == 10


def test_missing_credentials_is_a_one_line_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    with pytest.raises(CollectorUnavailable, match="no AWS credentials found: run `aws config"):
        AwsCollector().plan()


def test_malformed_items_are_rejected_not_fatal(recorded_spot) -> None:
    items = recorded_spot["us-east-1"][:3]
    bad = [{**items[0], "SpotPrice": "free"}, {**items[1], "AvailabilityZone": "mars-1"}]
    fake = FakeAws(spot={"us-east-1": items + bad})
    collection = AwsCollector(clients=fake.clients(), now=NOW).collect(since=START)
    assert len(collection.observations) == 3
    reasons = sorted(r.reason for r in collection.rejected)
    assert reasons[0].startswith("AvailabilityZone 'mars-1'")
    assert reasons[1].startswith("SpotPrice 'free'")


def test_moto_ec2_placeholder_prices_are_rejected_not_stored(store: PriceStore) -> None:
    """moto answers DescribeRegions and DescribeSpotPriceHistory (for every type, at
    $0.00001): the collector talks to it through the real SDK, and validation refuses
    the implausible prices with a logged, counted reason."""
    from moto import mock_aws

    from price_collectors.aws import AwsClients

    with mock_aws():
        class MotoClients(AwsClients):
            def pricing(self, region):  # moto has no Price List API
                client = super().pricing(region)
                stub = Stubber(client)
                stub.add_response("get_products", {"FormatVersion": "aws_v1", "PriceList": []})
                stub.activate()
                return client

        collector = AwsCollector(regions=["us-east-1"], gpus=["V100"], clients=MotoClients())
        summary = runner.run([collector], store)
    aws = summary.clouds["aws"]
    assert aws.failed == {} and aws.error is None
    assert aws.rejected > 0 and aws.collected == 0 and store.count() == 0
    assert set(aws.rejected_by_reason) == {"below floor"}
    assert "us-east-1" in aws.rejections[0] and "1e-05" in aws.rejections[0]


def test_regions_that_cannot_be_listed_stop_only_aws(store: PriceStore) -> None:
    fake = FakeAws(spot={"us-east-1": []},
                   fault=lambda s, op, r, k: (403, "UnauthorizedOperation")
                   if op == "DescribeRegions" else None)
    summary = runner.run([AwsCollector(clients=fake.clients(), now=NOW)], store)
    assert summary.clouds["aws"].error == (
        "aws: cannot list regions: UnauthorizedOperation: injected UnauthorizedOperation")
    assert fake.calls["ec2", "DescribeRegions", "us-east-1"] == 1  # not retried: not transient

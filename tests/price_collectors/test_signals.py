"""Risk signal collectors (Spot Instance Advisor, spot placement scores, Azure eviction
rates) fed documented response shapes: a loopback server, botocore's Stubber, a fake
transport asserting the exact request; and their file imports."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import boto3
import pytest
from botocore.stub import Stubber

from costsched.model import InvalidInput
from costsched.store import PriceStore
from price_collectors import azure_eviction, placement_scores, runner, spot_advisor
from price_collectors.base import CollectorUnavailable
from tests.price_collectors.conftest import Loopback

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "signals"
AT = datetime(2026, 11, 20, 12, tzinfo=timezone.utc)


def _serve(document: dict):  # noqa: ANN202
    body = json.dumps(document).encode()
    return lambda request: (200, {"Content-Type": "application/json"}, body)


def test_spot_advisor_from_a_loopback_server_stores_changes_only(store: PriceStore) -> None:
    document = json.loads((FIXTURES / "spot-advisor-data.json").read_text())
    with Loopback() as server:
        server.handler = _serve(document)
        collector = spot_advisor.SpotAdvisorCollector(url=server.url + "/advisor.json")
        frame = collector.collect(AT)
        assert server.paths == ["/advisor.json"]
        # GPU instance types only (m5.large is not one), Linux and Windows apart.
        got = {(r.region, r.instance_type, r.os): (r.value, r.label)
               for r in frame.itertuples()}
        assert got == {("us-east-1", "p3.2xlarge", "linux"): (4.0, ">20%"),
                       ("us-east-1", "g4dn.xlarge", "linux"): (1.0, "5-10%"),
                       ("us-east-1", "p3.2xlarge", "windows"): (3.0, "15-20%"),
                       ("us-west-2", "p3.2xlarge", "linux"): (0.0, "<5%"),
                       ("us-west-2", "g4dn.xlarge", "linux"): (2.0, "10-15%")}
        assert set(frame["observed_at"]) == {AT} and set(frame["kind"]) == {"advisor"}

        assert runner.run_signals([collector], store, AT) == {"aws:spot-advisor": 5}
        # An hour later nothing changed: nothing stored.
        assert runner.run_signals([collector], store, AT + timedelta(hours=1)) == {
            "aws:spot-advisor": 0}
        # One bucket moves: that observation is added, the old one kept.
        document["spot_advisor"]["us-west-2"]["Linux"]["p3.2xlarge"]["r"] = 3
        server.handler = _serve(document)
        later = AT + timedelta(hours=2)
        assert runner.run_signals([collector], store, later) == {"aws:spot-advisor": 1}
        # A day on, unchanged signals are stored again (fresh for `latest`).
        assert runner.run_signals([collector], store, AT + timedelta(days=1, hours=3)) == {
            "aws:spot-advisor": 5}
    history = store.signals.history()
    west = history[(history["region"] == "us-west-2")
                   & (history["instance_type"] == "p3.2xlarge")]
    assert west["value"].tolist() == [0.0, 3.0, 3.0]
    latest = store.signals.latest(later)
    assert latest.loc[(latest["region"] == "us-west-2")
                      & (latest["instance_type"] == "p3.2xlarge"), "label"].tolist() == ["15-20%"]


def test_spot_advisor_unreachable_or_malformed_is_one_line() -> None:
    with Loopback() as server:
        server.handler = lambda request: (503, {}, b"down")
        collector = spot_advisor.SpotAdvisorCollector(url=server.url + "/a.json")
        with pytest.raises(CollectorUnavailable, match=r"^aws: spot advisor http://.*503"):
            collector.collect(AT)
    with pytest.raises(InvalidInput) as excinfo:
        spot_advisor.parse({"spot_advisor": {"us-east-1": {"Linux": {"p3.2xlarge": {"r": 9}}}}},
                           AT, "test")
    assert str(excinfo.value) == ("document: field spot_advisor.us-east-1.Linux.p3.2xlarge.r 9: "
                                  "expected a range index 0-4")


def _ec2():  # noqa: ANN202
    return boto3.client("ec2", region_name="us-east-1")


def test_placement_scores_through_the_stubber_follow_next_token() -> None:
    client = _ec2()
    with Stubber(client) as stub:
        stub.add_response("get_spot_placement_scores",
                          {"SpotPlacementScores": [{"Region": "us-east-1", "Score": 3}],
                           "NextToken": "page2"},
                          {"InstanceTypes": ["p3.2xlarge"], "TargetCapacity": 2,
                           "SingleAvailabilityZone": False,
                           "RegionNames": ["us-east-1", "us-west-2"]})
        stub.add_response("get_spot_placement_scores",
                          {"SpotPlacementScores": [{"Region": "us-west-2", "Score": 9}]},
                          {"InstanceTypes": ["p3.2xlarge"], "TargetCapacity": 2,
                           "SingleAvailabilityZone": False,
                           "RegionNames": ["us-east-1", "us-west-2"], "NextToken": "page2"})
        collector = placement_scores.PlacementScoreCollector(
            ["us-east-1", "us-west-2"], types=["p3.2xlarge"], capacity=2, client=client)
        frame = collector.collect(AT)
        stub.assert_no_pending_responses()
    assert frame[["region", "zone", "instance_type", "kind", "value", "label"]].values.tolist() \
        == [["us-east-1", "", "p3.2xlarge", "placement", 3.0, "3/10"],
            ["us-west-2", "", "p3.2xlarge", "placement", 9.0, "9/10"]]


def test_placement_scores_denied_is_a_one_line_error(store: PriceStore) -> None:
    client = _ec2()
    with Stubber(client) as stub:
        stub.add_client_error("get_spot_placement_scores", "UnauthorizedOperation",
                              "You are not authorized to perform this operation.")
        collector = placement_scores.PlacementScoreCollector(types=["p3.2xlarge"],
                                                             client=client)
        out = runner.run_signals([collector], store, AT)
    assert out["aws:placement-scores"].startswith("aws: spot placement scores: ClientError")
    assert "\n" not in out["aws:placement-scores"] and store.signals.count() == 0


class FakeGraph:
    """Resource Graph behind a transport: asserts each request, answers in two pages."""

    def __init__(self, rows: list[dict]) -> None:
        self.rows = rows
        self.requests: list[tuple[str, dict, dict]] = []

    def __call__(self, url: str, headers: dict[str, str], body: dict) -> dict:
        self.requests.append((url, headers, body))
        if "options" not in body:
            return {"data": self.rows[:2], "$skipToken": "next"}
        return {"data": self.rows[2:]}


def test_azure_eviction_rates_through_a_fake_transport(store: PriceStore) -> None:
    rows = json.loads((FIXTURES / "resource-graph-eviction.json").read_text())["data"]
    graph = FakeGraph(rows)
    collector = azure_eviction.AzureEvictionCollector(transport=graph,
                                                      token=lambda: "secret-token")
    frame = collector.collect(AT)
    query = ("SpotResources | where type =~ 'microsoft.compute/skuspotevictionrate/location'"
             " | project skuName = tostring(properties.skuName), location = "
             "tostring(properties.location), evictionRate = tostring(properties.evictionRate)")
    url = ("https://management.azure.com/providers/Microsoft.ResourceGraph/resources"
           "?api-version=2021-03-01")
    headers = {"Authorization": "Bearer secret-token", "Content-Type": "application/json"}
    assert graph.requests == [
        (url, headers, {"query": query}),
        (url, headers, {"query": query, "options": {"$skipToken": "next"}})]
    # GPU sizes only, named as the prices name them.
    assert frame[["region", "instance_type", "value", "label"]].values.tolist() == [
        ["eastus", "Standard_NC6s_v3", 3.0, "15-20"],
        ["westus2", "Standard_NC6s_v3", 0.0, "0-5"],
        ["eastus", "Standard_NC4as_T4_v3", 4.0, "20+"]]
    assert runner.run_signals([collector], store, AT) == {"azure:eviction-rates": 3}


def test_azure_eviction_without_a_token_names_what_to_set(
        monkeypatch: pytest.MonkeyPatch, store: PriceStore) -> None:
    monkeypatch.delenv(azure_eviction.ENV_TOKEN, raising=False)
    monkeypatch.setitem(__import__("sys").modules, "azure.identity", None)
    out = runner.run_signals([azure_eviction.AzureEvictionCollector()], store, AT)
    assert out == {"azure:eviction-rates": "azure: no access token for Resource Graph: set "
                   "AZURE_ACCESS_TOKEN or install azure-identity"}


def test_azure_bad_bucket_is_one_line() -> None:
    with pytest.raises(InvalidInput) as excinfo:
        azure_eviction.parse([{"properties": {"skuName": "Standard_NC6s_v3",
                                              "location": "eastus", "evictionRate": "high"}}],
                             AT, "test")
    assert str(excinfo.value) == ("data[0] Standard_NC6s_v3: evictionRate 'high': expected one "
                                  "of 0-5, 5-10, 10-15, 15-20, 20+ with a location")


def test_signal_collectors_are_registered_per_cloud() -> None:
    made = runner.make_signal_collectors({"aws": ["us-east-1"], "gcp": [], "azure": []})
    assert [(c.cloud, c.name) for c in made] == [
        ("aws", "spot-advisor"), ("aws", "placement-scores"), ("azure", "eviction-rates")]
    assert made[0].regions == ["us-east-1"]

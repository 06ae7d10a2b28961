"""The quota readers: AWS's against botocore's Stubber fed the documented Service Quotas
bodies (applied values, then the defaults of those not applied) with the use counted from
moto's EC2; GCP's against Compute Engine's REST API on loopback. A missing permission is
one line naming it, stored as the cloud's reading."""

from __future__ import annotations

from datetime import datetime, timezone

import boto3
import pytest
from moto import mock_aws

from costsched.store import PriceStore
from price_collectors.quota_reading import QuotasUnreadable
from price_collectors.quotas import read_quotas
from price_collectors.quotas_aws import AwsQuotaClients, AwsQuotaReader
from price_collectors.quotas_gcp import GcpQuotaReader
from tests.price_collectors.quota_fakes import GcpQuotaApis, StubbedSession, documented, gcp_clients

AT = datetime(2026, 12, 1, 12, tzinfo=timezone.utc)
REGIONS = ["us-east-1", "us-west-2"]


def read_aws(session: StubbedSession) -> dict:
    reading = AwsQuotaReader(AwsQuotaClients(session)).read(REGIONS)
    for stub in session.stubs.values():
        stub.assert_no_pending_responses()  # every documented page was asked for
    return reading


def test_aws_limits_applied_else_default_and_use_from_running_instances() -> None:
    with mock_aws():
        west = boto3.client("ec2", region_name="us-west-2")
        west.run_instances(ImageId="ami-12c6146b", MinCount=1, MaxCount=1,
                           InstanceType="p3.2xlarge",
                           InstanceMarketOptions={"MarketType": "spot"})
        east = boto3.client("ec2", region_name="us-east-1")
        east.run_instances(ImageId="ami-12c6146b", MinCount=2, MaxCount=2,
                           InstanceType="g5.xlarge")
        stopped = east.run_instances(ImageId="ami-12c6146b", MinCount=1, MaxCount=1,
                                     InstanceType="p3.2xlarge")["Instances"][0]["InstanceId"]
        east.terminate_instances(InstanceIds=[stopped])  # not counted
        reading = read_aws(StubbedSession({r: documented(r) for r in REGIONS}))
    rows = {(r.scope, r.code): r for r in reading.rows.itertuples()}
    assert len(rows) == 2 * 12 and reading.error == ""
    p_spot_east, p_spot_west = rows[("us-east-1", "L-7212CCBC")], rows[("us-west-2",
                                                                         "L-7212CCBC")]
    assert (p_spot_east.limit, p_spot_east.used) == (0.0, 0.0)  # the default: not applied
    assert (p_spot_west.limit, p_spot_west.used) == (96.0, 8.0)  # applied; one p3.2xlarge
    assert p_spot_west.name == "All P Spot Instance Requests"
    g_east = rows[("us-east-1", "L-DB2E81BA")]
    assert (g_east.name, g_east.limit, g_east.used) == ("Running On-Demand G and VT instances",
                                                       0.0, 8.0)  # 2 x 4 vCPUs
    assert rows[("us-east-1", "L-417A185B")].used == 0.0  # the terminated one is not counted
    assert set(reading.rows["unit"]) == {"vCPUs"}


def test_aws_without_the_permission_is_one_line_naming_it(store: PriceStore) -> None:
    session = StubbedSession({}, denied="AccessDeniedException")
    with pytest.raises(QuotasUnreadable) as caught:
        AwsQuotaReader(AwsQuotaClients(session)).read(["us-east-1"])
    assert str(caught.value).startswith("aws: servicequotas:ListServiceQuotas is not allowed "
                                        "(AccessDeniedException)")
    assert "\n" not in str(caught.value)
    again = StubbedSession({}, denied="AccessDeniedException")
    read = read_quotas(store, {"aws": ["us-east-1"]},
                       readers={"aws": AwsQuotaReader(AwsQuotaClients(again))}, at=AT)
    assert read["aws"].read == 0 and "servicequotas:ListServiceQuotas" in read["aws"].error
    [stored] = store.quotas.reads().to_dict("records")
    assert stored["cloud"] == "aws" and stored["error"] == read["aws"].error
    assert "servicequotas:ListAWSDefaultServiceQuotas" in stored["fix"]


def test_aws_without_describe_instances_keeps_the_limits_and_says_so() -> None:
    with mock_aws():
        reading = AwsQuotaReader(AwsQuotaClients(StubbedSession(
            {"us-east-1": documented("us-east-1")}, ec2_denied="UnauthorizedOperation"))
        ).read(["us-east-1"])
    assert len(reading.rows) == 12 and reading.rows["used"].isna().all()
    assert reading.error.startswith("aws: ec2:DescribeInstances is not allowed")


PROJECT = "demo-project"


@pytest.fixture()
def gcp_apis(loopback) -> GcpQuotaApis:  # noqa: ANN001 - the loopback server
    apis = GcpQuotaApis(PROJECT, {
        "us-central1": {"CPUS": (24, 8), "NVIDIA_V100_GPUS": (0, 0),
                        "PREEMPTIBLE_NVIDIA_V100_GPUS": (8, 1), "NVIDIA_T4_GPUS": (4, 0),
                        "A2_CPUS": (0, 0), "COMMITTED_CPUS": (0, 0),
                        "INSTANCES": (6000, 3), "STATIC_ADDRESSES": (8, 0)},
        "europe-west4": {"NVIDIA_V100_GPUS": (1, 0)}},
        {"GPUS_ALL_REGIONS": (4, 1), "CPUS_ALL_REGIONS": (32, 8), "FIREWALLS": (200, 3)})
    loopback.handler = apis
    return apis


def gcp_reader(loopback) -> GcpQuotaReader:  # noqa: ANN001
    regions, projects = gcp_clients(loopback.url)
    return GcpQuotaReader(project=PROJECT, regions_client=regions, projects_client=projects)


def test_gcp_region_and_project_quotas(gcp_apis: GcpQuotaApis, loopback) -> None:  # noqa: ANN001
    reading = gcp_reader(loopback).read(["us-central1"])
    got = {(r.scope, r.code): (r.unit, r.limit, r.used) for r in reading.rows.itertuples()}
    assert got == {
        ("us-central1", "CPUS"): ("vCPUs", 24.0, 8.0),
        ("us-central1", "NVIDIA_V100_GPUS"): ("GPUs", 0.0, 0.0),
        ("us-central1", "PREEMPTIBLE_NVIDIA_V100_GPUS"): ("GPUs", 8.0, 1.0),
        ("us-central1", "NVIDIA_T4_GPUS"): ("GPUs", 4.0, 0.0),
        ("us-central1", "A2_CPUS"): ("vCPUs", 0.0, 0.0),
        ("global", "GPUS_ALL_REGIONS"): ("GPUs", 4.0, 1.0)}
    assert reading.account == PROJECT and reading.error == ""
    assert any(p.startswith(f"/compute/v1/projects/{PROJECT}/regions") for p in gcp_apis.paths)


def test_gcp_without_the_permission_is_one_line_naming_it(gcp_apis: GcpQuotaApis,
                                                          loopback) -> None:  # noqa: ANN001
    gcp_apis.forbidden.add(f"/compute/v1/projects/{PROJECT}")
    reading = gcp_reader(loopback).read([])
    assert {r.scope for r in reading.rows.itertuples()} == {"us-central1", "europe-west4"}
    assert reading.error.startswith(f"gcp: compute.projects.get is not allowed in project "
                                    f"{PROJECT} (403)")
    assert reading.fix.endswith("--role=roles/compute.viewer")
    gcp_apis.forbidden.add(f"/compute/v1/projects/{PROJECT}/regions")
    with pytest.raises(QuotasUnreadable) as caught:
        gcp_reader(loopback).read([])
    assert str(caught.value).startswith("gcp: compute.regions.list is not allowed")


def test_a_reading_replaces_the_last_and_keeps_a_refusal(store: PriceStore, gcp_apis,
                                                         loopback) -> None:  # noqa: ANN001
    read_quotas(store, {"gcp": ["us-central1"]}, readers={"gcp": gcp_reader(loopback)},
                at=AT)
    store.quotas.refused("gcp", "us-central1", "PREEMPTIBLE_NVIDIA_V100_GPUS", unit="GPUs",
                         asked=8, at=AT, detail="QUOTA_EXCEEDED")
    gcp_apis.regions["us-central1"]["PREEMPTIBLE_NVIDIA_V100_GPUS"] = (16, 1)
    later = AT.replace(hour=13)
    read = read_quotas(store, {"gcp": ["us-central1"]}, readers={"gcp": gcp_reader(loopback)},
                       at=later)
    assert read["gcp"].read == 6 and read["gcp"].error == ""
    rows = store.quotas.current().set_index("code")
    row = rows.loc["PREEMPTIBLE_NVIDIA_V100_GPUS"]
    assert (row["limit"], row["observed_at"]) == (16.0, later)
    assert row["refused"] == 8 and row["refused_at"] == AT  # kept, and older than the reading
    assert store.quotas.reads().iloc[0]["read_at"] == later


def _real_azure_clients():
    """quotas_azure's own way to its clients (the suite routes it away from any cloud)."""
    import importlib

    from price_collectors import quotas_azure

    return importlib.reload(quotas_azure)._default_clients


def test_azure_without_its_sdk_says_that_first(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from costsched.service.quotas import read_problem

    clients = _real_azure_clients()
    monkeypatch.setitem(sys.modules, "azure.mgmt.compute", None)  # not installed
    with pytest.raises(QuotasUnreadable) as refused:  # (no subscription is named either)
        clients()
    assert str(refused.value) == ("azure: azure-mgmt-compute is not installed: "
                                  "pip install 'costsched[azure]'")
    assert read_problem("azure", str(refused.value), refused.value.fix) == (
        "azure quotas not read: azure-mgmt-compute is not installed: "
        "pip install 'costsched[azure]'")


def test_azure_without_a_subscription_says_how_once() -> None:
    from costsched.service.quotas import read_problem

    with pytest.raises(QuotasUnreadable) as refused:  # the test's home names none
        _real_azure_clients()()
    line = read_problem("azure", str(refused.value), refused.value.fix)
    assert line.startswith("azure quotas not read: no subscription named: set "
                           "azure.subscription_id"), line
    assert line.count("az account set") == 1, line

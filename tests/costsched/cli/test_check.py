"""`costsched check` against botocore's Stubber (the exact AWS calls) and a fake Compute
Engine client; with no credentials anywhere; never printing a secret."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from costsched.service import check as checks
from tests.conftest import hermetic_aws_env

SECRET = "wJalrXUtnFEMI-not-a-real-secret"
ARN = "arn:aws:iam::123456789012:user/alice"


@pytest.fixture()
def aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    hermetic_aws_env(monkeypatch, tmp_path)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)


@pytest.fixture()
def no_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    hermetic_aws_env(monkeypatch, tmp_path)
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "GOOGLE_APPLICATION_CREDENTIALS",
                 "GOOGLE_CLOUD_PROJECT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "no-gcloud"))


def stubbed_aws(dry_run_code: str, identity: bool = True,
                quotas_code: str = "") -> tuple[Any, list[Stubber]]:
    """A client factory whose STS, EC2 and Service Quotas clients answer through Stubbers
    that expect exactly: GetCallerIdentity, then DescribeInstances(DryRun=True,
    MaxResults=5), then ListServiceQuotas(ServiceCode=ec2, MaxResults=1) (refused with
    `quotas_code` when given)."""
    session = boto3.Session()
    sts, ec2 = session.client("sts", region_name="us-east-1"), session.client(
        "ec2", region_name="us-east-1")
    quotas = session.client("service-quotas", region_name="us-east-1")
    sts_stub, ec2_stub, quotas_stub = Stubber(sts), Stubber(ec2), Stubber(quotas)
    if identity:
        sts_stub.add_response("get_caller_identity", {
            "UserId": "AIDAEXAMPLE", "Account": "123456789012", "Arn": ARN}, {})
        ec2_stub.add_client_error("describe_instances", service_error_code=dry_run_code,
                                  service_message="Request would have succeeded"
                                  if dry_run_code == "DryRunOperation" else "not allowed",
                                  http_status_code=412,
                                  expected_params={"DryRun": True, "MaxResults": 5})
        asked = {"ServiceCode": "ec2", "MaxResults": 1}
        if quotas_code:
            quotas_stub.add_client_error(
                "list_service_quotas", service_error_code=quotas_code, http_status_code=400,
                service_message=f"User: {ARN} is not authorized to perform: "
                                "servicequotas:ListServiceQuotas", expected_params=asked)
        else:
            quotas_stub.add_response("list_service_quotas", {"Quotas": []}, asked)
    else:
        sts_stub.add_client_error("get_caller_identity",
                                  service_error_code="InvalidClientTokenId",
                                  service_message="The security token is invalid",
                                  http_status_code=403)
    for stub in (sts_stub, ec2_stub, quotas_stub):
        stub.activate()
    clients = {"sts": sts, "ec2": ec2, "service-quotas": quotas}
    return (lambda service, region: clients[service]), [sts_stub, ec2_stub, quotas_stub]


def test_aws_with_credentials_that_may_launch(aws_env: None) -> None:
    client, stubs = stubbed_aws("DryRunOperation")
    result = checks.check_aws(client)
    for stub in stubs:
        stub.assert_no_pending_responses()  # both calls were made, with the exact params
    assert result.credentials == ["environment variable AWS_ACCESS_KEY_ID",
                                  "environment variable AWS_SECRET_ACCESS_KEY"]
    assert [(c.name, c.ok) for c in result.calls] == [
        ("sts GetCallerIdentity", True), ("ec2 DescribeInstances DryRun (us-east-1)", True),
        ("service-quotas ListServiceQuotas (us-east-1)", True)]
    assert ARN in result.calls[0].detail
    assert result.collect_prices and result.launch and result.checkpoints
    assert result.fixes == [] and result.quotas == ""
    assert SECRET not in json.dumps(result.as_dict())


def test_aws_without_ec2_permission_can_collect_but_not_launch(aws_env: None) -> None:
    client, stubs = stubbed_aws("UnauthorizedOperation")
    result = checks.check_aws(client)
    assert result.collect_prices and not result.launch
    assert result.calls[1].detail.startswith("UnauthorizedOperation")
    assert result.fixes == [f"# ask your AWS administrator to allow ec2:DescribeInstances, "
                            f"ec2:RunInstances and ec2:TerminateInstances for {ARN}"]


def test_aws_refused_credentials(aws_env: None) -> None:
    client, stubs = stubbed_aws("", identity=False)
    result = checks.check_aws(client)
    assert len(result.calls) == 1  # no EC2 call after STS refused
    assert not (result.collect_prices or result.launch or result.checkpoints)
    assert result.calls[0].detail.startswith("InvalidClientTokenId")
    assert result.fixes == ["aws configure  # the credentials found were refused"]


def test_aws_without_the_quotas_permission_says_which_in_one_line(aws_env: None) -> None:
    client, stubs = stubbed_aws("DryRunOperation", quotas_code="AccessDeniedException")
    result = checks.check_aws(client)
    for stub in stubs:
        stub.assert_no_pending_responses()
    assert result.launch and result.problem is None  # launching is not stopped by it
    assert result.quotas == ("servicequotas:ListServiceQuotas is not allowed: plans cannot "
                             "tell which offerings the account's quotas hold")
    [note] = [n for n in result.notes if n.startswith("quotas: ")]
    assert note.endswith(f"servicequotas:ListAWSDefaultServiceQuotas for {ARN}")
    assert "\n" not in note


class FakeRegions:
    """compute_v1.RegionsClient's get, asserting the request it is given."""

    def __init__(self, error: Exception | None = None) -> None:
        self.error, self.requests = error, []

    def __call__(self, credentials: Any) -> FakeRegions:
        assert credentials == "creds"
        return self

    def get(self, project: str, region: str, **bounds: Any) -> dict:
        self.requests.append((project, region, bounds))
        if self.error is not None:
            raise self.error
        return {"name": region, "quotas": []}


class FakeZones:
    """compute_v1.ZonesClient's list, asserting the request it is given."""

    def __init__(self, project: str, error: Exception | None = None) -> None:
        self.project, self.error, self.requests = project, error, []

    def __call__(self, credentials: Any) -> FakeZones:
        assert credentials == "creds"
        return self

    def list(self, project: str) -> list[dict]:
        self.requests.append(project)
        if self.error is not None:
            raise self.error
        return [{"name": "us-central1-a"}, {"name": "us-central1-b"}]


def test_gcp_lists_zones_with_the_default_credentials(monkeypatch: pytest.MonkeyPatch,
                                                      tmp_path: Path) -> None:
    key = tmp_path / "key.json"
    key.write_text('{"private_key": "' + SECRET + '"}')
    monkeypatch.setenv("GOOGLE_APPLICATION_CREDENTIALS", str(key))
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "no-gcloud"))
    monkeypatch.delenv("GOOGLE_CLOUD_PROJECT", raising=False)
    zones, regions = FakeZones("my-project"), FakeRegions()
    result = checks.check_gcp(lambda: ("creds", "my-project"), zones, regions_client=regions)
    assert zones.requests == ["my-project"]
    assert regions.requests == [("my-project", "us-central1",
                                 {"timeout": result_seconds(), "retry": None})]
    assert result.credentials == ["environment variable GOOGLE_APPLICATION_CREDENTIALS"]
    assert [(c.name, c.ok, c.detail) for c in result.calls] == [
        ("compute zones.list (my-project)", True, "2 zones"),
        ("compute regions.get (my-project, us-central1)", True, "allowed")]
    assert result.launch and result.collect_prices and result.checkpoints
    assert SECRET not in json.dumps(result.as_dict())


def result_seconds() -> float:
    return checks.call_seconds()


def test_gcp_without_the_regions_permission_says_which(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    from google.api_core import exceptions

    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "no-gcloud"))
    denied = exceptions.Forbidden("Required 'compute.regions.get' permission for "
                                  "'projects/p/regions/us-central1'")
    result = checks.check_gcp(lambda: ("creds", "p"), FakeZones("p"),
                              regions_client=FakeRegions(denied))
    assert result.launch and result.problem is None
    assert result.quotas.startswith("compute.regions.get is not allowed")
    assert any(n.startswith("quotas: compute.regions.get is not allowed") and
               n.endswith("--role=roles/compute.viewer") for n in result.notes)


def test_gcp_with_the_compute_api_disabled(no_credentials: None) -> None:
    zones = FakeZones("p", RuntimeError("403 Compute Engine API has not been used in "
                                        "project p before or it is disabled"))
    result = checks.check_gcp(lambda: ("creds", "p"), zones)
    assert not result.launch and result.collect_prices
    assert result.fixes == ["gcloud services enable compute.googleapis.com --project p"]
    assert result.credentials == ["instance service account (metadata server)"]


@pytest.fixture()
def no_cloud(no_credentials: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from google.auth.exceptions import DefaultCredentialsError

    def no_adc() -> None:
        raise DefaultCredentialsError("none")

    real_gcp = checks.check_gcp
    monkeypatch.setattr(checks, "check_gcp", lambda: real_gcp(no_adc))


def test_no_cloud_with_the_local_launcher_exits_0_with_the_line_for_each_gap(
        cli, no_cloud: None) -> None:  # noqa: ANN001
    """The default launcher (local) launches on any machine: `check && launch` works."""
    result = cli("check")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "fix: aws configure" in out
    assert "fix: gcloud auth application-default login" in out
    assert "no credentials needed" in out  # Azure's prices are public
    # that they can be collected rests on what is installed: said, with what tries them
    assert ("collect prices yes (not tried: `requests` is installed; prices.azure.com was not "
            "called, so the network is not known to reach it") in " ".join(out.split()), out
    assert out.endswith("Ready to launch on: local (your launcher, launch.launcher); no "
                        "cloud yet: each one's fix is above\n"), out
    data = json.loads(cli("check", "--json").stdout)
    assert data["can_launch"] is False  # on a cloud
    assert (data["launcher"], data["launcher_ready"]) == ("local", True)
    assert [c["cloud"] for c in data["clouds"]] == ["aws", "gcp", "azure"]
    assert data["clouds"][2]["collect_prices"] is True
    assert "was not called" in data["clouds"][2]["prices_untried"]


@pytest.mark.parametrize("launcher", ["aws", "clouds"])
def test_no_cloud_with_a_cloud_launcher_exits_1_naming_it(
        cli, no_cloud: None, monkeypatch: pytest.MonkeyPatch, launcher: str) -> None:  # noqa: ANN001
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", launcher)
    result = cli("check")
    assert result.exit_code == 1, result.output
    assert result.stdout.endswith(
        f"Ready to launch on: none; your launcher (launch.launcher) is {launcher}: each "
        "cloud's fix is above, or launch.launcher = \"local\" runs jobs on this machine\n"
    ), result.stdout
    data = json.loads(cli("check", "--json").stdout)
    assert (data["launcher"], data["launcher_ready"]) == (launcher, False)


def test_one_cloud_that_can_launch_exits_0(cli, aws_env: None,  # noqa: ANN001
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    client, _ = stubbed_aws("DryRunOperation")
    real_aws = checks.check_aws
    monkeypatch.setattr(checks, "check_aws", lambda: real_aws(client))
    monkeypatch.setattr(checks, "check_gcp", lambda: checks.CloudCheck("gcp", False))
    result = cli("check")
    assert result.exit_code == 0, result.output
    assert "Ready to launch on: local (your launcher, launch.launcher), aws\n" in result.stdout
    assert SECRET not in result.stdout

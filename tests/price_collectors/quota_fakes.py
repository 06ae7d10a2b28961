"""The clouds' quota APIs for the tests: Service Quotas through botocore's Stubber fed the
documented bodies (moto does not serve EC2's quotas), EC2 itself from moto where a test
runs under `mock_aws`; Compute Engine's regions and project on a loopback REST server."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import boto3
from botocore.stub import Stubber

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "quotas"
PAGE = 4  # quotas a page: the readers follow NextToken


def documented(region: str) -> dict[str, list[dict]]:
    """The region's 'applied' and 'defaults' quota items of the fixture."""
    return json.loads((FIXTURES / "aws_service_quotas.json").read_text())["regions"][region]


class StubbedSession:
    """A boto3 session as the AWS quota reader uses it: Service Quotas clients whose
    Stubbers answer ListServiceQuotas then ListAWSDefaultServiceQuotas for ServiceCode ec2
    (in pages of PAGE, as documented), or refuse them with `denied`; EC2 clients of
    boto3 (moto's under `mock_aws`)."""

    region_name = "us-east-1"

    def __init__(self, items: dict[str, dict[str, list[dict]]], denied: str = "",
                 ec2_denied: str = "") -> None:
        self.items, self.denied, self.ec2_denied = items, denied, ec2_denied
        self.session = boto3.session.Session(region_name="us-east-1")
        self.stubs: dict[str, Stubber] = {}
        self._lock = threading.Lock()
        self._clients: dict[tuple[str, str], Any] = {}

    def get_credentials(self) -> object:
        return self.session.get_credentials()

    def client(self, service: str, region_name: str, **_: Any) -> Any:
        with self._lock:
            key = (service, region_name)
            if key not in self._clients:
                self._clients[key] = self._make(service, region_name)
            return self._clients[key]

    def _make(self, service: str, region: str) -> Any:
        made = self.session.client(service, region_name=region)
        if service == "ec2" and self.ec2_denied:
            stub = Stubber(made)
            stub.add_client_error("describe_instances", service_error_code=self.ec2_denied,
                                  http_status_code=403,
                                  service_message="You are not authorized to perform this "
                                                  "operation.")
            stub.activate()
            self.stubs[f"ec2 {region}"] = stub
        if service != "service-quotas":
            return made
        stub = Stubber(made)
        if self.denied:
            stub.add_client_error(
                "list_service_quotas", service_error_code=self.denied, http_status_code=400,
                service_message="User: arn:aws:iam::123456789012:user/alice is not authorized "
                                "to perform: servicequotas:ListServiceQuotas",
                expected_params={"ServiceCode": "ec2"})
        else:
            found = self.items.get(region, {"applied": [], "defaults": []})
            for operation, kind in (("list_service_quotas", "applied"),
                                    ("list_aws_default_service_quotas", "defaults")):
                pages = [found[kind][i:i + PAGE] for i in range(0, len(found[kind]), PAGE)]
                for n, page in enumerate(pages or [[]]):
                    body: dict = {"Quotas": page}
                    asked: dict = {"ServiceCode": "ec2"}
                    if n + 1 < len(pages):
                        body["NextToken"] = f"{kind}-{n + 1}"
                    if n:
                        asked["NextToken"] = f"{kind}-{n}"
                    stub.add_response(operation, body, asked)
        stub.activate()
        self.stubs[region] = stub
        return made


# --- Compute Engine on loopback -----------------------------------------------------------


class GcpQuotaApis:
    """regions.list and projects.get of Compute Engine's REST API, answering with the
    Region and Project resources as documented: `regions` is region -> {metric: (limit,
    usage)}, `project` the project's {metric: (limit, usage)}; `forbidden`: the paths that
    answer 403 PERMISSION_DENIED."""

    def __init__(self, project: str, regions: dict[str, dict[str, tuple[float, float]]],
                 global_quotas: dict[str, tuple[float, float]]) -> None:
        self.project, self.regions, self.global_quotas = project, regions, global_quotas
        self.forbidden: set[str] = set()
        self.paths: list[str] = []

    def __call__(self, request: Any) -> tuple[int, dict[str, str], bytes]:
        path = urlsplit(request.path).path
        self.paths.append(request.path)
        base = f"/compute/v1/projects/{self.project}"
        if path in self.forbidden:
            body = {"error": {"code": 403, "status": "PERMISSION_DENIED", "message":
                              f"Required permission for 'projects/{self.project}'",
                              "errors": [{"reason": "forbidden", "message": "forbidden"}]}}
            return 403, {"Content-Type": "application/json"}, json.dumps(body).encode()
        if path == f"{base}/regions":
            body = {"kind": "compute#regionList", "items": [
                {"kind": "compute#region", "name": name, "status": "UP",
                 "quotas": _quotas(quotas)} for name, quotas in self.regions.items()]}
        elif path == base:
            body = {"kind": "compute#project", "name": self.project,
                    "quotas": _quotas(self.global_quotas)}
        else:
            return 404, {}, b"{}"
        return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()


def _quotas(found: dict[str, tuple[float, float]]) -> list[dict]:
    return [{"metric": m, "limit": limit, "usage": usage} for m, (limit, usage) in found.items()]


def gcp_clients(url: str) -> tuple[Any, Any]:
    """RegionsClient and ProjectsClient of google-cloud-compute over REST at `url`."""
    from google.api_core.client_options import ClientOptions
    from google.auth.credentials import AnonymousCredentials
    from google.cloud import compute_v1

    options = ClientOptions(api_endpoint=url)
    return (compute_v1.RegionsClient(credentials=AnonymousCredentials(), transport="rest",
                                     client_options=options),
            compute_v1.ProjectsClient(credentials=AnonymousCredentials(), transport="rest",
                                      client_options=options))

"""What this machine can do on each cloud: SDK installed, credentials found, one harmless
authenticated call, and what that enables (collect prices, launch, checkpoints), with the
exact line that fixes each gap. No secret value is read into a result: credentials are
named by where they were found (an environment variable's name, a file's path, the
instance's role), never by their value.

The cloud SDKs are reached through costsched.clouds' SDK helpers, inside the probes; each
probe takes its SDK entry points as arguments so that tests give stubs (botocore's Stubber,
a fake Compute Engine client).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

AWS_EXTRA = "pip install 'costsched[aws]'"
GCP_EXTRA = "pip install 'costsched[gcp]'"
AZURE_EXTRA = "pip install 'costsched[azure]'"
AWS_ENV = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
           "AWS_WEB_IDENTITY_TOKEN_FILE")
# botocore's name of where it found credentials -> how the user would say it
AWS_METHODS = {"env": "environment", "shared-credentials-file": "file ~/.aws/credentials",
               "config-file": "file ~/.aws/config", "iam-role": "instance role",
               "container-role": "container role", "assume-role": "assumed role (profile)",
               "assume-role-with-web-identity": "web identity (AWS_WEB_IDENTITY_TOKEN_FILE)",
               "sso": "AWS SSO (profile)", "explicit": "explicit"}
DEFAULT_AWS_REGION = "us-east-1"


@dataclass
class Call:
    """One authenticated call: what was called, whether it worked, and what it said."""

    name: str
    ok: bool
    detail: str


@dataclass
class CloudCheck:
    cloud: str
    extra_installed: bool
    credentials: list[str] = field(default_factory=list)  # where found, never the values
    calls: list[Call] = field(default_factory=list)
    collect_prices: bool = False
    launch: bool = False
    checkpoints: bool = False
    notes: list[str] = field(default_factory=list)
    fixes: list[str] = field(default_factory=list)  # exact lines, in the order to run them

    def as_dict(self) -> dict:
        return asdict(self)


def check_all(*, aws: Callable[[], CloudCheck] | None = None,
              gcp: Callable[[], CloudCheck] | None = None,
              azure: Callable[[], CloudCheck] | None = None) -> list[CloudCheck]:
    """Every cloud's check, in a fixed order."""
    return [(aws or check_aws)(), (gcp or check_gcp)(), (azure or check_azure)()]


def can_launch_somewhere(checks: list[CloudCheck]) -> bool:
    return any(c.launch for c in checks)


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def check_aws(client: Callable[[str, str], Any] | None = None,
              session: Any = None) -> CloudCheck:
    """boto3 installed; credentials (botocore's search: environment, files, instance role);
    STS GetCallerIdentity; EC2 DescribeInstances with DryRun (permission, no effect).
    `client(service, region)` makes the clients (tests stub them)."""
    out = CloudCheck("aws", extra_installed=_installed("boto3"))
    if not out.extra_installed:
        out.fixes.append(AWS_EXTRA)
        return out
    if session is None:
        from costsched.clouds import aws as aws_cloud

        session = aws_cloud.new_session()
    out.credentials = [f"environment variable {n}" for n in AWS_ENV if os.environ.get(n)]
    found = session.get_credentials()
    if found is None:
        files = [p for p in (Path("~/.aws/credentials").expanduser(),
                             Path("~/.aws/config").expanduser()) if p.exists()]
        out.notes.append("no credentials found (looked in the environment, "
                         + ", ".join(["~/.aws/credentials", "~/.aws/config"])
                         + (" (present, no usable profile)" if files else "")
                         + " and the instance role)")
        out.fixes.append("aws configure")
        return out
    method = AWS_METHODS.get(getattr(found, "method", ""), getattr(found, "method", "?"))
    if method != "environment":
        out.credentials.append(method)
    region = session.region_name or DEFAULT_AWS_REGION
    from costsched.clouds import aws as aws_cloud

    if client is None:
        def client(service: str, region_name: str) -> Any:
            return session.client(service, region_name=region_name,
                                  config=aws_cloud.boto_config())

    ClientError, BotoCoreError = aws_cloud.sdk_errors()  # noqa: N806 - the SDK's classes
    try:
        who = client("sts", region).get_caller_identity()
        out.calls.append(Call("sts GetCallerIdentity", True,
                              f"account {who.get('Account', '?')} as {who.get('Arn', '?')}"))
    except (ClientError, BotoCoreError) as exc:
        out.calls.append(Call("sts GetCallerIdentity", False, _aws_error(exc)))
        out.fixes.append("aws configure  # the credentials found were refused")
        return out
    out.collect_prices = True  # spot price history needs any valid credentials
    out.checkpoints = True
    out.notes.append("S3 checkpoints: the credentials work; the bucket's own permissions "
                     "are checked when a job first writes to it")
    try:
        client("ec2", region).describe_instances(DryRun=True, MaxResults=5)
        dry_ok = True  # a real answer: DryRun was ignored, which still proves access
    except ClientError as exc:
        dry_ok = exc.response.get("Error", {}).get("Code") == "DryRunOperation"
        detail = _aws_error(exc)
    except BotoCoreError as exc:
        dry_ok, detail = False, _aws_error(exc)
    else:
        detail = "allowed"
    out.calls.append(Call(f"ec2 DescribeInstances DryRun ({region})", dry_ok,
                          "allowed (dry run)" if dry_ok else detail))
    out.launch = dry_ok
    if not dry_ok:
        arn = who.get("Arn", "your identity")
        out.fixes.append(f"# ask your AWS administrator to allow ec2:DescribeInstances, "
                         f"ec2:RunInstances and ec2:TerminateInstances for {arn}")
    return out


def _aws_error(exc: Exception) -> str:
    response = getattr(exc, "response", None)
    if isinstance(response, dict):
        error = response.get("Error", {})
        return f"{error.get('Code', 'error')}: {error.get('Message', '')}".strip(": ")
    return type(exc).__name__


def check_gcp(auth_default: Callable[[], tuple[Any, str | None]] | None = None,
              zones_client: Callable[[Any], Any] | None = None) -> CloudCheck:
    """google-cloud-compute installed; Application Default Credentials (environment, the
    gcloud file, the instance's service account); a Compute Engine zones list."""
    out = CloudCheck("gcp", extra_installed=_installed("google.cloud.compute_v1")
                     and _installed("google.auth"))
    if not out.extra_installed:
        out.fixes.append(GCP_EXTRA)
        return out
    env_file = os.environ.get("GOOGLE_APPLICATION_CREDENTIALS")
    adc = Path(os.environ.get("CLOUDSDK_CONFIG", "~/.config/gcloud")).expanduser() \
        / "application_default_credentials.json"
    if env_file:
        out.credentials.append("environment variable GOOGLE_APPLICATION_CREDENTIALS"
                               + ("" if Path(env_file).exists() else " (its file is missing)"))
    if adc.exists():
        out.credentials.append(f"file {adc}")
    from costsched.clouds import gcp as gcp_cloud

    auth_default = auth_default or gcp_cloud.default_credentials
    try:
        credentials, project = auth_default()
    except Exception as exc:  # noqa: BLE001 - google.auth raises several kinds; all mean none
        out.notes.append(f"no credentials found ({type(exc).__name__})")
        out.fixes.append("gcloud auth application-default login")
        return out
    if not env_file and not adc.exists():
        out.credentials.append("instance service account (metadata server)")
    project = os.environ.get("GOOGLE_CLOUD_PROJECT") or project
    if not project:
        out.notes.append("credentials found but no project")
        out.fixes.append("gcloud config set project PROJECT_ID")
        return out
    zones_client = zones_client or gcp_cloud.zones_client
    try:
        zones = list(zones_client(credentials).list(project=project))
    except Exception as exc:  # noqa: BLE001 - google.api_core errors: any means no access
        text = str(exc)
        out.calls.append(Call(f"compute zones.list ({project})", False,
                              text.splitlines()[0][:200] if text else type(exc).__name__))
        if "SERVICE_DISABLED" in text or "has not been used" in text:
            out.fixes.append(f"gcloud services enable compute.googleapis.com --project {project}")
        else:
            out.fixes.append(f"gcloud projects add-iam-policy-binding {project} "
                             "--member=user:YOU@EXAMPLE.COM --role=roles/compute.instanceAdmin.v1")
        out.collect_prices = True  # the billing catalog needs credentials, not Compute
        out.notes.append("prices: the Cloud Billing catalog needs the credentials only "
                         "(its API enabled: gcloud services enable cloudbilling.googleapis.com)")
        return out
    out.calls.append(Call(f"compute zones.list ({project})", True, f"{len(zones)} zones"))
    out.collect_prices = out.launch = out.checkpoints = True
    out.notes.append("GCS checkpoints: the credentials work; the bucket's own permissions "
                     "are checked when a job first writes to it")
    return out


def check_azure() -> CloudCheck:
    """Azure's retail prices are public: collecting them needs no credentials. costsched
    does not launch on Azure."""
    out = CloudCheck("azure", extra_installed=_installed("requests"))
    if not out.extra_installed:
        out.fixes.append(AZURE_EXTRA)
    out.collect_prices = out.extra_installed
    out.credentials = ["none needed for prices"]
    out.notes.append("prices come from the public Azure Retail Prices API: no credentials "
                     "needed")
    out.notes.append("launching and checkpoints on Azure are not supported by costsched")
    return out

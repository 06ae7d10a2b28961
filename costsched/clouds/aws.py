"""AWS: region and zone names, egress, the default spot preemption rate, boto3 sessions.

The SDK is imported only inside the session helpers: the core never loads it, the
collectors and launchers call these helpers.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

from costsched.clouds.base import Cloud, EgressPrice, PreemptionRate, SdkMissing

# 1 try + 9 retries; adaptive mode also rate-limits on the client side after throttling.
RETRIES = {"mode": "adaptive", "total_max_attempts": 10}

# The regions AWS lists (2026-05: the commercial regions of the AWS Pricing API's
# data-transfer pairs, as exported in ../shared/data/skynomad-v100/aws_egress_pricing.csv,
# with GovCloud and China). A region opened since is accepted by its shape (base.py).
REGIONS = frozenset({
    "af-south-1", "ap-east-1", "ap-east-2", "ap-northeast-1", "ap-northeast-2",
    "ap-northeast-3", "ap-south-1", "ap-south-2", "ap-southeast-1", "ap-southeast-2",
    "ap-southeast-3", "ap-southeast-4", "ap-southeast-5", "ap-southeast-6", "ap-southeast-7",
    "ca-central-1", "ca-west-1", "eu-central-1", "eu-central-2", "eu-north-1", "eu-south-1",
    "eu-south-2", "eu-west-1", "eu-west-2", "eu-west-3", "il-central-1", "me-central-1",
    "me-south-1", "mx-central-1", "sa-east-1", "us-east-1", "us-east-2", "us-west-1",
    "us-west-2", "us-gov-east-1", "us-gov-west-1", "cn-north-1", "cn-northwest-1",
})
# The zones of the regions the bundled catalog prices (2026-05: one letter a zone, up to the
# highest number of the region's AZ IDs in docs.aws.amazon.com/global-infrastructure/latest/regions/
# aws-availability-zones.html; in the oldest regions an account sees some of the letters).
ZONES = frozenset(f"{region}{letter}" for region, letters in {
    "us-east-1": "abcdef", "us-east-2": "abc", "us-west-1": "abc", "us-west-2": "abcd",
    "eu-west-1": "abc", "eu-central-1": "abc", "ap-northeast-1": "abcd",
}.items() for letter in letters)
_DIRECTIONS = r"(?:north|south|east|west|central)(?:east|west|central)?"
# The shape AWS names regions with: a geography, optionally -gov or -iso, a direction and a
# number (us-east-1, us-gov-west-1, us-isob-east-1, ap-southeast-5).
_REGION = rf"(?:us|ca|mx|sa|eu|ap|me|af|il|cn)(?:-gov|-iso[a-z]?)?-{_DIRECTIONS}-[1-9]\d?"

AWS = Cloud(
    name="aws",
    region_pattern=re.compile(_REGION),
    region_example="us-east-1",
    # The region and a letter; a Local Zone adds its metro and a number (us-west-2-lax-1a).
    zone_pattern=re.compile(rf"^(?P<region>{_REGION})(?:-[a-z]{{3}}-[1-9])?[a-z]$"),
    zone_example="us-east-1a",
    regions=REGIONS,
    zones=ZONES,
    egress=EgressPrice(
        0.09, 0.02,
        "aws.amazon.com/ec2/pricing/on-demand 'Data Transfer': out to internet $0.09/GB "
        "(up to 10 TB/month), to another AWS region $0.02/GB, S3 to EC2 in the same region "
        "free; figures as listed in 2026 (summarized at wring.co/blog/aws-data-transfer-"
        "pricing-guide, 'AWS Data Transfer Pricing, 2026')",
    ),
    # Measured with `optimize.availability.preemption_rates` from the dispa2020 probe logs
    # (../shared/data/dispa2020/aws/availability, MIT licence).
    storage_schemes=("s3://",),
    preemption=PreemptionRate(
        0.0854, "measured: dispa2020 aws/availability, us-east-1, 2020-03-15..17: "
        "32 preemptions in 374.6 instance-hours"),
)


def boto_config(**overrides: Any) -> Any:  # -> botocore.config.Config
    """Client config: adaptive retries, bounded timeouts, a connection per worker thread."""
    from botocore.config import Config

    settings: dict[str, Any] = {"retries": dict(RETRIES), "connect_timeout": 10,
                                "read_timeout": 60, "max_pool_connections": 32}
    settings.update(overrides)
    return Config(**settings)


def parse_timestamp(value: Any) -> datetime:
    """botocore's timestamp parser, with a fast path for the ISO 8601 UTC times EC2 sends.

    botocore parses every timestamp with dateutil, which is most of the CPU time of a
    large DescribeSpotPriceHistory page; the GIL would then serialize the regions.
    """
    if isinstance(value, str) and value.endswith("Z"):
        try:
            return datetime.fromisoformat(value[:-1]).replace(tzinfo=timezone.utc)
        except ValueError:
            pass
    from botocore.utils import parse_timestamp as botocore_parse

    return botocore_parse(value)


def sdk_errors() -> tuple[type[Exception], type[Exception]]:
    """botocore's (ClientError, BotoCoreError): an answer refused, and a call that failed."""
    from botocore.exceptions import BotoCoreError, ClientError

    return ClientError, BotoCoreError


def new_session(**kwargs: Any) -> Any:
    """A boto3 Session (credentials, region, profile and endpoints resolved as boto3 does),
    whose clients parse timestamps with `parse_timestamp`. SdkMissing without boto3."""
    try:
        import boto3
        import botocore.session
    except ImportError:
        raise SdkMissing("aws: boto3 is not installed: pip install 'costsched[aws]'") from None
    core = botocore.session.get_session()
    core.get_component("response_parser_factory").set_parser_defaults(
        timestamp_parser=parse_timestamp)
    return boto3.session.Session(botocore_session=core, **kwargs)


# The GPU image launchers use when none is given: the Deep Learning Base OSS Nvidia Driver
# GPU AMI (Ubuntu 22.04). Its newest id per region is the public SSM parameter below
# (docs.aws.amazon.com/dlami/latest/devguide/find-dlami-id.html); where SSM cannot be read,
# the newest Amazon-owned image whose name matches the filter.
GPU_IMAGE_PARAMETER = ("/aws/service/deeplearning/ami/x86_64/"
                       "base-oss-nvidia-driver-gpu-ubuntu-22.04/latest/ami-id")
GPU_IMAGE_OWNER = "amazon"
GPU_IMAGE_NAME_FILTER = "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04) *"
# Inside an instance: the spot interruption notice (404 until EC2 schedules an interruption;
# IMDSv2 asks for a session token first).
SPOT_NOTICE_URL = "http://169.254.169.254/latest/meta-data/spot/instance-action"
# run_instances error codes that mean "not this offering now": try the next one.
CAPACITY_ERROR_CODES = frozenset({
    "InsufficientInstanceCapacity", "SpotMaxPriceTooLow", "MaxSpotInstanceCountExceeded",
    "InstanceLimitExceeded", "Unsupported", "VcpuLimitExceeded",
})

# Of those, the codes that mean the account's quota is used up (not the cloud's capacity):
# the vCPU limits of the instance families (on-demand, spot) and the old instance counts.
QUOTA_ERROR_CODES = frozenset({
    "VcpuLimitExceeded", "MaxSpotInstanceCountExceeded", "InstanceLimitExceeded"})

# Error codes of other failures (docs.aws.amazon.com/AWSEC2/latest/APIReference/
# api-error-codes.html, and the common errors of every AWS API): the account's request rate,
# throttled per region; a server's failure (the request may have been carried out); a call
# the identity's IAM policy does not allow; credentials refused or expired.
THROTTLING_ERROR_CODES = frozenset({
    "RequestLimitExceeded", "Throttling", "ThrottlingException", "ThrottledException",
    "RequestThrottled", "RequestThrottledException", "TooManyRequestsException", "SlowDown",
    "PriorRequestNotComplete"})
SERVER_ERROR_CODES = frozenset({
    "InternalError", "InternalFailure", "ServiceUnavailable", "Unavailable",
    "RequestTimeout", "RequestTimeoutException"})
PERMISSION_ERROR_CODES = frozenset({
    "UnauthorizedOperation", "AccessDenied", "AccessDeniedException", "NotAuthorized",
    "OptInRequired", "Blocked"})
CREDENTIAL_ERROR_CODES = frozenset({
    "AuthFailure", "InvalidClientTokenId", "SignatureDoesNotMatch", "IncompleteSignature",
    "ExpiredToken", "ExpiredTokenException", "UnrecognizedClientException", "RequestExpired"})

# The instance types EC2 sells as Capacity Blocks for ML and the regions it sells them in
# (EC2 User Guide, "Capacity Blocks for ML", 2025): where `collect --booked` asks.
CAPACITY_BLOCK_TYPES = ("p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5e.48xlarge",
                        "p5en.48xlarge", "p6-b200.48xlarge", "trn1.32xlarge", "trn2.48xlarge")
CAPACITY_BLOCK_REGIONS = ("us-east-1", "us-east-2", "us-west-2", "ap-northeast-1")
# How far ahead a Capacity Block may start (eight weeks).
CAPACITY_BLOCK_AHEAD_DAYS = 56

# Environment variables that carry this cloud's credentials: never stored nor sent to an
# instance (instances use their own role).
CREDENTIAL_ENVS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
                   "AWS_SECURITY_TOKEN")


# --- quotas ---------------------------------------------------------------------------------

# The EC2 quotas of running instances, in vCPUs per region, one on-demand and one spot per
# family of instance types (Service Quotas, service code ec2; the codes and names as
# ListServiceQuotas lists them and the EC2 User Guide's "On-Demand Instance quotas" and
# "Spot Instance quotas" name them): family letters -> (family's name, on-demand code, spot
# code). Accelerated families, and the standard ones that CPU work runs on.
QUOTA_SERVICE = "ec2"
QUOTA_FAMILIES = {
    "p": ("P", "L-417A185B", "L-7212CCBC"),
    "g": ("G and VT", "L-DB2E81BA", "L-3819A6DF"),
    "vt": ("G and VT", "L-DB2E81BA", "L-3819A6DF"),
    "dl": ("DL", "L-6E869C2A", "L-85EED4F7"),
    "trn": ("Trn", "L-2C3B7624", "L-6B0D517C"),
    "inf": ("Inf", "L-1945791B", "L-B5D1601B"),
    **dict.fromkeys("acdhimrtz", ("Standard (A, C, D, H, I, M, R, T, Z)", "L-1216C47A",
                                  "L-34B43A08")),
}
_FAMILY = re.compile(r"^([a-z]+)")


def quota_name(family: str, market: str) -> str:
    """The quota's name as Service Quotas lists it."""
    return (f"All {family} Spot Instance Requests" if market == "spot"
            else f"Running On-Demand {family} instances")


# Every quota code of QUOTA_FAMILIES -> its name.
QUOTA_NAMES = {code: quota_name(family, market)
               for family, on_demand, spot in QUOTA_FAMILIES.values()
               for code, market in ((on_demand, "on_demand"), (spot, "spot"))}


def quota_family(instance_type: str) -> tuple[str, str, str] | None:
    """(family's name, on-demand code, spot code) of an instance type ('p3.2xlarge': P),
    or None for a family no quota here names."""
    found = _FAMILY.match(instance_type)
    return QUOTA_FAMILIES.get(found.group(1)) if found else None


def quota_needs(region: str, instance_type: str, market: str, gpu_model: str,
                gpu_count: int, vcpus: int) -> tuple:
    """The vCPU quota of the instance's family in its region, for its market."""
    from costsched.clouds.quota_need import Need

    family = quota_family(instance_type)
    if family is None or vcpus <= 0:
        return ()
    name, on_demand, spot = family
    code = spot if market == "spot" else on_demand
    return (Need("aws", region, (code,), "vCPUs", float(vcpus), quota_name(name, market)),)


def quota_request(code: str, scope: str, value: float, account: str = "") -> str:
    """The AWS CLI line that asks Service Quotas for `value` of `code` in region `scope`."""
    return (f"aws service-quotas request-service-quota-increase --service-code "
            f"{QUOTA_SERVICE} --quota-code {code} --desired-value {value:g} --region {scope}")


# --- bounded calls (`costsched check`) ------------------------------------------------------


class HelperTimeout(RuntimeError):
    """A credential helper (a profile's credential_process) did not return in time; it was
    killed."""


class HelperFailed(RuntimeError):
    """A credential helper exited non-zero. Its output is never kept: it may hold a secret."""


def bounded_config(seconds: float) -> Any:  # -> botocore.config.Config
    """Client config for one bounded attempt: connect and each read within `seconds`, no
    retries (a caller that must answer in time, not a collector)."""
    return boto_config(connect_timeout=seconds, read_timeout=seconds,
                       retries={"mode": "standard", "total_max_attempts": 1})


def credential_files(env: Any = None) -> dict[str, str]:
    """The files botocore reads credentials and profiles from: {variable or default name:
    path} (a path may not exist)."""
    import os

    env = os.environ if env is None else env
    files = {"AWS_CONFIG_FILE": env.get("AWS_CONFIG_FILE") or "~/.aws/config",
             "AWS_SHARED_CREDENTIALS_FILE": env.get("AWS_SHARED_CREDENTIALS_FILE")
             or "~/.aws/credentials"}
    if env.get("AWS_WEB_IDENTITY_TOKEN_FILE"):
        files["AWS_WEB_IDENTITY_TOKEN_FILE"] = env["AWS_WEB_IDENTITY_TOKEN_FILE"]
    return {name: os.path.expanduser(path) for name, path in files.items()}


def bound_credential_helper(session: Any, seconds: float) -> None:
    """Make the session's credential_process run within `seconds` (killed after) and fail
    with HelperFailed, its output dropped (botocore would put its stderr, which may hold a
    token, in the error)."""
    resolver = session._session.get_component("credential_provider")  # noqa: SLF001
    provider = resolver.get_provider("custom-process")
    if provider is not None:
        provider._popen = _bounded_popen(seconds)  # noqa: SLF001 - botocore's own hook


def _bounded_popen(seconds: float) -> Any:
    import contextlib
    import os
    import signal
    import subprocess

    class Bounded:
        def __init__(self, argv: list[str], **options: Any) -> None:
            self._process = subprocess.Popen(argv, start_new_session=True, **options)
            self.returncode: int | None = None

        def communicate(self, input: bytes | None = None) -> tuple[bytes, bytes]:  # noqa: A002
            try:
                out, _err = self._process.communicate(input, timeout=seconds)
            except subprocess.TimeoutExpired:
                # The helper's whole group: a child of it would keep the pipes open.
                with contextlib.suppress(OSError):
                    os.killpg(self._process.pid, signal.SIGKILL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._process.communicate(timeout=1)
                raise HelperTimeout(f"did not return within {seconds:g} s") from None
            self.returncode = self._process.returncode
            if self.returncode != 0:
                raise HelperFailed(f"exited with code {self.returncode}") from None
            return out, b""

    return Bounded

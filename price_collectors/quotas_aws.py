"""AWS's EC2 quotas of the GPU and accelerator families (and the standard ones), per region:
limits from Service Quotas, use counted from the running instances.

Per region: `ListServiceQuotas` (service code ec2) gives the applied values; a quota it
does not list (Service Quotas lists only applied values where it has them) takes its value
from `ListAWSDefaultServiceQuotas`. The use is the vCPUs of the region's pending and
running instances of each family, on-demand and spot apart (`DescribeInstances`; an
instance's vCPUs are its CPU options', else the catalog's, else `DescribeInstanceTypes`').
Open spot requests that have no instance yet are not counted.

Permissions: servicequotas:ListServiceQuotas, servicequotas:ListAWSDefaultServiceQuotas,
ec2:DescribeInstances (and ec2:DescribeInstanceTypes for a type the catalog lacks). A
missing one is named in one line.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from costsched import catalog
from costsched.clouds import SdkMissing
from costsched.clouds import aws as aws_cloud
from costsched.vocabulary import counted
from price_collectors.quota_reading import QuotaReading, QuotasUnreadable, reading_frame

SOURCE = "aws service-quotas"
WORKERS = 8
DENIED = frozenset({"AccessDeniedException", "AccessDenied", "UnauthorizedOperation",
                    "UnrecognizedClientException", "InvalidClientTokenId"})
LIVE_STATES = ["pending", "running"]


class AwsQuotaClients:
    """boto3 clients of one session, made one at a time (sessions are not thread-safe)."""

    def __init__(self, session: Any = None) -> None:
        self.session = session if session is not None else _default_session()
        self._lock = threading.Lock()

    def client(self, service: str, region: str) -> Any:
        with self._lock:
            return self.session.client(service, region_name=region,
                                       config=aws_cloud.boto_config())

    def regions(self) -> list[str]:
        """The regions EC2 offers this account (where none were named)."""
        ec2 = self.client("ec2", self.session.region_name or "us-east-1")
        return sorted(r["RegionName"] for r in ec2.describe_regions()["Regions"])


def _default_session() -> Any:
    try:
        session = aws_cloud.new_session()
    except SdkMissing as exc:
        raise QuotasUnreadable(str(exc), "pip install 'costsched[aws]'") from None
    if session.get_credentials() is None:
        raise QuotasUnreadable("aws: no AWS credentials found", "aws configure")
    return session


class AwsQuotaReader:
    cloud = "aws"

    def __init__(self, clients: Any = None) -> None:
        self._clients = clients

    @property
    def clients(self) -> Any:
        if self._clients is None:
            self._clients = AwsQuotaClients()
        return self._clients

    def read(self, regions: Sequence[str] = ()) -> QuotaReading:
        """The quotas of every region of `regions` (default all the account's)."""
        names = list(regions) or self.clients.regions()
        rows: list[dict] = []
        failed: dict[str, str] = {}
        notes: list[tuple[str, str]] = []
        with ThreadPoolExecutor(max_workers=min(WORKERS, max(1, len(names)))) as pool:
            for region, found in zip(names, pool.map(self._region, names), strict=True):
                if isinstance(found, QuotasUnreadable):
                    raise found  # a permission missing: the same in every region
                if isinstance(found, str):
                    failed[region] = found
                    continue
                region_rows, note = found
                rows.extend(region_rows)
                if note:
                    notes.append(note)
        error, fix = notes[0] if notes else ("", "")
        if failed and not error:
            region, why = next(iter(sorted(failed.items())))
            error, fix = (f"{counted(len(failed), 'region')} not read, {region}: {why}",
                          "run `costsched quotas --refresh` again")
        return QuotaReading("aws", reading_frame(rows), error=error, fix=fix, failed=failed)

    def _region(self, region: str) -> tuple[list[dict], tuple[str, str] | None] | str | \
            QuotasUnreadable:
        ClientError, BotoCoreError = aws_cloud.sdk_errors()  # noqa: N806 - the SDK's classes
        try:
            limits = self._limits(region)
        except ClientError as exc:
            code, message = _error(exc)
            if code in DENIED:
                operation = exc.operation_name if hasattr(exc, "operation_name") else ""
                return QuotasUnreadable(
                    f"aws: servicequotas:{operation or 'ListServiceQuotas'} is not allowed "
                    f"({code}): plans cannot tell which offerings the account's quotas hold",
                    "allow servicequotas:ListServiceQuotas and servicequotas:"
                    "ListAWSDefaultServiceQuotas to the identity costsched runs as")
            return f"{code}: {message}"
        except BotoCoreError as exc:
            return " ".join(str(exc).split())
        note = None
        try:
            used = self._used(region)
        except ClientError as exc:
            code, message = _error(exc)
            used = None
            note = ((f"aws: ec2:DescribeInstances is not allowed ({code}): the quotas' use is "
                     "not known (taken as 0)", "allow ec2:DescribeInstances")
                    if code in DENIED else (f"aws {region}: use not read: {code}: {message}",
                                            ""))
        except BotoCoreError as exc:
            used, note = None, (f"aws {region}: use not read: {' '.join(str(exc).split())}",
                                "")
        rows = [{"scope": region, "code": code, "name": name, "unit": "vCPUs",
                 "limit": value, "used": None if used is None else float(used.get(code, 0)),
                 "source": SOURCE} for code, (name, value) in sorted(limits.items())]
        return rows, note

    def _limits(self, region: str) -> dict[str, tuple[str, float]]:
        """code -> (name, value) of the family quotas: applied, else the defaults."""
        client = self.clients.client("service-quotas", region)
        wanted = aws_cloud.QUOTA_NAMES
        found: dict[str, tuple[str, float]] = {}
        for operation in ("list_service_quotas", "list_aws_default_service_quotas"):
            if len(found) == len(wanted):
                break
            for page in client.get_paginator(operation).paginate(
                    ServiceCode=aws_cloud.QUOTA_SERVICE):
                for quota in page.get("Quotas", []):
                    code = quota.get("QuotaCode")
                    if code in wanted and code not in found and "Value" in quota:
                        found[code] = (quota.get("QuotaName") or wanted[code],
                                       float(quota["Value"]))
        return found

    def _used(self, region: str) -> Counter:
        """code -> vCPUs of the region's pending and running instances."""
        ec2 = self.clients.client("ec2", region)
        used: Counter = Counter()
        unknown: dict[str, list[tuple[str, str]]] = {}
        for page in ec2.get_paginator("describe_instances").paginate(
                Filters=[{"Name": "instance-state-name", "Values": LIVE_STATES}]):
            for reservation in page.get("Reservations", []):
                for instance in reservation.get("Instances", []):
                    kind = instance.get("InstanceType", "")
                    family = aws_cloud.quota_family(kind)
                    if family is None:
                        continue
                    code = family[2] if instance.get("InstanceLifecycle") == "spot" \
                        else family[1]
                    vcpus = _vcpus(instance)
                    if vcpus:
                        used[code] += vcpus
                    else:
                        unknown.setdefault(kind, []).append((code, kind))
        if unknown:  # types neither the instance nor the catalog says the vCPUs of
            answer = ec2.describe_instance_types(InstanceTypes=sorted(unknown))
            for item in answer.get("InstanceTypes", []):
                vcpus = int(item.get("VCpuInfo", {}).get("DefaultVCpus", 0))
                for code, _ in unknown.get(item.get("InstanceType", ""), []):
                    used[code] += vcpus
        return used


def _vcpus(instance: dict) -> int:
    options = instance.get("CpuOptions") or {}
    if options.get("CoreCount"):
        return int(options["CoreCount"]) * int(options.get("ThreadsPerCore", 1))
    listed = catalog.lookup("aws", instance.get("InstanceType", ""))
    return int(listed["vcpus"]) if listed and listed.get("vcpus") else 0


def _error(exc: Any) -> tuple[str, str]:
    error = getattr(exc, "response", {}).get("Error", {})
    return str(error.get("Code", "error")), " ".join(str(error.get("Message", "")).split())

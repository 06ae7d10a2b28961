"""What EC2's answers say (`launchers.aws`): an instance's state in a describe_instances
record, a client error's code and message, and a capacity refusal that is a quota's."""

from __future__ import annotations

from typing import Any

from costsched.clouds import aws as aws_cloud
from launchers.base import CapacityError, QuotaError


def instance_state(record: dict[str, Any]) -> tuple[str, str]:
    """(INSTANCE_STATES value, detail) of a describe_instances record. An instance that
    stopped or ended for a reason of the cloud's ("Server.*": a spot interruption, a
    failed host) is preempted; one ended by a client (costsched, a person) is terminated."""
    name = record["State"]["Name"]
    reason = record.get("StateReason") or {}
    detail = reason.get("Message") or reason.get("Code") or ""
    if name in ("pending", "running"):
        return name, detail
    if str(reason.get("Code", "")).startswith("Server."):
        return "preempted", detail
    return "terminated", detail


def error_of(exc: Any) -> tuple[str, str]:
    """(code, message) of a botocore ClientError."""
    err = exc.response.get("Error", {})
    message = " ".join(str(err.get("Message", "")).split())
    return str(err.get("Code", "")), message


def quota_refused(exc: CapacityError, instances: int = 1) -> QuotaError | None:
    """`exc` as the QuotaError it is when its EC2 code (the reason's first word) is a
    quota's (a family's vCPU limit, on-demand or spot), else None. EC2 does not name the
    quota: the offering's family and market say which (`costsched.clouds.quotas`)."""
    code = exc.reason.split(":", 1)[0].strip()
    if code not in aws_cloud.QUOTA_ERROR_CODES:
        return None
    return QuotaError(exc.offering, exc.reason, instances=instances)

"""A cloud's timestamp as a time: botocore's datetimes, Compute Engine's RFC 3339 strings
(`creationTimestamp`, with the zone's offset), Azure's ISO 8601 strings (`timeCreated`,
with seven digits of fractions), the local launcher's own records, and the time EC2 writes
into an instance's `StateTransitionReason`."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

# EC2's StateTransitionReason ends with when the transition happened, in UTC:
# "User initiated (2026-11-29 10:04:31 GMT)", "Service initiated (... GMT)".
_TRANSITION = re.compile(r"\((\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}) (?:GMT|UTC)\)")


def utc(value: Any) -> datetime | None:
    """`value` as an aware UTC time; None when it is missing, malformed or says no zone
    (a time of unknown zone proves nothing)."""
    if isinstance(value, datetime):
        when = value
    else:
        try:
            when = datetime.fromisoformat(str(value or "").replace("Z", "+00:00"))
        except ValueError:
            return None
    return when.astimezone(timezone.utc) if when.tzinfo is not None else None


def transition_time(reason: Any) -> datetime | None:
    """When EC2 says an instance's last state transition happened (its
    `StateTransitionReason`); None when the reason carries no time."""
    found = _TRANSITION.search(str(reason or ""))
    if found is None:
        return None
    return datetime.strptime(found[1], "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc)

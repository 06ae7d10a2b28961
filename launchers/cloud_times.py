"""A cloud's timestamp as a time: botocore's datetimes, Compute Engine's RFC 3339 strings
(`creationTimestamp`, with the zone's offset), Azure's ISO 8601 strings (`timeCreated`,
with seven digits of fractions), the local launcher's own records."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any


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

"""Checks of the values given to the service: errors name the value, never a CLI flag.

Every message starts with the parameter's name ("starts 0: expected ..."), so that a caller
that got the value from an option can name the option instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timezone

import pandas as pd

from costsched.model import InvalidInput


def as_time(value: datetime | str | None, name: str = "at") -> datetime:
    """An aware UTC time from a datetime or ISO 8601 text ('2020-03-01T00:00Z',
    '2020-03-01'); None or 'now' is now."""
    if value is None or value == "now":
        return datetime.now(timezone.utc)
    try:
        ts = pd.Timestamp(value)
    except (ValueError, TypeError):
        raise InvalidInput(
            f"{name} {value!r}: expected an ISO 8601 time such as 2020-03-01T00:00Z"
        ) from None
    if pd.isna(ts):
        raise InvalidInput(f"{name} {value!r}: expected an ISO 8601 time")
    ts = ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")
    return ts.to_pydatetime()


def choices(name: str, values: Iterable[str], accepted: Iterable[str]) -> list[str]:
    """`values` as a list, or InvalidInput naming the first one not in `accepted`."""
    values, accepted = list(values), tuple(accepted)
    bad = [v for v in values if v not in accepted]
    if bad:
        raise InvalidInput(f"{name} {bad[0]!r}: expected one of {', '.join(accepted)}")
    return values


def positive(name: str, value: float, what: str = "a positive number") -> float:
    if not value > 0:
        raise InvalidInput(f"{name} {value}: expected {what}")
    return value


def at_least(name: str, value: float, low: float, what: str = "a number") -> float:
    if not value >= low:
        raise InvalidInput(f"{name} {value}: expected {what} >= {low:g}")
    return value

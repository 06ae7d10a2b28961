"""Checks of the values given to the service: errors name the value, never a CLI flag.

Every message starts with the parameter's name ("starts 0: expected ..."), so that a caller
that got the value from an option can name the option instead.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import datetime, timezone

import pandas as pd

from costsched.model import InvalidInput
from costsched.validation import argument_time, in_range
from costsched.vocabulary import choose


def as_time(value: datetime | str | None, name: str = "at") -> datetime:
    """An aware UTC time from a datetime or ISO 8601 text ('2020-03-01T00:00Z',
    '2020-03-01'; no zone means UTC), in the supported range; None or 'now' is now."""
    if value is None or value == "now":
        return datetime.now(timezone.utc)
    try:
        if isinstance(value, datetime):
            ts = in_range(pd.Timestamp(value).tz_localize("UTC") if value.tzinfo is None
                          else pd.Timestamp(value))
        else:
            ts = argument_time(str(value))
    except ValueError as exc:
        raise InvalidInput(f"{name} {exc}") from None
    return ts.to_pydatetime()


def choices(name: str, values: Iterable[str], accepted: Iterable[str]) -> list[str]:
    """`values` in their accepted spelling (any case, '-' or '_': 'AWS', 'on-demand'), or
    InvalidInput naming the first one not in `accepted` and the close ones."""
    spelled, error = choose(values, accepted)
    if error is not None:
        raise InvalidInput(f"{name} {error}")
    return spelled


def positive(name: str, value: float, what: str = "a positive number") -> float:
    if not 0 < value < math.inf:
        raise InvalidInput(f"{name} {value}: expected {what}")
    return value


def at_least(name: str, value: float, low: float, what: str = "a number") -> float:
    if not low <= value < math.inf:
        raise InvalidInput(f"{name} {value}: expected {what} >= {low:g}")
    return value

"""Durations as people write them ('36h', '2d', '90m', 48) or an absolute ISO time: one
reading for job specs, task files and the config."""

from __future__ import annotations

import math
import re
from datetime import datetime
from typing import Any

from costsched.lazy import pandas as pd
from costsched.model import utc

MAX_HOURS = 1e6  # about 114 years: beyond it a duration is a typo

_DURATION = re.compile(r"^\s*(?:(\d+(?:\.\d+)?)\s*d)?\s*(?:(\d+(?:\.\d+)?)\s*h)?\s*"
                       r"(?:(\d+(?:\.\d+)?)\s*m)?\s*$")
_ISO_DATE = re.compile(r"^\s*\d{4}-\d{2}-\d{2}(?:$|[T ])")  # 2020-03-03, then a time


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def parse_hours(value: Any) -> float | datetime:
    """A duration in hours (number, '36h', '2d', '90m', '1d12h') or an absolute ISO time."""
    if isinstance(value, bool):
        raise ValueError("expected hours or a time")
    if isinstance(value, (int, float)):
        hours = float(value)
    elif isinstance(value, datetime):
        return utc(value)
    else:
        text = str(value)
        m = _DURATION.match(text)
        if _number(text) is not None:  # '-3', '1e9': hours, checked below (not a year)
            hours = float(text)
        elif m and any(m.groups()):
            d, h, mins = (float(g) if g else 0.0 for g in m.groups())
            hours = 24 * d + h + mins / 60
        else:
            try:  # an ISO time only: pandas would read '1s' as the year 1, 'now' as now
                if not _ISO_DATE.match(text):
                    raise ValueError(text)
                ts = pd.Timestamp(text)
            except (ValueError, TypeError):
                raise ValueError(f"{text!r}: expected hours (48, '36h', '2d', '90m') "
                                 "or an ISO time (2020-03-03T00:00Z)") from None
            return utc(ts.to_pydatetime())
    if not math.isfinite(hours) or hours <= 0 or hours > MAX_HOURS:
        raise ValueError(f"{value!r}: expected a positive duration of at most "
                         f"{MAX_HOURS:g} hours")
    return hours



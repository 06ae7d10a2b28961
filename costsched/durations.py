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


def _negative(text: str) -> bool:
    """A duration written with a minus sign ('-2h', '- 1d')."""
    rest = text.strip()
    if not rest.startswith("-"):
        return False
    m = _DURATION.match(rest[1:])
    return bool(m and any(m.groups()))


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
        elif _negative(text):
            raise ValueError(f"{text!r} is negative: expected a positive duration (48, '36h', "
                             "'2d', '90m') or an ISO time (2020-03-03T00:00Z)")
        else:
            try:  # an ISO time only: pandas would read '1s' as the year 1, 'now' as now
                if not _ISO_DATE.match(text):
                    raise ValueError(text)
                ts = pd.Timestamp(text)
            except (ValueError, TypeError):
                close = _spelt_out(text)
                raise ValueError(f"{text!r}: expected hours (48, '36h', '2d', '90m') "
                                 "or an ISO time (2020-03-03T00:00Z)"
                                 + (f"; did you mean {close!r}?" if close else "")) from None
            return utc(ts.to_pydatetime())
    if not math.isfinite(hours) or hours <= 0 or hours > MAX_HOURS:
        raise ValueError(f"{value!r}: expected a positive duration of at most "
                         f"{MAX_HOURS:g} hours")
    return hours


def work_hours(text: str) -> float | str:
    """Hours of work as a deadline's are written ('90m', '1.5h', '2'), never a time;
    ValueError saying the forms taken. A number comes back as written, for the field's
    own check of its range."""
    try:
        float(text)
        return text
    except ValueError:
        pass
    try:
        hours = parse_hours(text)
    except ValueError:
        hours = None
    if not isinstance(hours, float):
        raise ValueError(f"{text!r}: expected a number of hours, such as 1.5 or '90m'")
    return hours


_SECONDS = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(?:s|sec|secs|second|seconds)\s*$")


def duration_hours(text: str) -> float:
    """A duration written with its unit, in hours: as `parse_hours` reads one ('7d', '36h',
    '90m', '1d12h'), spelt out ('30min', '7 days') or in seconds ('45s'); never a bare
    number (its unit is the caller's) nor a time. ValueError otherwise."""
    lowered = text.strip().lower()
    seconds = _SECONDS.match(lowered)
    if seconds:
        return float(seconds[1]) / 3600
    m = _DURATION.match(lowered) if lowered else None
    if not (m and any(m.groups())):
        m = _DURATION.match(_spelt_out(lowered) or "-")
    if not (m and any(m.groups())):
        raise ValueError(f"{text!r}: expected a duration with its unit, such as '7d'")
    d, h, mins = (float(g) if g else 0.0 for g in m.groups())
    return 24 * d + h + mins / 60


# Units as people spell them out, to the letter a duration takes (a week as 7 days).
_UNITS = {"d": ("d", 1), "day": ("d", 1), "days": ("d", 1), "h": ("h", 1), "hr": ("h", 1),
          "hrs": ("h", 1), "hour": ("h", 1), "hours": ("h", 1), "m": ("m", 1),
          "min": ("m", 1), "mins": ("m", 1), "minute": ("m", 1), "minutes": ("m", 1),
          "w": ("d", 7), "wk": ("d", 7), "wks": ("d", 7), "week": ("d", 7), "weeks": ("d", 7)}
_SPELT = re.compile(r"(\d+(?:\.\d+)?)\s*([a-z]+)")
_JOINERS = re.compile(r"[\s,]+|\band\b")


def _spelt_out(text: str) -> str:
    """The accepted spelling of a duration written in words ('3 days' -> '3d', '36 hours' ->
    '36h', '1 day 12 hours' -> '1d12h', '2 weeks' -> '14d'), or '' when it is not one."""
    lowered = text.strip().lower()
    pairs = _SPELT.findall(lowered)
    if not pairs or _JOINERS.sub("", _SPELT.sub("", lowered)):
        return ""
    total: dict[str, float] = {}
    for number, unit in pairs:
        if unit not in _UNITS:
            return ""
        letter, times = _UNITS[unit]
        total[letter] = total.get(letter, 0.0) + float(number) * times
    return "".join(f"{total[u]:g}{u}" for u in "dhm" if u in total)

"""The rules a stored fact must meet, one each, shared by every way values come in
(recorded imports, the export format, the collectors, the service's arguments).

Each rule returns the problem as text (None when the value is fine) or raises ValueError
with it, so that callers can say where the value was: a file and row, a field, an option.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone

from costsched import catalog
from costsched.lazy import pandas as pd
from costsched.model import InvalidInput

ISO_EXAMPLE = "2020-02-18T00:00:00Z"
ZONED = f"ISO 8601 with a time zone, e.g. {ISO_EXAMPLE}"
# No cloud sold GPU hours before 2000; a time past 2100 is a typo or a placeholder, and
# both stay far inside pandas' nanosecond range (1677-2262).
EARLIEST = datetime(2000, 1, 1, tzinfo=timezone.utc)
LATEST = datetime(2100, 1, 1, tzinfo=timezone.utc)
SUPPORTED_RANGE = f"a time from {EARLIEST:%Y-%m-%d} to {LATEST:%Y-%m-%d}"
# The largest GPU instance of any cloud has 16 GPUs.
MAX_GPUS = 16

_DATE = r"\d{4}-\d{2}-\d{2}"
_CLOCK = r"[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?"
_ZONE = r"(Z|[+-]\d{2}(:?\d{2})?)"
_ZONED_TEXT = re.compile(f"{_DATE}{_CLOCK}{_ZONE}")
# The service's time arguments may leave out the clock and the zone (meaning UTC).
_ARGUMENT_TEXT = re.compile(f"{_DATE}({_CLOCK}{_ZONE}?)?")


def zoned_time(value: object) -> pd.Timestamp:
    """A UTC timestamp from ISO 8601 text with a time zone or an aware datetime;
    ValueError saying what is accepted otherwise (no guessing of other layouts)."""
    if isinstance(value, datetime):  # pd.Timestamp too
        if value.tzinfo is None:
            raise ValueError(f"{value.isoformat()!r}: no time zone: expected {ZONED}")
        return in_range(pd.Timestamp(value), value)
    text = str(value).strip()
    if not isinstance(value, str) or not _ZONED_TEXT.fullmatch(text):
        raise ValueError(f"{value!r}: expected {ZONED}")
    return in_range(_parse(text, value), value)


def argument_time(value: str) -> pd.Timestamp:
    """A UTC timestamp from ISO 8601 text ('2020-03-01T00:00Z', '2020-03-01'; no zone
    means UTC); ValueError otherwise."""
    text = value.strip()
    if not _ARGUMENT_TEXT.fullmatch(text):
        raise ValueError(f"{value!r}: expected an ISO 8601 time such as 2020-03-01T00:00Z")
    return in_range(_parse(text, value), value)


def _parse(text: str, original: object) -> pd.Timestamp:
    try:
        ts = pd.Timestamp(text.replace(" ", "T", 1))
    except (ValueError, OverflowError):  # e.g. month 13, or past pandas' range
        raise ValueError(f"{original!r}: not a date and time of the calendar: expected an "
                         "ISO 8601 time such as 2020-03-01T00:00Z") from None
    return ts.tz_localize("UTC") if ts.tzinfo is None else ts.tz_convert("UTC")


def in_range(ts: pd.Timestamp, shown: object = None) -> pd.Timestamp:
    """`ts` in UTC when in the supported range; ValueError naming `shown` (default: `ts`)
    otherwise."""
    ts = ts.tz_convert("UTC")
    if not EARLIEST <= ts <= LATEST:
        shown = ts.isoformat() if shown is None else shown
        raise ValueError(f"{str(shown)!r}: expected {SUPPORTED_RANGE}")
    return ts.as_unit("ns")


def as_time(value: datetime | str | None, name: str = "at") -> datetime:
    """An aware UTC time from a datetime or ISO 8601 text ('2020-03-01T00:00Z',
    '2020-03-01'; no zone means UTC), in the supported range; None or 'now' is now."""
    if value is None or value == "now":
        return datetime.now(timezone.utc)
    if type(value) is datetime:  # a plain one: no pandas needed (status, report)
        when = (value.replace(tzinfo=timezone.utc) if value.tzinfo is None
                else value.astimezone(timezone.utc))
        if not EARLIEST <= when <= LATEST:
            raise InvalidInput(f"{name} {when.isoformat()!r}: expected {SUPPORTED_RANGE}")
        return when
    try:
        if isinstance(value, datetime):
            ts = in_range(pd.Timestamp(value).tz_localize("UTC") if value.tzinfo is None
                          else pd.Timestamp(value))
        else:
            ts = argument_time(str(value))
    except ValueError as exc:
        raise InvalidInput(f"{name} {exc}") from None
    return ts.to_pydatetime()


def zoned_times(values: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Vectorized `zoned_time`: (UTC times with NaT where bad, the problem per row or None).
    Aware datetime columns (Parquet) are taken as they are; naive ones have no zone."""
    problems = pd.Series([None] * len(values), index=values.index, dtype=object)
    if pd.api.types.is_datetime64_any_dtype(values):
        if getattr(values.dtype, "tz", None) is None:
            problems[:] = f"no time zone: expected {ZONED}"
            return pd.Series(pd.NaT, index=values.index, dtype="datetime64[ns, UTC]"), problems
        times = values.dt.tz_convert("UTC")
    else:
        text = values.astype(str).str.strip()
        shaped = text.str.fullmatch(_ZONED_TEXT.pattern) & values.map(
            lambda v: isinstance(v, str))
        problems[~shaped] = f"expected {ZONED}"
        times = pd.to_datetime(text.where(shaped).str.replace(" ", "T", n=1), utc=True,
                               errors="coerce", format="ISO8601")
        problems[shaped & times.isna()] = "not a valid date and time"
    outside = times.notna() & ((times < EARLIEST) | (times > LATEST))
    problems[outside] = f"expected {SUPPORTED_RANGE}"
    times = times.where(problems.isna())
    return times.astype("datetime64[ns, UTC]"), problems


def offering_problem(cloud: str, instance_type: str, gpu_model: object,
                     gpu_count: object) -> str | None:
    """What is wrong with an offering's GPUs: a GPU model of the catalog, a whole count in
    1..MAX_GPUS, and for an instance type the catalog knows, the catalog's model and count."""
    try:
        model = catalog.gpu_model_name(str(gpu_model))
    except InvalidInput as exc:
        return str(exc)
    count = whole_number(gpu_count)
    if count is None or not 1 <= count <= MAX_GPUS:
        return f"gpu_count {gpu_count!r}: expected a whole number from 1 to {MAX_GPUS}"
    known = catalog.lookup(cloud, instance_type)
    if known is not None and (model, count) != (known["gpu_model"], int(known["gpu_count"])):
        return (f"{cloud} {instance_type} has {int(known['gpu_count'])}x{known['gpu_model']} "
                f"in the catalog, not {count}x{model}")
    return None


def whole_number(value: object) -> int | None:
    """An int from a whole number (1, 1.0, '1'), else None."""
    try:
        number = float(str(value).strip())
    except ValueError:
        return None
    if not math.isfinite(number) or number != int(number):
        return None
    return int(number)


def identifier_problem(name: str, value: object, *, empty: bool = False) -> str | None:
    """A name (region, zone, instance type...) must be text without spaces or control
    characters; `empty`: "" is allowed (a regional price has no zone)."""
    text = value if isinstance(value, str) else None
    if text is None or (not text and not empty) or re.search(r"[\s\x00-\x1f\x7f-\x9f]", text):
        return f"{name} {value!r}: expected a name without spaces or control characters"
    return None


def region_problem(cloud: str, region: object) -> str | None:
    """Whether `region` is one of `cloud`'s regions (`costsched.clouds` knows them)."""
    from costsched import clouds

    found = clouds.CLOUDS.get(cloud)
    return None if found is None else found.region_problem(region)


def zone_problem(cloud: str, region: object, zone: object) -> str | None:
    """Whether `zone` ("" for a regional price) is a zone of `region` on `cloud`."""
    from costsched import clouds

    found = clouds.CLOUDS.get(cloud)
    if found is None or not isinstance(region, str) or not isinstance(zone, str):
        return None
    return found.zone_problem(region, zone)

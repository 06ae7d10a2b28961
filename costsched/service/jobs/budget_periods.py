"""A budget's period (`budgets.*.period`): where a day's or a month's began and ends, in
UTC; a total has neither."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone


def period_start(period: str, at: datetime) -> datetime | None:
    """Where a budget's period began (UTC): today's midnight, the month's first, or None."""
    at = at.astimezone(timezone.utc)
    if period == "day":
        return at.replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "month":
        return at.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    return None


def period_end(period: str, at: datetime) -> datetime | None:
    """Where a budget's period ends (UTC): the next midnight, the next month's first, or
    None (a total has no end)."""
    start = period_start(period, at)
    if start is None:
        return None
    if period == "day":
        return start + timedelta(days=1)
    return (start + timedelta(days=32)).replace(day=1)

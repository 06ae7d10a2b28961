"""Sums and durations on plain rows that agree to the last bit with the frames the report
used to compute on (its API's frames are built from these rows): a group's sum is
compensated (Kahan) as a frame's group sum is, a column's sum pairwise as an array's, and
a duration's seconds are its whole seconds plus its fraction."""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from datetime import timedelta
from typing import TypeVar

from costsched.costs import array_sum

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)


def group_sum(values: Iterable[float], *, nan_when_none: bool = False) -> float:
    """The compensated sum of `values`, NaN left out (a group's sum of a frame); 0 when
    none is known, or NaN with `nan_when_none` (`min_count=1`)."""
    total = compensation = 0.0
    known = 0
    for value in values:
        if value != value:
            continue
        known += 1
        y = value - compensation
        t = total + y
        compensation = t - total - y
        if compensation != compensation:  # an infinite value
            compensation = 0.0
        total = t
    return math.nan if nan_when_none and not known else total


def column_sum(values: Sequence[float], *, nan_when_none: bool = False) -> float:
    """The pairwise sum of `values` with NaN left out (a frame column's sum); NaN with
    `nan_when_none` when none is known."""
    if nan_when_none and all(v != v for v in values):
        return math.nan
    return array_sum(values)


def array_total(values: Sequence[float]) -> float:
    """The pairwise sum of `values`, NaN when one is (an array's sum)."""
    if any(v != v for v in values):
        return math.nan
    return array_sum(values)


def by(rows: Iterable[T], key: Callable[[T], K]) -> dict[K, list[T]]:
    """`rows` grouped by `key`, each group in their order, groups in order of first
    appearance."""
    out: dict[K, list[T]] = {}
    for row in rows:
        out.setdefault(key(row), []).append(row)
    return out


def seconds(span: timedelta) -> float:
    """The seconds of `span`: its whole seconds plus its fraction."""
    return float(span.days * 86_400 + span.seconds) + span.microseconds / 1e6


def nan_to_none(value: object) -> object:
    """NaN as None (JSON's null); any other value as it is."""
    return None if isinstance(value, float) and value != value else value

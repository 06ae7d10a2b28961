"""Sums and durations on plain rows that agree to the last bit with the frames the report
used to compute on (its API's frames are built from these rows): a frame's group sums
(`group_sums`: rows already in the groups' order and no NaN, each group's first value plus
the pairwise sum of the rest, as the frame reduces segments; else compensated, Kahan), a
column's sum pairwise as an array's, and a duration's seconds its whole seconds plus its
fraction."""

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


def group_sums(keys: Sequence[K], *columns: Sequence[float], sort: bool = True,
               nan_when_none: bool = False) -> dict[K, list[float]]:
    """{key: the sum of each of `columns` over its rows}, as a frame grouped by `keys`
    (`sort`: groups in key order, else in order of first appearance) sums the columns
    together; `nan_when_none`: NaN for a group with no known value (`min_count=1`)."""
    order = sorted(set(keys)) if sort else list(dict.fromkeys(keys))  # type: ignore[type-var]
    rank = {k: i for i, k in enumerate(order)}
    ids = [rank[k] for k in keys]
    segments = all(a <= b for a, b in zip(ids, ids[1:], strict=False)) and not any(
        v != v for column in columns for v in column)
    rows: dict[K, list[int]] = {k: [] for k in order}
    for i, k in enumerate(keys):
        rows[k].append(i)
    out = {}
    for k in order:
        sums = []
        for column in columns:
            mine = [column[i] for i in rows[k]]
            if segments:
                sums.append(mine[0] + array_sum(mine[1:]) if len(mine) > 1 else mine[0])
            else:
                sums.append(group_sum(mine, nan_when_none=nan_when_none))
        out[k] = sums
    return out


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

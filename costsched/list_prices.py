"""On-demand reference prices: the catalog's list prices as of a time, and each row's
on-demand reference (its own on-demand price, else the list price). Catalog facts only, no
store: the planner's baseline and the price checks read them, `costsched.prices` puts them
beside every price."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from costsched import catalog
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.model import utc

TYPE_KEY = ["cloud", "region", "instance_type", "os"]  # what a list price is of


def listed_on_demand(at: datetime | None = None) -> pd.DataFrame:
    """The catalog's on-demand list prices as observation rows, one per (cloud, region, type):
    the newest listed at or before `at` (default: the newest of all), else the earliest
    listed (a list price newer than `at` is a better guess than none)."""
    if at is None:  # asked for every file an import validates: computed once per catalog
        return _newest()[0].copy()
    return _listed_at(at).copy()


def _listed_at(at: datetime) -> pd.DataFrame:
    """`listed_on_demand(at)`, kept for the last time asked for (not to be changed)."""
    observed, when = catalog.on_demand_observations(), utc(at)
    kept = _AT[0] if _AT else None
    if kept is None or kept[0] is not observed or kept[1] != when:  # a plan asks twice
        kept = (observed, when, _listed(at))
        _AT[:] = [kept]
    return kept[2]


# Each cache holds one tuple, replaced whole and read once into a local: a daemon's threads
# (its watch, its passes) ask for other times, and one's answer is never another's.
# [(the catalog frame, its newest list prices, the same by type)]: recomputed when the
# catalog frame is another object.
_NEWEST: list = []
# [(the catalog frame, a time, the list prices as of it)]: the last time asked for.
_AT: list = []


def _newest() -> tuple[pd.DataFrame, dict[tuple, float]]:
    observed = catalog.on_demand_observations()
    kept = _NEWEST[0] if _NEWEST else None
    if kept is None or kept[0] is not observed:
        listed = _listed(None)
        kept = (observed, listed, _prices_by_type(listed))
        _NEWEST[:] = [kept]
    return kept[1], kept[2]


def _listed(at: datetime | None) -> pd.DataFrame:
    """Per (cloud, region, type, os), the newest list price held by `at` (all when None),
    in the order they were listed; then, for a type none held by then, its earliest."""
    listed = catalog.on_demand_observations().sort_values("effective_at", kind="stable")
    held = (None if at is None
            else (listed["effective_at"] <= pd.Timestamp(utc(at))).to_numpy(dtype=bool))
    last: dict[tuple, int] = {}  # a few thousand rows: positions by key, not frame passes
    first: dict[tuple, int] = {}
    for position, key in enumerate(type_keys(listed)):
        first.setdefault(key, position)
        if held is None or held[position]:
            last[key] = position
    earliest = sorted(p for key, p in first.items() if key not in last)
    return listed.take(sorted(last.values()) + earliest).reset_index(drop=True)


def type_keys(frame: pd.DataFrame) -> Iterator[tuple]:
    """Each row's (cloud, region, instance_type, os), a missing value as None (so that
    missing matches missing, as pandas's keys do)."""
    columns = [frame[c].to_numpy(dtype=object, na_value=None).tolist() for c in TYPE_KEY]
    return zip(*columns, strict=True)


def _prices_by_type(frame: pd.DataFrame) -> dict[tuple, float]:
    """`usd_per_hour` by `type_keys` (of rows that share one, the last)."""
    return dict(zip(type_keys(frame), frame["usd_per_hour"].tolist(), strict=True))


def on_demand_reference(frame: pd.DataFrame, *, at: datetime | None = None) -> pd.Series:
    """Each row's on-demand reference price (spot discounts, baselines, price checks): the
    on-demand price of the same (cloud, region, type, os) in `frame` (the newest; of equally
    new ones the highest), else the catalog's list price as of `at` (`listed_on_demand`),
    else NaN."""
    if frame.empty:
        return pd.Series(np.nan, index=frame.index, dtype=float)
    price = pd.to_numeric(frame["usd_per_hour"], errors="coerce")
    od = frame.assign(usd_per_hour=price)[(frame["market"] == "on_demand") & price.notna()]
    order = [c for c in ("effective_at", "usd_per_hour") if c in od]
    own = _prices_by_type(od.sort_values(order, kind="stable"))  # the last: newest, highest
    listed = _newest()[1] if at is None else _prices_by_type(_listed_at(at))
    keys = list(type_keys(frame))
    from_frame = np.array([own.get(k, np.nan) for k in keys], dtype=float)
    from_catalog = np.array([listed.get(k, np.nan) for k in keys], dtype=float)
    return pd.Series(np.where(np.isnan(from_frame), from_catalog, from_frame), index=frame.index)

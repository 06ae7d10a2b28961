"""On-demand reference prices: the catalog's list prices as of a time, and each row's
on-demand reference (its own on-demand price, else the list price). Catalog facts only, no
store: the planner's baseline and the price checks read them, `costsched.prices` puts them
beside every price."""

from __future__ import annotations

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
    observed, when = catalog.on_demand_observations(), utc(at)
    if not _AT or _AT[0] is not observed or _AT[1] != when:  # a plan asks twice for its time
        _AT[:] = [observed, when, _listed(at)]
    return _AT[2].copy()


# (the catalog frame, its newest list prices, the same by type): recomputed when the
# catalog frame is another object.
_NEWEST: list = []
# (the catalog frame, a time, the list prices as of it): the last time asked for.
_AT: list = []


def _newest() -> tuple[pd.DataFrame, pd.Series]:
    observed = catalog.on_demand_observations()
    if not _NEWEST or _NEWEST[0] is not observed:
        listed = _listed(None)
        _NEWEST[:] = [observed, listed, listed.set_index(TYPE_KEY)["usd_per_hour"]]
    return _NEWEST[1], _NEWEST[2]


def _listed(at: datetime | None) -> pd.DataFrame:
    listed = catalog.on_demand_observations().sort_values("effective_at", kind="stable")
    held = listed if at is None else listed[listed["effective_at"] <= pd.Timestamp(utc(at))]
    chosen = pd.concat([held.drop_duplicates(TYPE_KEY, keep="last"),
                        listed.drop_duplicates(TYPE_KEY, keep="first")])
    return chosen.drop_duplicates(TYPE_KEY, keep="first").reset_index(drop=True)


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
    od = od.sort_values(order, kind="stable")
    own = od.drop_duplicates(TYPE_KEY, keep="last").set_index(TYPE_KEY)["usd_per_hour"]
    listed = (_newest()[1] if at is None
              else listed_on_demand(at).set_index(TYPE_KEY)["usd_per_hour"])
    keys = pd.MultiIndex.from_frame(frame[TYPE_KEY])
    from_frame = own.reindex(keys).to_numpy(dtype=float)
    from_catalog = listed.reindex(keys).to_numpy(dtype=float)
    return pd.Series(np.where(np.isnan(from_frame), from_catalog, from_frame), index=frame.index)

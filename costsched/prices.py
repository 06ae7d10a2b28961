"""Prices as of a time: the store's observations, with the catalog's list prices as fallback."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np
import pandas as pd

from costsched import catalog
from costsched.model import utc
from costsched.passes import frozen, memo
from costsched.store import OBSERVATION_COLUMNS, PriceStore

_TYPE_KEY = ["cloud", "region", "instance_type", "os"]


def prices_at(
    store: PriceStore | None,
    at: datetime,
    *,
    clouds: Sequence[str] = (),
    regions: Sequence[str] = (),
    gpu_models: Sequence[str] = (),
    markets: Sequence[str] = (),
    instance_types: Sequence[str] = (),
    os: str = "linux",
    use_catalog: bool = True,
    include_cpu: bool = False,
) -> pd.DataFrame:
    """Every matching offering's price at `at`, cheapest per GPU-hour first (CPU instance
    types, gpu_count 0, only with `include_cpu`: their usd_per_gpu_hour is NaN, last).

    Offerings without an on-demand observation in the store get the catalog's list price
    (source `catalog ...`) when it held by `at` and the type was not retired by then; a cloud
    without any spot observation among those asked for gets the bundled spot snapshot's
    prices that held by `at` (source `catalog ... spot snapshot: ...`, `effective_at` its
    month: its age shows).
    Columns: the offering's, usd_per_hour, effective_at, source, usd_per_gpu_hour,
    on_demand_usd_per_hour (`on_demand_reference` as of `at`) and spot_discount
    (1 - spot / on-demand).
    """
    filters = dict(cloud=list(clouds), region=list(regions), gpu_model=list(gpu_models),
                   market=list(markets), instance_type=list(instance_types), os=[os])
    where = None if store is None else store.url
    return memo(("prices_at", where, utc(at), frozen(filters), use_catalog, include_cpu),
                lambda: _prices_at(store, at, filters, use_catalog, include_cpu))


def _prices_at(store: PriceStore | None, at: datetime, filters: dict[str, list[str]],
               use_catalog: bool, include_cpu: bool = False) -> pd.DataFrame:
    stored = store.as_of(at, **filters) if store is not None else pd.DataFrame()
    if not include_cpu and not stored.empty:
        stored = stored[stored["gpu_count"] > 0]
    frames = [stored] if not stored.empty else []
    if use_catalog:
        listed = _catalog_rows(at, **filters)
        if include_cpu:
            listed = pd.concat([listed, _catalog_cpu_rows(at, **filters)], ignore_index=True)
        when = pd.Timestamp(utc(at))
        listed = listed[(listed["effective_at"] <= when) & ~catalog.retired_mask(listed, when)]
        if not stored.empty:
            have = stored[stored["market"] == "on_demand"][_TYPE_KEY].drop_duplicates()
            listed = _anti_join(listed, have, _TYPE_KEY)
        frames.append(listed)
        frames.append(_spot_snapshot(at, stored, include_cpu, **filters))
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame(columns=[*OBSERVATION_COLUMNS, "usd_per_gpu_hour",
                                     "on_demand_usd_per_hour", "spot_discount"])
    frame = pd.concat(frames, ignore_index=True)
    frame = frame.drop(columns=["offering_id"], errors="ignore")
    frame["usd_per_gpu_hour"] = frame["usd_per_hour"] / frame["gpu_count"].where(
        frame["gpu_count"] > 0)
    frame["on_demand_usd_per_hour"] = on_demand_reference(frame, at=at)
    frame["spot_discount"] = np.where(
        frame["market"] == "spot", 1 - frame["usd_per_hour"] / frame["on_demand_usd_per_hour"],
        np.nan,
    )
    return frame.sort_values(["usd_per_gpu_hour", "cloud", "region", "zone"],
                             ignore_index=True)


def _catalog_rows(at: datetime, **filters: list[str]) -> pd.DataFrame:
    listed = listed_on_demand(at)
    for name, values in filters.items():
        if values:
            listed = listed[listed[name].isin(values)]
    return listed


def _catalog_cpu_rows(at: datetime, **filters: list[str]) -> pd.DataFrame:
    """The catalog's newest on-demand list prices of CPU instance types held by `at`."""
    listed = catalog.on_demand_observations(include_cpu=True)
    listed = listed[listed["gpu_count"] == 0].sort_values("effective_at", kind="stable")
    listed = listed[listed["effective_at"] <= pd.Timestamp(utc(at))]
    for name, values in filters.items():
        if values:
            listed = listed[listed[name].isin(values)]
    return listed.drop_duplicates(_TYPE_KEY, keep="last")


def _spot_snapshot(at: datetime, stored: pd.DataFrame, include_cpu: bool = False,
                   **filters: list[str]) -> pd.DataFrame:
    """The bundled spot prices that held by `at`, for the clouds of which the store holds no
    spot observation among those asked for: a cloud's collected spot prices are used alone,
    never mixed with older snapshot prices of its other types or regions."""
    snapshot = catalog.spot_observations(include_cpu)
    for name, values in filters.items():
        if values:
            snapshot = snapshot[snapshot[name].isin(values)]
    when = pd.Timestamp(utc(at))
    snapshot = snapshot[(snapshot["effective_at"] <= when)
                        & ~catalog.retired_mask(snapshot, when)]
    if not stored.empty:
        collected = stored.loc[stored["market"] == "spot", "cloud"].unique()
        snapshot = snapshot[~snapshot["cloud"].isin(collected)]
    # A snapshot listed for several months: the newest that held by `at`.
    return (snapshot.sort_values("effective_at", kind="stable")
            .drop_duplicates(["cloud", "region", "zone", "instance_type"], keep="last"))


def listed_on_demand(at: datetime | None = None) -> pd.DataFrame:
    """The catalog's on-demand list prices as observation rows, one per (cloud, region, type):
    the newest listed at or before `at` (default: the newest of all), else the earliest
    listed (a list price newer than `at` is a better guess than none)."""
    if at is None:  # asked for every file an import validates: computed once per catalog
        return _newest()[0].copy()
    return _listed(at)


# (the catalog frame, its newest list prices, the same by type): recomputed when the
# catalog frame is another object.
_NEWEST: list = []


def _newest() -> tuple[pd.DataFrame, pd.Series]:
    observed = catalog.on_demand_observations()
    if not _NEWEST or _NEWEST[0] is not observed:
        listed = _listed(None)
        _NEWEST[:] = [observed, listed, listed.set_index(_TYPE_KEY)["usd_per_hour"]]
    return _NEWEST[1], _NEWEST[2]


def _listed(at: datetime | None) -> pd.DataFrame:
    listed = catalog.on_demand_observations().sort_values("effective_at", kind="stable")
    held = listed if at is None else listed[listed["effective_at"] <= pd.Timestamp(utc(at))]
    chosen = pd.concat([held.drop_duplicates(_TYPE_KEY, keep="last"),
                        listed.drop_duplicates(_TYPE_KEY, keep="first")])
    return chosen.drop_duplicates(_TYPE_KEY, keep="first").reset_index(drop=True)


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
    own = od.drop_duplicates(_TYPE_KEY, keep="last").set_index(_TYPE_KEY)["usd_per_hour"]
    listed = (_newest()[1] if at is None
              else listed_on_demand(at).set_index(_TYPE_KEY)["usd_per_hour"])
    keys = pd.MultiIndex.from_frame(frame[_TYPE_KEY])
    from_frame = own.reindex(keys).to_numpy(dtype=float)
    from_catalog = listed.reindex(keys).to_numpy(dtype=float)
    return pd.Series(np.where(np.isnan(from_frame), from_catalog, from_frame), index=frame.index)


def _anti_join(left: pd.DataFrame, right: pd.DataFrame, on: list[str]) -> pd.DataFrame:
    if right.empty:
        return left
    merged = left.merge(right, on=on, how="left", indicator=True)
    return left[(merged["_merge"] == "left_only").to_numpy()]

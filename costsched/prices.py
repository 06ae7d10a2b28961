"""Prices as of a time: the store's observations, with the catalog's list prices as fallback
(`costsched.list_prices`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import numpy as np
import pandas as pd

from costsched import catalog
from costsched.list_prices import TYPE_KEY, listed_on_demand, on_demand_reference
from costsched.model import utc
from costsched.passes import frozen, memo
from costsched.store import OBSERVATION_COLUMNS, PriceStore


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
            have = stored[stored["market"] == "on_demand"][TYPE_KEY].drop_duplicates()
            listed = _anti_join(listed, have, TYPE_KEY)
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
    return listed.drop_duplicates(TYPE_KEY, keep="last")


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


def _anti_join(left: pd.DataFrame, right: pd.DataFrame, on: list[str]) -> pd.DataFrame:
    if right.empty:
        return left
    merged = left.merge(right, on=on, how="left", indicator=True)
    return left[(merged["_merge"] == "left_only").to_numpy()]

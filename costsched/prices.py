"""Prices as of a time: the store's observations, with the catalog's list prices as fallback
(`costsched.list_prices`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime

from costsched import bundled_prices, catalog
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.list_prices import TYPE_KEY, listed_on_demand, on_demand_reference
from costsched.model import utc
from costsched.passes import frozen, memo
from costsched.spot_market import (
    PARTIAL,
    SPOT_OFFERING,
    bundled_place_holds,
    bundled_spot_holds,
)
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
    superseded: bool = False,
) -> pd.DataFrame:
    """Every matching offering's price at `at`, cheapest per GPU-hour first (CPU instance
    types, gpu_count 0, only with `include_cpu`: their usd_per_gpu_hour is NaN, last).

    The store's prices and the bundled ones (the catalog's list prices, source `catalog
    ...`, and its spot prices, source `catalog ... spot snapshot: ...`, each dated: its age
    shows) combine, the newer winning:

    - on-demand, per (cloud, region, type, os): the store's price, unless the bundled list
      price is newer;
    - spot: a cloud's bundled prices no newer than its newest stored spot price (of any
      offering, whatever is asked: `costsched.spot_market`) are left out (a collection
      reads every type of a cloud: what it did not find is not offered); at each offering
      (cloud, region, zone, type: a zone's price and its region's are two offerings, each
      kept), the newer of the store's and the bundled price.

    Bundled prices hold from their date while the type is not retired. A bundled price
    superseded by a change of its type's price since (`bundled_prices.superseded`) is left
    out, unless `superseded`: then it is kept after the current ones, marked in column
    `superseded`.
    Columns: the offering's, usd_per_hour, effective_at, source, superseded,
    usd_per_gpu_hour, on_demand_usd_per_hour (`on_demand_reference` as of `at`) and
    spot_discount (1 - spot / on-demand).
    """
    filters = dict(cloud=list(clouds), region=list(regions), gpu_model=list(gpu_models),
                   market=list(markets), instance_type=list(instance_types), os=[os])
    where = None if store is None else store.url
    key = (where, utc(at), frozen(filters), use_catalog, include_cpu)
    return memo(("prices_at", *key, superseded),
                lambda: _prices_at(at, memo(("price parts", *key), lambda: _parts(
                    store, at, filters, use_catalog, include_cpu), shared=True), superseded))


def _parts(store: PriceStore | None, at: datetime, filters: dict[str, list[str]],
           use_catalog: bool, include_cpu: bool = False) -> list[pd.DataFrame]:
    """The prices `prices_at` combines, each marked `superseded`, before the superseded
    ones are left out (the same for both: in a pass, a plan, which keeps them, and
    launch's market, which does not, read them once)."""
    stored = store.as_of(at, **filters) if store is not None else pd.DataFrame()
    if not include_cpu and not stored.empty:
        stored = stored[stored["gpu_count"] > 0]
    frames = []
    if use_catalog:
        listed = _catalog_rows(at, **filters)
        if include_cpu:
            listed = pd.concat([listed, _catalog_cpu_rows(at, **filters)], ignore_index=True)
        when = pd.Timestamp(utc(at))
        listed = listed[(listed["effective_at"] <= when) & ~catalog.retired_mask(listed, when)]
        snapshot = _spot_snapshot(at, spot_markets(store, at), stored, include_cpu,
                                  **filters)
        if not stored.empty:
            listed, stored = _newer_on_demand(listed, stored)
            if not snapshot.empty:  # the store's spot prices the snapshot's newer ones replace
                stored = _anti_join(stored, snapshot[SPOT_REPLACED], SPOT_REPLACED,
                                    stored["market"] == "spot")
        frames = [_marked(listed, when), _marked(snapshot, when)]
    if not stored.empty:
        frames.insert(0, stored.assign(superseded=False))
    return frames


def _prices_at(at: datetime, parts: list[pd.DataFrame], keep_superseded: bool = False
               ) -> pd.DataFrame:
    """`prices_at` of the `parts` read (`_parts`; read only)."""
    frames = [f for f in parts if not f.empty]
    if not keep_superseded:
        frames = [f[~f["superseded"]] for f in frames]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return pd.DataFrame(columns=[*OBSERVATION_COLUMNS, "superseded", "usd_per_gpu_hour",
                                     "on_demand_usd_per_hour", "spot_discount"])
    frame = pd.concat(frames, ignore_index=True)
    frame = frame.drop(columns=["offering_id"], errors="ignore")
    frame["superseded"] = frame["superseded"].astype(bool)
    frame["usd_per_gpu_hour"] = frame["usd_per_hour"] / frame["gpu_count"].where(
        frame["gpu_count"] > 0)
    frame["on_demand_usd_per_hour"] = on_demand_reference(frame, at=at)
    frame["spot_discount"] = np.where(
        frame["market"] == "spot", 1 - frame["usd_per_hour"] / frame["on_demand_usd_per_hour"],
        np.nan,
    )
    return frame.sort_values(["superseded", "usd_per_gpu_hour", "cloud", "region", "zone"],
                             ignore_index=True)


# A spot offering's place by region (a type stored in zones of a region is listed there):
# how much of a cloud's spot market an import lists (`service.prices.spot_readings`).
SPOT_PLACE = ["cloud", "region", "instance_type", "os"]
# Where a stored and a bundled spot price replace each other: the offering (its zone too),
# as billing prices it (`spot_market.SPOT_OFFERING`).
SPOT_REPLACED = [*SPOT_OFFERING, "os"]
SOURCE_CHARACTERS = 128  # the store's limit on a price's source


def partial_source(source: str) -> str:
    """`source` marked as a partial update's (`PARTIAL`), once."""
    return str(source) if str(source).startswith(PARTIAL) else \
        (PARTIAL + str(source))[:SOURCE_CHARACTERS]


def _marked(bundled: pd.DataFrame, when: pd.Timestamp) -> pd.DataFrame:
    """Bundled rows with `superseded` (`bundled_prices.superseded` at `when`)."""
    at = when.to_pydatetime()
    flags = [bundled_prices.superseded(c, t, m, e.to_pydatetime(), at) is not None
             for c, t, m, e in zip(*_values(bundled, "cloud", "instance_type", "market"),
                                   bundled["effective_at"], strict=True)]
    return bundled.assign(superseded=pd.Series(flags, index=bundled.index, dtype=bool))


def _values(frame: pd.DataFrame, *columns: str) -> list[list]:
    """Each column's values as a list (a pass over a list, not over a frame's column)."""
    return [frame[c].to_numpy(dtype=object).tolist() for c in columns]


def _newer_on_demand(listed: pd.DataFrame, stored: pd.DataFrame
                     ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per (cloud, region, type, os) the newer on-demand price of the list and the store's
    (the store's when as new): (the list prices kept, the store's rows kept)."""
    own = stored[stored["market"] == "on_demand"]
    if own.empty or listed.empty:
        return listed, stored
    newest = own.groupby(TYPE_KEY)["effective_at"].max().rename("stored_at").reset_index()
    merged = listed.merge(newest, on=TYPE_KEY, how="left")
    newer = (merged["stored_at"].isna() | (merged["effective_at"] > merged["stored_at"])
             ).to_numpy()
    replaced = listed[newer & merged["stored_at"].notna().to_numpy()][TYPE_KEY]
    return listed[newer], _anti_join(stored, replaced, TYPE_KEY,
                                     stored["market"] == "on_demand")


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


def spot_markets(store: PriceStore | None, at: datetime) -> dict[str, datetime]:
    """The clouds whose spot market is the store's at `at` (`costsched.spot_market`), each
    with its newest stored spot price: read over the whole store, whatever offerings a
    caller asks about."""
    return {} if store is None else store.spot_markets(at)


def _spot_snapshot(at: datetime, stored_markets: Mapping[str, datetime],
                   stored: pd.DataFrame, include_cpu: bool = False,
                   **filters: list[str]) -> pd.DataFrame:
    """The bundled spot prices that held by `at`, the newest of each place, less those of a
    cloud whose spot market the store holds (`stored_markets`, `spot_market.
    bundled_spot_holds`), and less those no newer than a price `stored` at their place
    (`SPOT_REPLACED`, zone too; `spot_market.bundled_place_holds`: an import as a
    partial update replaces the bundled prices of its own places only). A cloud's
    stored spot prices are never mixed with older snapshot prices of its other types or
    regions."""
    snapshot = catalog.spot_observations(include_cpu)
    for name, values in filters.items():
        if values:
            snapshot = snapshot[snapshot[name].isin(values)]
    when = pd.Timestamp(utc(at))
    snapshot = snapshot[(snapshot["effective_at"] <= when)
                        & ~catalog.retired_mask(snapshot, when)]
    # A place priced on several days: the newest that held by `at`.
    snapshot = (snapshot.sort_values("effective_at", kind="stable")
                .drop_duplicates(["cloud", "region", "zone", "instance_type"], keep="last"))
    if stored_markets and not snapshot.empty:
        holds = [bundled_spot_holds(c, e.to_pydatetime(), stored_markets)
                 for c, e in zip(snapshot["cloud"], snapshot["effective_at"], strict=True)]
        snapshot = snapshot[pd.Series(holds, index=snapshot.index, dtype=bool)]
    spot = stored[stored["market"] == "spot"] if not stored.empty else stored
    if not spot.empty and not snapshot.empty:
        updated = spot.groupby(SPOT_REPLACED)["effective_at"].max().rename("stored_at")
        newest = snapshot.join(updated, on=SPOT_REPLACED)["stored_at"]
        holds = [bundled_place_holds(e.to_pydatetime(), None if pd.isna(t) else t
                                     .to_pydatetime())
                 for e, t in zip(snapshot["effective_at"], newest, strict=True)]
        snapshot = snapshot[pd.Series(holds, index=snapshot.index, dtype=bool)]
    return snapshot


def _anti_join(left: pd.DataFrame, right: pd.DataFrame, on: list[str],
               among: pd.Series | None = None) -> pd.DataFrame:
    """`left` less its rows (of those `among` marks, default all) whose `on` columns match
    a row of `right`."""
    if right.empty or left.empty:
        return left
    found = set(_keys(right, on))  # a few hundred rows: a set, not a merge
    matched = np.fromiter((key in found for key in _keys(left, on)), dtype=bool,
                          count=len(left))
    if among is not None:
        matched = matched & among.to_numpy(dtype=bool)
    return left[~matched]


def _keys(frame: pd.DataFrame, on: list[str]) -> Iterator[tuple]:
    """The `on` columns of each row, as a tuple (a missing value as None, as a merge
    matches it)."""
    columns = [frame[c].to_numpy(dtype=object, na_value=None).tolist() for c in on]
    return zip(*columns, strict=True)

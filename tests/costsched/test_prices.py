"""The one on-demand reference rule, and prices as of a time with the catalog's fallback."""

from __future__ import annotations

import math
from datetime import datetime, timezone
from importlib import resources

import pandas as pd
import pytest

from costsched import catalog
from costsched.prices import (
    listed_on_demand,
    on_demand_reference,
    partial_source,
    prices_at,
)
from costsched.store import PriceStore
from price_collectors.base import rows_frame

T = datetime(2026, 11, 1, tzinfo=timezone.utc)
TYPE = ("aws", "us-east-1", "p3.2xlarge")


def row(price: float, market: str = "spot", *, region: str = "us-east-1",
        instance_type: str = "p3.2xlarge", os: str = "linux", at: datetime = T) -> tuple:
    spec = catalog.require("aws", instance_type)
    return ("aws", region, "us-east-1a" if market == "spot" else "", instance_type, market,
            os, spec["gpu_model"], int(spec["gpu_count"]), int(spec["vcpus"]),
            float(spec["memory_gb"]), price, at)


def list_price(cloud: str, region: str, instance_type: str) -> float:
    listed = catalog.on_demand_observations()
    match = listed[(listed["cloud"] == cloud) & (listed["region"] == region)
                   & (listed["instance_type"] == instance_type)]
    assert len(match) == 1
    return float(match["usd_per_hour"].iloc[0])


def test_the_frames_own_on_demand_price_comes_first() -> None:
    listed = list_price(*TYPE)
    own = round(listed * 0.9, 4)
    frame = rows_frame([row(1.0), row(own, "on_demand")], "t")
    assert on_demand_reference(frame).tolist() == [own, own]


def test_of_several_on_demand_prices_the_newest_then_the_highest() -> None:
    early, late = datetime(2026, 1, 1, tzinfo=timezone.utc), T
    frame = rows_frame([row(1.0), row(3.5, "on_demand", at=late),
                        row(9.0, "on_demand", at=early), row(3.0, "on_demand", at=late)], "t")
    assert on_demand_reference(frame).iloc[0] == 3.5


def test_without_one_the_catalogs_list_price_of_the_region() -> None:
    frame = rows_frame([row(1.0), row(1.0, region="us-west-2")], "t")
    assert on_demand_reference(frame).tolist() == [list_price(*TYPE),
                                                   list_price("aws", "us-west-2", "p3.2xlarge")]


def test_else_nan_never_another_region_or_os() -> None:
    frame = rows_frame([row(1.0, region="xx-test-1"), row(1.0, os="windows"),
                        row(5.0, "on_demand", os="windows", region="xx-test-1")], "t")
    ref = on_demand_reference(frame)
    assert math.isnan(ref.iloc[0])  # a region the catalog does not list: no guess
    assert math.isnan(ref.iloc[1])  # the list prices are Linux prices
    assert ref.iloc[2] == 5.0
    assert on_demand_reference(frame.iloc[:0]).empty


@pytest.fixture()
def two_list_prices(monkeypatch: pytest.MonkeyPatch) -> tuple[float, float]:
    """The catalog with p3.2xlarge in us-east-1 listed at 2.0 from 2022-01, 3.0 from 2024-01."""
    listed = catalog.on_demand_observations()
    key = ((listed["cloud"] == TYPE[0]) & (listed["region"] == TYPE[1])
           & (listed["instance_type"] == TYPE[2]))
    old, new = listed[key].copy(), listed[key].copy()
    old["usd_per_hour"], old["effective_at"] = 2.0, pd.Timestamp("2022-01-01", tz="UTC")
    new["usd_per_hour"], new["effective_at"] = 3.0, pd.Timestamp("2024-01-01", tz="UTC")
    changed = pd.concat([new, listed[~key], old], ignore_index=True)
    monkeypatch.setattr(catalog, "on_demand_observations", lambda: changed)
    return 2.0, 3.0


@pytest.mark.parametrize(("at", "expected"), [
    (datetime(2023, 6, 1, tzinfo=timezone.utc), 2.0),  # the newest list price by then
    (datetime(2024, 1, 1, tzinfo=timezone.utc), 3.0),  # listed at that very time
    (datetime(2026, 6, 1, tzinfo=timezone.utc), 3.0),
    (datetime(2019, 6, 1, tzinfo=timezone.utc), 2.0),  # none that old: the earliest
    (None, 3.0),  # default: the newest
])
def test_the_catalogs_list_price_as_of_a_time(two_list_prices, at, expected) -> None:
    frame = rows_frame([row(1.0)], "t")
    assert on_demand_reference(frame, at=at).iloc[0] == expected
    listed = listed_on_demand(at)
    assert not listed.duplicated(["cloud", "region", "instance_type", "os"]).any()


@pytest.mark.parametrize("at", [None, datetime(2019, 6, 1, tzinfo=timezone.utc),
                                datetime(2023, 6, 1, tzinfo=timezone.utc), T])
def test_the_list_as_of_a_time_is_the_newest_held_then_the_earliest(two_list_prices, at
                                                                     ) -> None:
    """Row for row (order, index, columns): per type, the newest list price held by then,
    in listing order; then the earliest of each type none held."""
    key = ["cloud", "region", "instance_type", "os"]
    every = catalog.on_demand_observations().sort_values("effective_at", kind="stable")
    held = every if at is None else every[every["effective_at"] <= pd.Timestamp(at)]
    expected = pd.concat([held.drop_duplicates(key, keep="last"),
                          every.drop_duplicates(key, keep="first")])
    expected = expected.drop_duplicates(key, keep="first").reset_index(drop=True)
    pd.testing.assert_frame_equal(listed_on_demand(at), expected, check_exact=True)


def test_prices_at_gives_each_offering_its_reference(store: PriceStore, two_list_prices
                                                     ) -> None:
    store.ingest(rows_frame([row(0.9, at=datetime(2023, 3, 1, tzinfo=timezone.utc))], "t"))
    at = datetime(2023, 6, 1, tzinfo=timezone.utc)
    frame = prices_at(store, at, clouds=["aws"], regions=["us-east-1"],
                      instance_types=["p3.2xlarge"])
    spot = frame[frame["market"] == "spot"].iloc[0]
    assert spot["on_demand_usd_per_hour"] == 2.0
    assert spot["spot_discount"] == pytest.approx(1 - 0.9 / 2.0)
    on_demand = frame[frame["market"] == "on_demand"].iloc[0]
    assert on_demand["usd_per_hour"] == on_demand["on_demand_usd_per_hour"] == 2.0
    assert math.isnan(on_demand["spot_discount"])
    assert {"usd_per_gpu_hour", "on_demand_usd_per_hour", "spot_discount"} <= set(frame)

    later = prices_at(None, datetime(2026, 6, 1, tzinfo=timezone.utc), clouds=["aws"],
                      regions=["us-east-1"], instance_types=["p3.2xlarge"],
                      markets=["on_demand"])
    assert later["usd_per_hour"].tolist() == [3.0]  # one list price per offering: the newest


SNAPSHOT_MONTH = pd.Timestamp("2025-05-01", tz="UTC")


def test_a_fresh_install_has_spot_prices_from_the_bundled_snapshot() -> None:
    frame = prices_at(None, T, markets=["spot"], clouds=["aws"], regions=["us-east-1"],
                      instance_types=["p3.2xlarge"])
    (spot,) = frame.to_dict("records")
    assert spot["usd_per_hour"] == 0.6929  # the median of the 4 us-east-1 zones listed
    assert spot["zone"] == "" and spot["effective_at"] == SNAPSHOT_MONTH
    assert spot["source"].startswith(catalog.SPOT_SNAPSHOT_SOURCE)
    assert "skypilot-catalog" in spot["source"]
    assert spot["spot_discount"] == pytest.approx(1 - 0.6929 / list_price(*TYPE))


def test_every_snapshot_row_is_a_catalog_type_with_a_source_and_a_date() -> None:
    raw = pd.read_csv(resources.files("costsched.data") / "spot_prices.csv")
    snapshot = catalog.spot_observations(include_cpu=True)
    assert len(snapshot) == len(raw) > 0  # none dropped by the join with the types
    assert raw["source"].str.len().gt(20).all() and raw["as_of"].notna().all()
    assert (snapshot["usd_per_hour"] > 0).all()
    listed = (catalog.on_demand_observations(include_cpu=True)
              .sort_values("effective_at").drop_duplicates(
                  ["cloud", "region", "instance_type"], keep="last")
              .set_index(["cloud", "region", "instance_type"]))
    on_demand = listed["usd_per_hour"].reindex(
        pd.MultiIndex.from_frame(snapshot[["cloud", "region", "instance_type"]]))
    assert (snapshot["usd_per_hour"].to_numpy() < on_demand.to_numpy()).all()


def test_a_clouds_collected_spot_prices_are_used_alone(store: PriceStore) -> None:
    """Old snapshot prices of other types must not undercut what was collected."""
    assert not prices_at(store, T, markets=["spot"], clouds=["aws"]).empty  # the snapshot
    store.ingest(rows_frame([row(0.5)], "collect:test"))  # p3.2xlarge spot, us-east-1a
    frame = prices_at(store, T, markets=["spot"])
    aws = frame[frame["cloud"] == "aws"]
    assert aws[["zone", "instance_type", "usd_per_hour", "source"]].values.tolist() == [
        ["us-east-1a", "p3.2xlarge", 0.5, "collect:test"]]


def test_a_partial_updates_spot_prices_replace_their_own_places_only(
        store: PriceStore) -> None:
    """Imported as a partial update, p3.2xlarge's price in us-east-1a is that zone's, beside
    the bundled price of p3.2xlarge in us-east-1 (another offering: its region's), and
    leaves every other bundled aws spot price offered; a whole collection after it covers
    the cloud again."""
    bundled = prices_at(None, T, markets=["spot"], clouds=["aws"])
    store.ingest(rows_frame([row(0.5)], partial_source("import:few.csv")))
    frame = prices_at(store, T, markets=["spot"], clouds=["aws"])
    place = (frame["region"] == "us-east-1") & (frame["instance_type"] == "p3.2xlarge")
    region = bundled[(bundled["region"] == "us-east-1")
                     & (bundled["instance_type"] == "p3.2xlarge")]
    assert sorted(frame[place][["zone", "usd_per_hour", "source"]].values.tolist()) == [
        *region[["zone", "usd_per_hour", "source"]].values.tolist(),
        ["us-east-1a", 0.5, "partial update: import:few.csv"]]
    others = (bundled["region"] != "us-east-1") | (bundled["instance_type"] != "p3.2xlarge")
    assert len(frame[~place]) == others.sum() > 10
    store.ingest(rows_frame([row(0.6, instance_type="p3.8xlarge")], "collect:test"))
    assert sorted(prices_at(store, T, markets=["spot"], clouds=["aws"])["instance_type"]) == [
        "p3.2xlarge", "p3.8xlarge"]


def test_a_partial_source_is_marked_once_within_the_stores_limit() -> None:
    once = partial_source("import:few.csv")
    assert partial_source(once) == once == "partial update: import:few.csv"
    assert len(partial_source("x" * 128)) == 128


def test_the_snapshot_is_not_used_before_its_date() -> None:
    before = SNAPSHOT_MONTH.to_pydatetime() - pd.Timedelta(days=1)
    assert prices_at(None, before, markets=["spot"]).empty
    assert not prices_at(None, SNAPSHOT_MONTH.to_pydatetime(), markets=["spot"]).empty


@pytest.mark.parametrize("filters", [dict(gpu_models=["V100"]), dict(regions=["us-east-1"]),
                                     dict(instance_types=["p3.2xlarge"]),
                                     dict(markets=["spot"], gpu_models=["V100", "K80"])])
def test_a_clouds_stored_spot_market_holds_whatever_is_asked(store: PriceStore,
                                                             filters: dict) -> None:
    """One stored aws spot price (a T4 in us-west-2) stands for aws's whole spot market
    for a question that does not include it too: the answer is the whole frame's rows."""
    store.ingest(rows_frame([row(0.15, region="us-west-2", instance_type="g4dn.xlarge")],
                            "import:test"))
    asked = prices_at(store, T, **filters)
    whole = prices_at(store, T)
    columns = {"gpu_models": "gpu_model", "regions": "region",
               "instance_types": "instance_type", "markets": "market"}
    for name, values in filters.items():
        whole = whole[whole[columns[name]].isin(values)]
    # (the columns' order is the first frame's: the store's when it has rows asked for)
    pd.testing.assert_frame_equal(asked.reset_index(drop=True),
                                  whole[asked.columns].reset_index(drop=True),
                                  check_dtype=False, check_index_type=False)
    assert not ((asked["cloud"] == "aws") & (asked["market"] == "spot")
                & (asked["instance_type"] == "p3.2xlarge")).any()

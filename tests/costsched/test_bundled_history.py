"""The bundled prices as dated history: GCP's weekly 2025-12..2026-07 series as its source
gives it, a price as of a day being that day's, a superseded price (its type's price
changed since) marked and left out of decisions, and the store's prices combined with the
bundled ones, the newer winning."""

from __future__ import annotations

import csv
from datetime import datetime, timezone

import pandas as pd
import pytest

from costsched import bundled_prices, catalog
from costsched.prices import prices_at
from costsched.store import PriceStore
from price_collectors.base import rows_frame
from tests.shared_data import shared_data

# The test's clock: a day after the newest bundled GCP reading (2026-07-30).
NOW = datetime(2026, 11, 28, tzinfo=timezone.utc)
HISTORY = shared_data() / "gcp-prices-2026" / "prices.csv"
KNOWN_TYPES = {"a3-highgpu-1g", "a3-highgpu-8g", "a3-megagpu-8g", "a2-ultragpu-1g",
               "a2-ultragpu-8g", "g2-standard-4"}  # the series' types of known GPU models


def day(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


def gcp(frame: pd.DataFrame, instance_type: str, region: str, market: str) -> pd.Series:
    rows = frame[(frame["cloud"] == "gcp") & (frame["instance_type"] == instance_type)
                 & (frame["region"] == region) & (frame["market"] == market)]
    assert len(rows) == 1, rows
    return rows.iloc[0]


@pytest.mark.skipif(not HISTORY.exists(), reason="the shared GCP price series is not here")
def test_every_reading_of_the_series_is_bundled_with_its_day_and_commit() -> None:
    with HISTORY.open(newline="") as fh:
        readings = [r for r in csv.DictReader(fh) if r["instance_type"] in KNOWN_TYPES]
    bundled = {}
    for name, market in (("on_demand_prices.csv", "ondemand_usd_per_hour"),
                         ("spot_prices.csv", "spot_price_usd_per_hour")):
        for row in bundled_prices._read(name):
            if row["source"].startswith("Cyclenerd/google-cloud-pricing-cost-calculator"):
                bundled[(market, row["instance_type"], row["region"], row["as_of"])] = row
    assert len(bundled) == 2 * len(readings) > 4000
    for r in readings:
        for market in ("ondemand_usd_per_hour", "spot_price_usd_per_hour"):
            row = bundled[(market, r["instance_type"], r["region"], r["observed_date"])]
            assert float(row["usd_per_hour"]) == float(r[market])
            assert row["source"].endswith(f"(commit {r['source_commit'][:12]})")


def test_a_price_as_of_a_day_is_that_days_reading() -> None:
    """a3-highgpu-8g spot in us-central1 rose in steps (README: $20.39/h on 2025-12-04,
    $50.61/h on 2026-07-30) while on-demand stayed at $88.49/h."""
    expected = {"2025-12-10": 20.390157, "2026-03-01": 27.018347, "2026-07-30": 50.609541,
                "2026-11-28": 50.609541}
    for when, spot in expected.items():
        frame = prices_at(None, day(when), instance_types=["a3-highgpu-8g"])
        assert gcp(frame, "a3-highgpu-8g", "us-central1", "spot")["usd_per_hour"] == \
            pytest.approx(spot, abs=1e-6), when
        on_demand = gcp(frame, "a3-highgpu-8g", "us-central1", "on_demand")
        assert on_demand["usd_per_hour"] == pytest.approx(88.49)
    newest = gcp(prices_at(None, NOW, instance_types=["a3-highgpu-8g"]), "a3-highgpu-8g",
                 "us-central1", "spot")
    assert newest["effective_at"] == pd.Timestamp("2026-07-30", tz="UTC")
    assert "pricing.yml (commit fd66b26ff84f)" in newest["source"]


def test_a_list_price_change_supersedes_the_older_prices_of_the_type_elsewhere() -> None:
    # p5.48xlarge: $98.32/h in us-east-1 as of 2025-05, $55.04/h as of 2025-10 (the mid-2025
    # cut); us-west-1 has only its 2025-05 price, $122.90/h.
    old = day("2025-05-01")
    why = bundled_prices.superseded("aws", "p5.48xlarge", "on_demand", old, NOW)
    assert why is not None and "$98.3200/h" in why and "$55.0400/h" in why
    # Not before the change was known, and never by a change before the price's own date.
    assert bundled_prices.superseded("aws", "p5.48xlarge", "on_demand", old,
                                     day("2025-07-01")) is None
    assert bundled_prices.superseded("aws", "p5.48xlarge", "on_demand", day("2025-10-01"),
                                     NOW) is None
    # a3-highgpu-8g on-demand moved 0.75% between sources (87.83 -> 88.49): rounding, not
    # a change, so its other regions' list prices stand; its spot price did change.
    assert bundled_prices.superseded("gcp", "a3-highgpu-8g", "on_demand", day("2025-01-01"),
                                     NOW) is None
    assert bundled_prices.superseded("gcp", "a3-highgpu-8g", "spot", day("2025-10-01"),
                                     NOW) is not None


def test_decisions_leave_superseded_prices_out_and_views_rank_them_last() -> None:
    current = prices_at(None, NOW, instance_types=["p5.48xlarge"], markets=["on_demand"])
    assert "us-west-1" not in set(current["region"]) and not current["superseded"].any()
    every = prices_at(None, NOW, instance_types=["p5.48xlarge"], markets=["on_demand"],
                      superseded=True)
    west = every[every["region"] == "us-west-1"].iloc[0]
    assert west["superseded"] and west["usd_per_hour"] == 122.9
    flags = every["superseded"].tolist()
    assert flags == sorted(flags)  # current first
    light = bundled_prices.prices_at(NOW, gpu_models=["H100"])
    assert [r for r in light if r["region"] == "us-west-1"
            and r["instance_type"] == "p5.48xlarge"][0]["superseded"]
    # Before the cut was known, the same price was current.
    before = prices_at(None, day("2025-07-01"), instance_types=["p5.48xlarge"],
                       markets=["on_demand"])
    assert "us-west-1" in set(before["region"])


def spot_row(cloud: str, region: str, zone: str, instance_type: str, price: float,
             at: datetime) -> tuple:
    spec = catalog.require(cloud, instance_type)
    return (cloud, region, zone, instance_type, "spot", "linux", spec["gpu_model"],
            int(spec["gpu_count"]), int(spec["vcpus"]), float(spec["memory_gb"]), price, at)


def test_a_newer_collection_replaces_a_clouds_bundled_spot_prices(store: PriceStore) -> None:
    store.ingest(rows_frame([spot_row("gcp", "us-central1", "", "g2-standard-4", 0.25,
                                      day("2026-11-27"))], "collect:test"))
    frame = prices_at(store, NOW, clouds=["gcp"], markets=["spot"])
    assert frame["source"].tolist() == ["collect:test"]  # no older bundled GCP spot price


def test_bundled_prices_newer_than_the_stores_win(store: PriceStore) -> None:
    """A store of 2023 spot prices: the bundled 2026 readings of the same place replace
    them, and its places the bundle does not price keep theirs."""
    store.ingest(rows_frame([
        spot_row("gcp", "us-central1", "", "a3-highgpu-8g", 9.0, day("2023-06-01")),
        spot_row("gcp", "us-central1", "", "a3-highgpu-4g", 5.0, day("2023-06-01"))],
        "recorded 2023"))
    frame = prices_at(store, NOW, clouds=["gcp"], markets=["spot"],
                      instance_types=["a3-highgpu-8g", "a3-highgpu-4g"])
    eight = gcp(frame, "a3-highgpu-8g", "us-central1", "spot")
    assert eight["usd_per_hour"] == pytest.approx(50.609541)
    four = frame[frame["instance_type"] == "a3-highgpu-4g"]
    assert set(four["source"]) >= {"recorded 2023"}
    # As of 2023 the store's price is the only one.
    then = prices_at(store, day("2023-07-01"), clouds=["gcp"], markets=["spot"],
                     instance_types=["a3-highgpu-8g"])
    assert then["usd_per_hour"].tolist() == [9.0]


def test_a_stored_on_demand_price_yields_to_a_newer_list_price(store: PriceStore) -> None:
    spec = catalog.require("gcp", "g2-standard-4")
    row = ("gcp", "us-central1", "", "g2-standard-4", "on_demand", "linux", "L4", 1,
           int(spec["vcpus"]), float(spec["memory_gb"]), 0.5, day("2024-01-01"))
    store.ingest(rows_frame([row], "recorded 2024"))
    listed = gcp(prices_at(store, NOW, instance_types=["g2-standard-4"]), "g2-standard-4",
                 "us-central1", "on_demand")
    assert listed["usd_per_hour"] == pytest.approx(0.706832)
    stored = gcp(prices_at(store, day("2024-06-01"), instance_types=["g2-standard-4"]),
                 "g2-standard-4", "us-central1", "on_demand")
    assert stored["usd_per_hour"] == 0.5 and stored["source"] == "recorded 2024"


def test_in_one_pass_the_prices_with_and_without_superseded_ones_are_combined_once(
        monkeypatch: pytest.MonkeyPatch, store: PriceStore) -> None:
    """A plan keeps the superseded prices and launch's decision leaves them out: in one
    pass, the store's and the bundled prices are combined once for both, and each reads as
    when read alone."""
    from costsched import prices
    from costsched.passes import one_pass

    alone = [prices_at(store, NOW, superseded=s) for s in (True, False)]
    combined = []
    snapshot = prices._spot_snapshot
    monkeypatch.setattr(prices, "_spot_snapshot",
                        lambda *a, **k: combined.append(1) or snapshot(*a, **k))
    with one_pass():
        together = [prices_at(store, NOW, superseded=s) for s in (True, False)]
    assert len(combined) == 1
    assert together[0]["superseded"].any() and not together[1]["superseded"].any()
    for a, b in zip(alone, together, strict=True):
        pd.testing.assert_frame_equal(a, b)

"""Validation of collected prices, and the shared collector driver."""

from __future__ import annotations

import logging
import math
from datetime import datetime, timezone

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsched import catalog
from costsched.store import PriceStore
from price_collectors import runner
from price_collectors.base import (
    CEILING,
    CEILING_PER_GPU_HOUR,
    FLOOR,
    Collector,
    UnitError,
    UnitResult,
    on_demand_reference,
    rows_frame,
    validate,
)

AT = datetime(2026, 11, 1, tzinfo=timezone.utc)


def row(price, market="spot", region="us-east-1", instance_type="p3.2xlarge", cloud="aws",
        gpus=1) -> tuple:
    spec = catalog.lookup(cloud, instance_type) or {"gpu_model": "V100", "vcpus": 8,
                                                    "memory_gb": 61.0}
    return (cloud, region, "", instance_type, market, "linux", spec["gpu_model"], gpus,
            int(spec["vcpus"]), float(spec["memory_gb"]), price, AT)


def listed(region: str = "us-east-1", instance_type: str = "p3.2xlarge") -> float:
    prices = catalog.on_demand_prices()
    match = prices[(prices["cloud"] == "aws") & (prices["region"] == region)
                   & (prices["instance_type"] == instance_type)]
    return float(match["usd_per_hour"].max())


def test_each_bad_price_is_rejected_with_its_reason(caplog) -> None:
    od = listed()
    frame = rows_frame([row(od * 0.3), row(float("nan")), row(float("inf")), row(-1.0),
                        row(0.0), row("n/a"), row(od * 2), row(od * 0.001),
                        row(od, market="on_demand"), row(od * 10, market="on_demand")],
                       "test")
    with caplog.at_level(logging.WARNING, logger="price_collectors"):
        good, rejected = validate(frame)
    assert good["usd_per_hour"].tolist() == [pytest.approx(od * 0.3), od]
    reasons = [r.reason.split(" (")[0] for r in rejected]
    assert reasons == ["not a number", "not finite", "not positive", "not positive",
                       "not a number", "above ceiling", "below floor", "above ceiling"]
    assert len([r for r in caplog.records if r.getMessage().startswith("rejected ")]) == 8
    assert "above ceiling (1.5x on-demand $" in caplog.text


def test_spot_is_judged_against_the_on_demand_price_collected_with_it() -> None:
    # A region the catalog does not price p3.2xlarge in, with a collected on-demand price.
    frame = rows_frame([row(10.0, market="on_demand", region="mx-central-1"),
                        row(14.0, region="mx-central-1"), row(16.0, region="mx-central-1")], "test")
    good, rejected = validate(frame)
    assert sorted(good["usd_per_hour"]) == [10.0, 14.0]
    assert [r.usd_per_hour for r in rejected] == [16.0]
    assert "1.5x on-demand $10" in rejected[0].reason


def test_a_rejected_on_demand_price_is_no_reference_for_spot() -> None:
    od = listed()
    # The on-demand row is absurd (rejected); spot then falls back to the catalog's price.
    frame = rows_frame([row(od * 100, market="on_demand"), row(od * 1.4)], "test")
    good, rejected = validate(frame)
    assert good["market"].tolist() == ["spot"] and len(rejected) == 1


def test_a_region_the_catalog_does_not_list_is_judged_by_the_highest_list_price() -> None:
    prices = catalog.on_demand_prices()
    p3 = prices[(prices["cloud"] == "aws") & (prices["instance_type"] == "p3.2xlarge")]
    highest = float(p3["usd_per_hour"].max())
    assert highest > listed()  # some region lists it dearer than us-east-1
    frame = rows_frame([row(highest * 1.4, region="mx-central-1"),
                        row(highest * 1.6, region="mx-central-1")], "test")
    good, rejected = validate(frame)
    assert good["usd_per_hour"].tolist() == [pytest.approx(highest * 1.4)]
    assert f"1.5x on-demand ${highest:.4g}" in rejected[0].reason
    # Only validation falls back to another region: the reference rule itself does not.
    assert math.isnan(on_demand_reference(frame).iloc[0])


def test_without_any_reference_the_ceiling_is_per_gpu() -> None:
    frame = rows_frame([row(CEILING_PER_GPU_HOUR * 4 - 1, instance_type="x9.unknown", gpus=4),
                        row(CEILING_PER_GPU_HOUR * 4 + 1, instance_type="x9.unknown", gpus=4)],
                       "test")
    good, rejected = validate(frame)
    assert len(good) == 1
    assert rejected[0].reason == (f"above ceiling (${CEILING_PER_GPU_HOUR:g}/GPU-hour: at most "
                                  f"${CEILING_PER_GPU_HOUR * 4:g}/h)")
    assert math.isnan(on_demand_reference(frame).iloc[0])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                          st.floats(min_value=0.01, max_value=40)), min_size=1, max_size=12),
       st.lists(st.sampled_from(["spot", "on_demand"]), min_size=12, max_size=12))
def test_validation_partitions_rows_and_keeps_only_sane_prices(prices, markets) -> None:
    frame = rows_frame([row(p, market=m) for p, m in zip(prices, markets, strict=False)], "t")
    good, rejected = validate(frame)
    assert len(good) + len(rejected) == len(frame)
    od = listed()
    # Spot is judged against the on-demand price that passed in the same batch, if any.
    collected = good[good["market"] == "on_demand"]["usd_per_hour"]
    spot_ref = collected.max() if len(collected) else od
    for r in good.itertuples():
        assert math.isfinite(r.usd_per_hour) and r.usd_per_hour > 0
        ref = od if r.market == "on_demand" else spot_ref
        assert FLOOR * ref * (1 - 1e-12) <= r.usd_per_hour <= CEILING[r.market] * ref * (1 + 1e-12)
    for r in rejected:
        price = float(r.usd_per_hour)
        ref = od if r.market == "on_demand" else spot_ref
        assert not (math.isfinite(price) and FLOOR * ref <= price <= CEILING[r.market] * ref)


REGIONS = {"a": "us-east-1", "b": "us-east-2", "c": "us-west-1", "d": "us-west-2",
           "e": "eu-west-1"}


class Toy(Collector):
    """Units 'a'..'e'; 'c' always fails."""

    cloud = "aws"

    def plan(self) -> list[str]:
        return list("abcde")

    def collect_unit(self, unit: str, since) -> UnitResult:
        if unit == "c":
            raise UnitError("c is down")
        od = listed()
        return UnitResult(rows_frame([row(od * 0.5, region=REGIONS[unit])], "toy"))


def test_collector_reports_units_regions_offerings_and_progress() -> None:
    seen, planned = [], []
    collection = Toy().collect(progress=lambda c, u, e: seen.append((c, u, e)),
                               planned=lambda c, units: planned.append((c, list(units))))
    assert planned == [("aws", list("abcde"))]
    assert sorted(seen) == [("aws", u, "c is down" if u == "c" else None) for u in "abcde"]
    assert collection.units == list("abde") and collection.failed == {"c": "c is down"}
    assert collection.regions == ["eu-west-1", "us-east-1", "us-east-2", "us-west-2"]
    offerings = collection.offerings()
    assert len(offerings) == 4 and set(offerings["instance_type"]) == {"p3.2xlarge"}


def test_runner_summary_as_json(store: PriceStore) -> None:
    summary = runner.run([Toy()], store)
    data = summary.to_dict()
    assert data["inserted"] == 4 and data["ok"] is False
    assert data["clouds"]["aws"]["failed"] == {"c": "c is down"}
    assert data["clouds"]["aws"]["regions"] == ["eu-west-1", "us-east-1", "us-east-2", "us-west-2"]
    again = runner.run([Toy()], store)
    assert again.inserted == 0 and again.unchanged == 4


def test_drop_unchanged_keeps_changes_and_older_rows(store: PriceStore) -> None:
    od = listed()
    store.ingest(rows_frame([row(od * 0.5)], "first"))
    later = pd.Timestamp("2026-11-02T00:00:00Z")
    frame = rows_frame([row(od * 0.5), row(od * 0.6, region="us-west-2")], "again")
    frame.loc[0, "effective_at"] = later
    kept, dropped = runner.drop_unchanged(frame, store)
    assert dropped == 1 and kept["region"].tolist() == ["us-west-2"]
    moved = frame.assign(usd_per_hour=od * 0.55)
    assert runner.drop_unchanged(moved, store)[1] == 0

"""The spot availability store: intervals in, intervals, summaries and rates out, on SQLite
and PostgreSQL; a store at the previous revision upgrades to hold them."""

from __future__ import annotations

from datetime import datetime, timezone

import pandas as pd
import pytest
from sqlalchemy import insert, inspect, select

from costsched.model import InvalidInput
from costsched.optimize.availability import preemption_rates
from costsched.store import PriceStore, database
from costsched.store.schema import availability
from costsched.store.spot_availability import COLUMNS, RUNNING_KINDS

T0 = pd.Timestamp("2023-02-15", tz="UTC")


def at(hours: float) -> pd.Timestamp:
    return T0 + pd.Timedelta(hours=hours)


def trace(states: list[int], *, zone: str = "us-east-1a", kind: str = "availability",
          source: str = "a.json", hours: float = 1.0, region: str = "us-east-1"
          ) -> pd.DataFrame:
    """Intervals of `hours` each, one per state (not merged: the store takes them as given)."""
    return pd.DataFrame([dict(cloud="aws", region=region, zone=zone,
                              instance_type="p3.2xlarge", gpu_model="V100", gpu_count=1,
                              start=at(i * hours), end=at((i + 1) * hours),
                              available=bool(s), kind=kind, source=source)
                         for i, s in enumerate(states)], columns=COLUMNS)


def test_intervals_round_trip_and_a_second_add_stores_nothing(any_store: PriceStore) -> None:
    spot = any_store.spot_availability
    frame = pd.concat([trace([0, 1, 0, 1]), trace([1, 1], zone="us-east-1c", source="c.json"),
                       trace([1, 0, 1], kind="preemption", source="p.json")],
                      ignore_index=True)
    assert spot.add(frame) == len(frame) == 9
    assert spot.add(frame) == 0
    assert spot.count() == 9

    got = spot.intervals()  # kind availability by default
    expected = frame[frame["kind"] == "availability"].sort_values(["zone", "start"])
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expected.reset_index(drop=True),
                                  check_dtype=False)
    assert str(got["start"].dt.tz) == "UTC"
    assert len(spot.intervals(kind=None)) == 9
    assert spot.intervals(zones=["us-east-1c"])["source"].unique().tolist() == ["c.json"]
    # Overlapping [1.5 h, 2 h): the intervals [1, 2) of both zones.
    window = spot.intervals(start=at(1.5), end=at(2))
    assert window["start"].tolist() == [at(1), at(1)]
    assert window["zone"].tolist() == ["us-east-1a", "us-east-1c"]


def test_an_interval_already_stored_is_kept_and_new_ones_of_the_source_added(
        any_store: PriceStore) -> None:
    spot = any_store.spot_availability
    assert spot.add(trace([0, 1])) == 2
    longer = trace([1, 1, 0])  # the first interval changed state, one more at the end
    assert spot.add(longer) == 2
    stored = spot.intervals()
    assert len(stored) == 4
    assert stored.groupby("start")["available"].apply(set).loc[at(0)] == {False, True}


def test_summary_and_available_share(any_store: PriceStore) -> None:
    spot = any_store.spot_availability
    spot.add(pd.concat([trace([0, 1, 1, 0], hours=2), trace([1, 0], kind="preemption",
                                                            source="p.json")]))
    summary = spot.summary().set_index("kind")
    a = summary.loc["availability"]
    assert (a["intervals"], a["hours"], a["available_share"]) == (4, 8.0, 0.5)
    assert (a["first"], a["last"]) == (at(0), at(8))
    assert summary.loc["preemption", "available_share"] == 0.5
    # [1 h, 5 h) clipped: 1 h down, 2 + 1 h up -> 3 of 4 hours.
    share = spot.available_share(start=at(1), end=at(5))
    assert share[["hours", "available_hours", "available_share"]].iloc[0].tolist() == [
        4.0, 3.0, 0.75]


def test_preemption_rates_count_running_to_not_running(any_store: PriceStore) -> None:
    spot = any_store.spot_availability
    # Running [0,2) preempted, [3,6) preempted, [7,8) still running at the end: 2 in 6 h.
    spot.add(trace([1, 1, 0, 1, 1, 1, 0, 1], kind="preemption", source="p.json"))
    spot.add(trace([1, 0, 1, 0], source="avail.json"))  # availability is not running time
    rates = preemption_rates(spot.spells(kinds=RUNNING_KINDS))
    assert len(rates) == 1
    row = rates.iloc[0]
    assert (row["preemptions"], row["hours"]) == (2, 6.0)
    assert row["per_hour"] == pytest.approx(2 / 6)
    assert row["low_per_hour"] < row["per_hour"] < row["high_per_hour"]
    # Only what was seen before 4 h: [0,2) preempted, [3,4) cut at 4 h (not seen to end).
    early = preemption_rates(spot.spells(kinds=RUNNING_KINDS, end=at(4))).iloc[0]
    assert (early["preemptions"], early["hours"]) == (1, 3.0)
    by_zone = preemption_rates(spot.spells(kinds=RUNNING_KINDS), ("zone", "instance_type"))
    assert by_zone[["zone", "instance_type"]].iloc[0].tolist() == ["us-east-1a", "p3.2xlarge"]


def test_latest_state_per_zone(any_store: PriceStore) -> None:
    spot = any_store.spot_availability
    spot.add(pd.concat([trace([0, 1, 1], hours=2), trace([1, 0], zone="us-east-1c",
                                                         source="c.json", hours=2)]))
    now = spot.latest(at(3)).set_index("zone")
    assert now.loc["us-east-1a", ["available", "since", "until", "current"]].tolist() == [
        True, at(2), at(4), True]
    assert now.loc["us-east-1c", ["available", "since", "current"]].tolist() == [
        False, at(2), True]
    later = spot.latest(at(100), zones=["us-east-1c"])
    assert later["zone"].tolist() == ["us-east-1c"]
    assert not later["current"].iloc[0]  # observations stopped at 4 h
    assert spot.latest(at(-1)).empty


@pytest.mark.parametrize(("column", "value", "message"), [
    ("kind", "weather", "availability kind 'weather': expected one of availability"),
    ("cloud", "ibm", "availability cloud 'ibm': expected one of aws"),
    ("zone", " ", "availability zone '': expected a non-empty name"),
])
def test_a_bad_frame_is_rejected_whole(any_store: PriceStore, column: str, value: str,
                                       message: str) -> None:
    frame = trace([1, 0, 1])
    frame.loc[2, column] = value
    with pytest.raises(InvalidInput, match=message):
        any_store.spot_availability.add(frame)
    assert any_store.spot_availability.count() == 0


def test_an_interval_must_end_after_it_starts(any_store: PriceStore) -> None:
    frame = trace([1, 0])
    frame.loc[1, "end"] = frame.loc[1, "start"]
    with pytest.raises(InvalidInput, match="expected an end after its start"):
        any_store.spot_availability.add(frame)
    assert any_store.spot_availability.count() == 0


def test_a_store_at_the_previous_revision_upgrades(empty_url: str) -> None:
    old = PriceStore(empty_url, migrate=False)
    database.upgrade(old.engine, "0003")
    assert "spot_availability" not in inspect(old.engine).get_table_names()
    when = datetime(2023, 2, 15, tzinfo=timezone.utc)
    with old.engine.begin() as conn:
        conn.execute(insert(availability).values(
            cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
            market="spot", gpu_model="V100", gpu_count=1, ts=int(when.timestamp()),
            event="preempted", detail=""))
    old.dispose()

    store = PriceStore(empty_url)
    assert store.revision() == database.head()  # the newest revision, whichever it is
    with store.engine.connect() as conn:
        assert len(conn.execute(select(availability)).fetchall()) == 1
    assert store.spot_availability.add(trace([1, 0])) == 2
    assert store.spot_availability.add(trace([1, 0])) == 0
    store.dispose()

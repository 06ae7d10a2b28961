"""Zone coverage on SQLite and PostgreSQL: which zones offer a regionally priced offering."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest

from costsched.model import InvalidInput
from costsched.store import PriceStore
from costsched.store import zones as zones_module

T1 = datetime(2024, 6, 1, tzinfo=timezone.utc)
T2 = T1 + timedelta(days=1)
KEY = ["cloud", "region", "zone", "instance_type", "market"]


def frame(*rows: tuple[str, str, str, str, str]) -> pd.DataFrame:
    return pd.DataFrame(list(rows), columns=KEY)


A = ("gcp", "us-central1", "us-central1-a", "a2-highgpu-1g", "spot")
B = ("gcp", "us-central1", "us-central1-b", "a2-highgpu-1g", "spot")
C = ("gcp", "europe-west4", "europe-west4-a", "n1-standard-8+1xnvidia-tesla-v100",
     "on_demand")
D = ("gcp", "us-central1", "us-central1-c", "a2-highgpu-1g", "spot")


def seen(store: PriceStore) -> dict[tuple, tuple[pd.Timestamp, pd.Timestamp]]:
    got = store.zones()
    return {tuple(r[KEY]): (r["first_seen"], r["last_seen"]) for _, r in got.iterrows()}


def test_record_and_read_zones(any_store: PriceStore) -> None:
    assert any_store.record_zones(frame(A, B, C, A), T1) == 3  # duplicates count once
    assert seen(any_store) == {k: (pd.Timestamp(T1), pd.Timestamp(T1)) for k in (A, B, C)}
    # The next collection: A and C again, D new, B gone.
    assert any_store.record_zones(frame(A, C, D), T2) == 3
    got = seen(any_store)
    assert got[A] == got[C] == (pd.Timestamp(T1), pd.Timestamp(T2))
    assert got[B] == (pd.Timestamp(T1), pd.Timestamp(T1))
    assert got[D] == (pd.Timestamp(T2), pd.Timestamp(T2))
    # An older collection recorded late widens the interval backwards only.
    earlier = T1 - timedelta(days=3)
    any_store.record_zones(frame(A), earlier)
    assert seen(any_store)[A] == (pd.Timestamp(earlier), pd.Timestamp(T2))
    assert any_store.record_zones(frame(), T2) == 0
    assert len(any_store.zones()) == 4


def test_zone_filters(any_store: PriceStore) -> None:
    any_store.record_zones(frame(A, B, C), T1)
    any_store.record_zones(frame(A, D), T2)
    assert any_store.zones(region="europe-west4")["zone"].tolist() == ["europe-west4-a"]
    assert any_store.zones(market="spot", seen_since=T2)["zone"].tolist() == [
        "us-central1-a", "us-central1-c"]
    assert len(any_store.zones(instance_type=["a2-highgpu-1g"], cloud="gcp")) == 3
    assert any_store.zones(cloud="aws").empty
    assert any_store.zones().columns.tolist() == [*KEY, "first_seen", "last_seen"]
    assert str(any_store.zones()["last_seen"].dt.tz) == "UTC"


def test_bad_zone_frames_are_refused(any_store: PriceStore) -> None:
    with pytest.raises(InvalidInput, match="zone frame lacks columns: market"):
        any_store.record_zones(frame(A).drop(columns="market"), T1)
    with pytest.raises(InvalidInput, match="market 'reserved': expected one of on_demand, spot"):
        any_store.record_zones(frame(A, (*A[:4], "reserved")), T1)
    with pytest.raises(InvalidInput, match="zone '': expected a non-empty name"):
        any_store.record_zones(frame((*A[:2], "", *A[3:])), T1)
    assert any_store.zones().empty


def test_a_failed_recording_changes_nothing(
    any_store: PriceStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    any_store.record_zones(frame(A), T1)
    before = any_store.zones()

    def power_cut(*_args: object) -> None:
        raise RuntimeError("power cut")

    # The new key is inserted before the known one's update fails.
    monkeypatch.setattr(zones_module, "update", power_cut)
    with pytest.raises(RuntimeError, match="power cut"):
        any_store.record_zones(frame(A, B), T2)
    pd.testing.assert_frame_equal(any_store.zones(), before)

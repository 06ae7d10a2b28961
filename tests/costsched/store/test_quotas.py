"""The quotas in the store: a reading replaces each quota's row and keeps its last refusal;
quotas a reading leaves out keep theirs, with their age; a refusal counts until the next
reading (`current` keeps both times); how each cloud's reading went; bad readings are one
line."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest

from costsched.model import InvalidInput
from costsched.store import PriceStore
from costsched.store.quotas import READING_COLUMNS, refusals_recorded

T0 = datetime(2026, 12, 1, 12, tzinfo=timezone.utc)


def reading(*rows: tuple[str, str, float | None, float | None]) -> pd.DataFrame:
    return pd.DataFrame([{"scope": scope, "code": code, "name": f"name of {code}",
                          "unit": "vCPUs", "limit": limit, "used": used, "source": "test"}
                         for scope, code, limit, used in rows], columns=READING_COLUMNS)


def by_key(store: PriceStore) -> dict[tuple[str, str], dict]:
    return {(r["scope"], r["code"]): r for r in store.quotas.current().to_dict("records")}


def test_a_reading_replaces_each_quota_and_keeps_its_last_refusal(
        any_store: PriceStore) -> None:
    quotas = any_store.quotas
    assert quotas.record("aws", reading(("us-east-1", "L-7212CCBC", 0.0, 0.0),
                                        ("us-west-2", "L-7212CCBC", 96.0, 8.0)),
                         at=T0, account="123456789012") == 2
    before = refusals_recorded()
    quotas.refused("aws", "us-west-2", "L-7212CCBC", unit="vCPUs", asked=96.0,
                   at=T0 + timedelta(minutes=5), detail="MaxSpotInstanceCountExceeded")
    assert refusals_recorded() == before + 1
    west = by_key(any_store)[("us-west-2", "L-7212CCBC")]
    assert (west["limit"], west["used"], west["refused"]) == (96.0, 8.0, 96.0)
    assert west["observed_at"] == pd.Timestamp(T0) < west["refused_at"]
    assert (west["account"], west["refused_detail"]) == ("123456789012",
                                                         "MaxSpotInstanceCountExceeded")
    # A newer reading of us-west-2 only: its row replaced (refusal kept, now older than
    # the reading), us-east-1's kept with its own age.
    later = T0 + timedelta(hours=1)
    quotas.record("aws", reading(("us-west-2", "L-7212CCBC", 128.0, None)), at=later)
    now = by_key(any_store)
    west, east = now[("us-west-2", "L-7212CCBC")], now[("us-east-1", "L-7212CCBC")]
    assert (west["limit"], pd.isna(west["used"]), west["observed_at"]) == (
        128.0, True, pd.Timestamp(later))
    assert west["refused"] == 96.0 and west["refused_at"] < west["observed_at"]
    assert (east["limit"], east["observed_at"]) == (0.0, pd.Timestamp(T0))
    # A refusal of a quota never read is known by itself (no limit, no reading time).
    quotas.refused("gcp", "us-central1", "NVIDIA_V100_GPUS", unit="GPUs", asked=None,
                   at=later, detail="QUOTA_EXCEEDED")
    gcp = by_key(any_store)[("us-central1", "NVIDIA_V100_GPUS")]
    assert pd.isna(gcp["limit"]) and pd.isna(gcp["observed_at"]) and pd.isna(gcp["refused"])
    assert (gcp["unit"], gcp["refused_at"]) == ("GPUs", pd.Timestamp(later))


def test_how_each_clouds_reading_went(any_store: PriceStore) -> None:
    any_store.quotas.record("aws", reading(("us-east-1", "L-7212CCBC", 0.0, 0.0)), at=T0)
    any_store.quotas.record("gcp", reading(), at=T0, error="compute.projects.get is not "
                            "allowed", fix="grant roles/compute.viewer")
    reads = any_store.quotas.reads()
    assert reads[["cloud", "quotas", "error"]].values.tolist() == [
        ["aws", 1, ""], ["gcp", 0, "compute.projects.get is not allowed"]]
    assert reads["read_at"].tolist() == [pd.Timestamp(T0)] * 2
    # Read again, well: the error is gone.
    any_store.quotas.record("gcp", reading(("global", "GPUS_ALL_REGIONS", 4.0, 0.0)),
                            at=T0 + timedelta(hours=1))
    assert any_store.quotas.reads().set_index("cloud").loc["gcp", "error"] == ""


@pytest.mark.parametrize(("cloud", "rows", "said"), [
    ("oci", reading(), "quota cloud 'oci': expected one of"),
    ("aws", reading(("", "L-7212CCBC", 0.0, 0.0)), "expected a code and a scope"),
    ("aws", reading(("us-east-1", "L-7212CCBC", 0.0, 0.0)).drop(columns="unit"),
     "quota reading lacks columns: unit"),
])
def test_a_bad_reading_is_one_line(any_store: PriceStore, cloud: str, rows: pd.DataFrame,
                                   said: str) -> None:
    with pytest.raises(InvalidInput, match=said):
        any_store.quotas.record(cloud, rows, at=T0)
    assert any_store.quotas.current().empty

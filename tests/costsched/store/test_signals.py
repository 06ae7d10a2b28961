"""The signal and measured-throughput tables on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest

from costsched.model import InvalidInput
from costsched.store import PriceStore
from costsched.store.signals import SIGNAL_COLUMNS, THROUGHPUT_COLUMNS

AT = datetime(2026, 11, 20, 12, tzinfo=timezone.utc)


def signal(value: float, at: datetime, zone: str = "") -> tuple:
    return ("aws", "us-east-1", zone, "p3.2xlarge", "linux", "placement", value,
            f"{value:g}/10", at, "test")


def test_signals_keep_history_and_latest_is_as_of(any_store: PriceStore) -> None:
    rows = pd.DataFrame([signal(3, AT), signal(8, AT + timedelta(hours=1)),
                         signal(5, AT, zone="us-east-1a")], columns=SIGNAL_COLUMNS)
    assert any_store.signals.add(rows) == 3
    assert any_store.signals.add(rows) == 0  # idempotent
    assert any_store.signals.history()["value"].tolist() == [3.0, 5.0, 8.0]
    latest = any_store.signals.latest(AT + timedelta(minutes=30))
    assert sorted(zip(latest["zone"], latest["value"], strict=True)) == [
        ("", 3.0), ("us-east-1a", 5.0)]
    assert sorted(any_store.signals.latest(AT + timedelta(hours=2))["value"]) == [5.0, 8.0]
    # Older than the age limit: no longer a signal of today.
    assert any_store.signals.latest(AT + timedelta(days=40)).empty
    with pytest.raises(InvalidInput, match="risk signal kind 'gossip': expected one of"):
        any_store.signals.add(rows.assign(kind="gossip"))


def test_measured_throughputs_replace_and_forget(any_store: PriceStore) -> None:
    def run(placement: int, sps: float) -> dict:
        return dict(id=None, model="m", gpu_model="T4", gpu_count=1, precision="fp32",
                    steps_per_second=sps, steps=sps * 60, seconds=60.0, measured_at=AT,
                    instance="i", job_id=1, placement_id=placement)

    store = any_store.measured_throughputs
    assert store.add(pd.DataFrame([run(1, 2.0), run(2, 3.0)])) == 2
    assert store.add(pd.DataFrame([run(2, 4.0)])) == 1  # a running placement, measured again
    assert sorted(store.rows()["steps_per_second"]) == [2.0, 4.0]
    assert list(store.rows().columns) == THROUGHPUT_COLUMNS
    assert store.forget(model="m", gpu_model="T4", gpu_count=1) == 2
    assert store.rows().empty
    assert store.add(pd.DataFrame([run(1, 9.0)])) == 0  # forgotten stays forgotten
    assert store.placements_measured() == {1, 2}

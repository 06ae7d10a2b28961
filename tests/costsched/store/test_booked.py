"""The booked-capacity tables (revision 0013): offerings refreshed by id with their
age, bookings recorded before they are bought."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from costsched.model import BookedOffering, InvalidInput, Offering
from costsched.store import PriceStore

T = datetime(2026, 12, 1, 8, tzinfo=timezone.utc)


def block(offering_id: str = "cb-1", seen: datetime = T, start_days: float = 1) -> BookedOffering:
    o = Offering("aws", "us-east-1", "us-east-1a", "p5.48xlarge", "capacity_block", "H100", 8)
    return BookedOffering(o, T + timedelta(days=start_days), T + timedelta(days=start_days + 2),
                          1, 1887.84, offering_id=offering_id, observed_at=seen, source="t")


def test_an_offering_seen_again_is_refreshed_never_duplicated(tmp_path: Path) -> None:
    store = PriceStore(f"sqlite:///{tmp_path}/s.db")
    assert store.booked.add([block(), block("cb-2")], tenancy=["default", "default"]) == (2, 0)
    later = replace(block(seen=T + timedelta(hours=1)), upfront_usd=1900.0)
    assert store.booked.add([later]) == (0, 1)
    assert store.booked.add([block(seen=T - timedelta(hours=1))]) == (0, 0)  # older: kept
    found = {b.offering_id: b for b in store.booked.offered(T + timedelta(hours=2))}
    assert found["cb-1"].upfront_usd == 1900.0
    assert found["cb-1"].observed_at == T + timedelta(hours=1)
    # Not seen yet, or ended: not offered.
    assert store.booked.offered(T - timedelta(hours=2)) == []
    assert store.booked.offered(T + timedelta(days=4)) == []


def test_a_booking_is_recorded_once_under_its_token_and_moves_on(tmp_path: Path) -> None:
    store = PriceStore(f"sqlite:///{tmp_path}/s.db")
    first = store.booked.intend("tok-1", block(), job_id=None, at=T)
    again = store.booked.intend("tok-1", block("cb-other"), job_id=3, at=T)
    assert first == again and first.state == "purchasing"  # the first record stands
    done = store.booked.advance("tok-1", "scheduled", at=T, reservation_id="cr-9")
    assert (done.state, done.reservation_id) == ("scheduled", "cr-9")
    store.booked.give("tok-1", 7, at=T)
    assert [b.token for b in store.booked.of_job(7)] == ["tok-1"]
    assert store.booked.of_jobs([7, 8]) == {7: tuple(store.booked.of_job(7))}
    with pytest.raises(InvalidInput, match="booking state 'bought'"):
        store.booked.advance("tok-1", "bought", at=T)
    with pytest.raises(InvalidInput, match="no such booking"):
        store.booked.advance("tok-2", "failed", at=T)

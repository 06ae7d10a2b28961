"""Buying booked capacity once: recorded before the cloud is asked, found by its token
after a crash instead of bought again, marked failed when the cloud no longer sells it."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from costsched.migration.launcher import CapacityError, Purchased
from costsched.model import InvalidInput
from costsched.service.booking import book, booking_token
from costsched.store import PriceStore
from launchers.local import LocalLauncher
from tests.costsched.service.booked_world import NOW, store_blocks


class Seller(LocalLauncher):
    """A launcher that sells capacity blocks from a counter (what a cloud would)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.sold: dict[str, Purchased] = {}
        self.bought = 0
        self.sold_out = False

    def purchase(self, booked, token, job_id):  # noqa: ANN001, ANN201
        if self.sold_out:
            raise CapacityError(booked.offering, "InvalidCapacityBlockOfferingId.NotFound: "
                                "gone")
        self.bought += 1
        self.sold[token] = Purchased("cr-1", booked.start, booked.end, "scheduled")
        return self.sold[token]

    def purchased(self, booked, token):  # noqa: ANN001, ANN201
        return self.sold.get(token)


def _world(tmp_path: Path):  # noqa: ANN202
    store = PriceStore(f"sqlite:///{tmp_path}/s.db")
    store_blocks(store)
    (block, _) = store.booked.offered(NOW)
    return store, block, Seller(tmp_path / "local")


def test_a_purchase_a_crash_left_unrecorded_is_found_not_bought_again(tmp_path: Path) -> None:
    store, block, seller = _world(tmp_path)
    token = booking_token("job", block)
    assert token == booking_token("job", block) != booking_token("other", block)
    # A costsched that recorded its intent and bought, then died before recording it:
    store.booked.intend(token, block, job_id=None, at=NOW)
    seller.purchase(block, token, None)
    found = book(store, seller, block, token=token, at=NOW)
    assert seller.bought == 1 and (found.state, found.reservation_id) == ("scheduled", "cr-1")
    # Asked again (the same job launched again): the booking stands, nothing bought.
    assert book(store, seller, block, token=token, at=NOW).id == found.id
    assert seller.bought == 1


def test_a_block_no_longer_for_sale_fails_in_one_line_and_is_marked(tmp_path: Path) -> None:
    store, block, seller = _world(tmp_path)
    seller.sold_out = True
    token = booking_token("job", block)
    with pytest.raises(InvalidInput, match="not bought: InvalidCapacityBlockOfferingId"):
        book(store, seller, block, token=token, at=NOW)
    assert store.booked.get(token).state == "failed"
    seller.sold_out = False  # on sale again: asked again, it is bought once
    assert book(store, seller, block, token=token, at=NOW + timedelta(minutes=1)).state \
        == "scheduled"
    assert seller.bought == 1


def test_the_local_launcher_buys_nothing(tmp_path: Path) -> None:
    store, block, _ = _world(tmp_path)
    with pytest.raises(InvalidInput, match=r"the local launcher cannot buy capacity blocks: "
                       r"the aws launcher buys them \(`--launcher aws`\), or launch it "
                       r"without --book$"):
        book(store, LocalLauncher(tmp_path / "l"), block, token="t", at=NOW)
    assert store.booked.get("t").state == "failed"


def test_a_jobs_reservation_is_found_by_the_offering_it_booked(tmp_path: Path) -> None:
    # What a node of a gang in booked capacity is replaced into (`service.jobs.gangs`).
    from dataclasses import replace

    from costsched.service.booked_jobs import reservation_of
    from costsched.store.booked import Booking

    store = PriceStore(f"sqlite:///{tmp_path}/s.db")
    store_blocks(store)
    booked = store.booked.offered(NOW)[0]
    booking = Booking(1, "t", 7, booked, "scheduled", "cr-9", "", NOW, NOW)
    assert reservation_of([booking], booked.offering.key) == "cr-9"
    elsewhere = replace(booked.offering, zone="us-east-1b")
    assert reservation_of([booking], elsewhere.key) == ""
    assert reservation_of([replace(booking, reservation_id="")], booked.offering.key) == ""

"""Capacity bought by `launch --book` whose job then cannot be placed is held, never
invisible: said in one line at the failure (what, until when, what it cost, what uses it
next), listed by `status` while no job uses it, and used by the next `launch --book` of the
job at no further price (planned as paid), nothing bought twice."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

from costsched.cli.booked import booked_lines
from costsched.migration.launcher import CapacityError, Instance, Launcher, Purchased
from costsched.model import InvalidInput, Offering
from costsched.service import jobs as service
from costsched.service.booking import held_unused
from costsched.store import PriceStore
from tests.costsched.service.booked_world import NOW, job_spec, world

HELD = ("capacity block cr-0a1b2c3d4e5f60718 (p5.48xlarge x1, us-east-1a, 2026-12-02 11:30 "
        "to 2026-12-04 11:30 UTC, $1,887.84 paid) is held unused")
NEXT = ": the next `costsched launch --book` of job 'h100-train' uses it"


class Seller(Launcher):
    """A cloud that sells capacity blocks from a counter and starts instances unless
    `full` (no capacity anywhere) or `refuses` (no offering it can start at all)."""

    name = "seller"

    def __init__(self) -> None:
        self.sold: dict[str, Purchased] = {}
        self.bought = 0
        self.full = self.refuses = False
        self.made: dict[str, Instance] = {}

    def purchase(self, booked: Any, token: str, job_id: int | None) -> Purchased:
        self.bought += 1
        self.sold[token] = Purchased("cr-0a1b2c3d4e5f60718", booked.start, booked.end,
                                     "scheduled")
        return self.sold[token]

    def purchased(self, booked: Any, token: str) -> Purchased | None:
        return self.sold.get(token)

    def can_launch(self, offering: Offering) -> bool:
        return not self.refuses

    def launch(self, spec: Any) -> Instance:
        if self.full:
            raise CapacityError(spec.offering, "InsufficientInstanceCapacity")
        made = Instance(f"i-{len(self.made)}", spec.job_id, spec.attempt, spec.offering.key,
                        "pending")
        self.made[made.id] = made
        return made

    def status(self, instance_id: str) -> Instance:
        return self.made[instance_id]

    def request_stop(self, instance_id: str) -> None:
        return

    def terminate(self, instance_id: str) -> None:
        return

    def instances(self, job_id: int | None = None) -> list[Instance]:
        return [i for i in self.made.values() if job_id in (None, i.job_id)]


def launch_book(store: PriceStore, tmp_path: Path, seller: Seller, asked: list) -> Any:
    [job] = service.launch(store, job_spec(tmp_path), launcher=seller, at=NOW,
                           book=lambda plans: asked.append(plans) or True,
                           checkpoint_root=str(tmp_path / "ckpt"))
    return job


def test_a_block_whose_job_fails_is_said_held_and_the_next_launch_uses_it(
        tmp_path: Path) -> None:
    store = world(PriceStore(f"sqlite:///{tmp_path}/s.db"))
    seller, asked = Seller(), []
    seller.full = True  # bought, then no offering starts: the job fails
    failed = launch_book(store, tmp_path, seller, asked)
    assert store.jobs.get(failed.id).state == "failed" and seller.bought == 1
    assert asked[0].best.booked.upfront_usd == pytest.approx(1887.84)

    # Said where the failure is shown (launch's table and `status`), in one line.
    (shown,) = service.status(store, None, failed.id, at=NOW)
    assert booked_lines(shown, NOW) == [f"booked: {HELD}{NEXT}"]
    [(booking, name, state)] = held_unused(store, NOW)
    assert (booking.job_id, name, state) == (failed.id, "h100-train", "failed")
    assert held_unused(store, NOW, {failed.id}) == []  # its job's own lines say it

    # The next `launch --book`: planned as paid, used, nothing bought again.
    seller.full = False
    again = launch_book(store, tmp_path, seller, asked)
    assert seller.bought == 1 and asked[1].best.booked.upfront_usd == 0.0
    assert asked[1].best.booked.offering_id == booking.booked.offering_id
    [used] = store.booked.of_job(again.id)
    assert used.token == booking.token and used.reservation_id == "cr-0a1b2c3d4e5f60718"
    assert held_unused(store, NOW) == []
    store.dispose()


def test_a_block_bought_for_a_job_that_cannot_be_placed_is_said_in_the_refusal(
        tmp_path: Path, cli: Any, db_path: Path) -> None:
    store = world(PriceStore(f"sqlite:///{db_path}"))
    seller = Seller()
    seller.refuses = True  # bought before the job is placed; then nothing can start it
    with pytest.raises(InvalidInput) as refused:
        launch_book(store, tmp_path, seller, [])
    assert str(refused.value) == ("job h100-train: no offering that seller can launch meets "
                                  f"its constraints now; {HELD}{NEXT}")
    assert store.jobs.records() == [] and seller.bought == 1
    [(booking, name, state)] = held_unused(store, NOW)
    assert (booking.job_id, name, state) == (None, "h100-train", "")
    assert held_unused(store, booking.booked.end) == []  # once it ends, nothing is held

    # `status` (which reads the clock) shows the money spent while no job uses it: the
    # block's times moved to days from the clock's now.
    start = datetime.now(timezone.utc).replace(second=0, microsecond=0) + timedelta(days=1)
    store.booked.advance(booking.token, booking.state, at=NOW, start=start,
                         end=start + timedelta(days=2))
    store.dispose()
    line = HELD.replace("2026-12-02 11:30 to 2026-12-04 11:30", f"{start:%Y-%m-%d %H:%M} to "
                        f"{start + timedelta(days=2):%Y-%m-%d %H:%M}") + NEXT
    result = cli("status", "--no-reconcile")
    assert result.exit_code == 0, result.output
    assert f"booked: {line}" in " ".join(result.output.split())
    doc = json.loads(cli("status", "--no-reconcile", "--json").output)
    [held] = doc["held_bookings"]
    assert (held["job"], held["job_id"], held["upfront_usd"]) == ("h100-train", None, 1887.84)
    assert held["end"] == (start + timedelta(days=2)).isoformat() and held["line"] == line

"""A job planned across spot, on-demand and capacity booked ahead, from stored prices,
stored spot availability and stored capacity block offerings."""

from __future__ import annotations

from pathlib import Path

from costsched.service import plan
from costsched.store import PriceStore
from tests.costsched.service.booked_world import NOW, job_spec, world


def test_an_h100_job_plans_spot_then_a_block_for_less_than_spot_or_on_demand(
        tmp_path: Path) -> None:
    # (on the launcher configured, local: priced all the same for aws, which buys blocks)
    store = world(PriceStore(f"sqlite:///{tmp_path}/s.db"))
    result = plan(store, job_spec(tmp_path), at=NOW)
    booked = result.booked[0]
    assert booked is not None
    best, base = booked.best, booked.baseline
    # The best of the two plans without a booking, both priced...
    assert booked.on_demand.feasible and booked.spot is not None and booked.spot.feasible
    assert base.usd == min(booked.on_demand.usd, booked.spot.usd)
    # ...is beaten by a plan that buys a block.
    assert best.booked is not None and best.booked.offering.market == "capacity_block"
    assert best.usd < base.usd and booked.saves_usd == base.usd - best.usd
    # Its parts: spot before the block (on-demand behind it), then the block, and the
    # block's upfront price counted once.
    kinds = [p.kind for p in best.parts]
    assert kinds[:2] == ["spot", "on_demand"] and "capacity_block" in kinds
    block = next(p for p in best.parts if p.kind == "capacity_block")
    assert block.usd == best.booked.upfront_usd
    assert abs(sum(p.usd for p in best.parts) - best.usd) < 1e-6
    assert abs(sum(p.work_hours for p in best.parts if p.kind != "on_demand") - 60) < 1e-6
    # The deadline holds: nothing ends after it.
    assert max(p.end_hours for p in best.parts) <= 96 + 1e-9

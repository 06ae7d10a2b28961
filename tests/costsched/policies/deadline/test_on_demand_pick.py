"""Where a deadline policy runs a job on on-demand: the zone whose on-demand costs least
over the time it runs there, the start (a restart billed, the checkpoint's egress)
included; the checkpoint's zone on a tie."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from costsched.decide.deadline import next_placements
from costsched.policies.deadline import NONE, DeadlinePolicy, SpotHedge
from costsched.policies.deadline.base import DeadlineState, MarketNow
from costsched.policies.deadline.on_demand_pick import cheapest_on_demand, on_demand_usd

H = 3600.0
EAST, WEST = 0, 1  # the checkpoint's zone ($1.00/h on-demand) and another region's ($0.90/h)


def state(last_zone: int = EAST, work_h: float = 1.0, left_h: float = 1.5) -> DeadlineState:
    one = np.ones(1)
    return DeadlineState(progress=one * 0.0, work=one * work_h * H, time_left=one * left_h * H,
                         placement=np.array([NONE]), overhead_left=one * 0.0,
                         restart=720.0, checkpoint=1800.0, home=np.array([EAST]),
                         deadline=one * left_h * H, last_zone=np.array([last_zone]))


def market(egress_usd: float, od: tuple[float, float] = (1.00, 0.90)) -> MarketNow:
    """Two zones in two regions, no spot in either now."""
    return MarketNow(tick=H, spot_available=np.array([[False, False]]),
                     available_for=np.zeros((1, 2)), spot_price=np.array([[0.30, 0.27]]),
                     on_demand_price=np.array([od]), region=np.array([0, 1]),
                     move_usd=np.array([[0.0, egress_usd], [egress_usd, 0.0]]))


def test_each_zone_s_on_demand_is_priced_over_its_run_and_its_start() -> None:
    # An hour there and a 12-minute restart billed: east $1.00 x 1.2 h = $1.20; west
    # $0.90 x 1.2 h = $1.08, and $0.05 of egress: $1.13.
    usd = on_demand_usd(state(), market(0.05), H)
    assert usd == pytest.approx(np.array([[1.20, 1.13]]))


@pytest.mark.parametrize(("egress_usd", "last_zone", "od", "zone"), [
    (0.05, EAST, (1.00, 0.90), WEST),  # $1.13 against $1.20: the cheaper region
    (5.00, EAST, (1.00, 0.90), EAST),  # $6.08 against $1.20: the egress keeps it home
    (5.00, NONE, (1.00, 0.90), WEST),  # before its first start, no checkpoint to copy
    (0.00, EAST, (1.00, 1.00), EAST),  # a tie: where its checkpoint is
    (0.00, WEST, (1.00, 1.00), WEST),
])
def test_the_cheapest_on_demand_its_start_included(egress_usd: float, last_zone: int,
                                                   od: tuple[float, float],
                                                   zone: int) -> None:
    chosen = cheapest_on_demand(state(last_zone), market(egress_usd, od), H)
    assert list(chosen) == [2 + zone]


def test_the_safety_rule_and_a_live_job_that_never_waits_take_the_cheapest() -> None:
    # Half an hour of slack with a 12-minute restart: spot is not safe; no spot anyway.
    s, m = state(work_h=1.0, left_h=1.5), market(0.05)
    assert list(DeadlinePolicy.fallback(s, m)) == [2 + WEST]
    assert list(next_placements(SpotHedge(), s, m, wait=False)) == [2 + WEST]
    # The egress dearer than the saving: on-demand where the checkpoint is.
    assert list(next_placements(SpotHedge(), s, market(5.0), wait=False)) == [2 + EAST]


def test_spot_hedge_bridges_a_wait_on_the_cheaper_region_s_on_demand_when_it_pays() -> None:
    # spot-hedge's own market (test_hedge): no spot anywhere, 3 hours of slack for 40 of
    # work: it bridges on on-demand. The wait it bridges is 70 minutes (a dry spell of an
    # hour after 10 min without spot); with the checkpoint's $1.00 of egress, the west at
    # $2.00/h costs $2.33 + $0.40 + $1.00 = $3.73 over it, the east at $3.06/h $3.57 +
    # $0.61 = $4.18: the west. At $2.80/h the west's $3.27 + $0.56 + $1.00 = $4.83 does not
    # repay the egress: the east, where its checkpoint is.
    from tests.costsched.policies.deadline.test_hedge import market as hedge_market
    from tests.costsched.policies.deadline.test_hedge import state as hedge_state

    tight, policy = hedge_state(40, 43), SpotHedge()
    for west_usd, zone in ((2.00, WEST), (2.80, EAST)):
        m = replace(hedge_market((False, False), share=0.8),
                    on_demand_price=np.array([[3.06, west_usd]]))
        assert policy.decide(tight, m)[0] == m.on_demand(zone)

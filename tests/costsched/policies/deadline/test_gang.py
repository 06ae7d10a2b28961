"""A gang as the deadline policies price it: N x the price, a move's restart on all nodes
but the checkpoint's egress once (the one move price), so a gang moves where one node
would not."""

from __future__ import annotations

import numpy as np
import pytest

from costsched.optimize.decision import Overheads, move_price
from costsched.policies.deadline import SpotAnywhere, SpotRisk
from costsched.policies.deadline.base import DeadlineState, MarketNow
from costsched.policies.deadline.gang import gang_restart, move_usd, priced

H = 3600.0
RESTART = 180.0  # seconds, the gang's (boot and rendezvous)
EGRESS = 1.0  # USD: the checkpoint from us-east-1 to us-west-2


def _state(nodes: int, placement: int = 0) -> DeadlineState:
    one = np.ones(1)
    # 2 h of work left, 30 h to the deadline: no hurry; running spot in zone 0.
    return DeadlineState(progress=one * 10 * H, work=one * 12 * H, time_left=one * 30 * H,
                         placement=np.array([placement]), overhead_left=one * 0.0,
                         restart=RESTART, checkpoint=1800.0, home=np.array([0]),
                         deadline=one * 40 * H, last_zone=np.array([0]), nodes=nodes)


def _market() -> MarketNow:
    # Zone 0 (us-east-1) at $1.00, zone 1 (us-west-2) at $0.90 per instance-hour, both
    # with spot for the gang for 10 h so far.
    return MarketNow(tick=300.0, spot_available=np.array([[True, True]]),
                     available_for=np.array([[10 * H, 10 * H]]),
                     spot_price=np.array([[1.0, 0.9]]),
                     on_demand_price=np.array([[3.06, 3.06]]), region=np.array([0, 1]),
                     move_usd=np.array([[0.0, EGRESS], [EGRESS, 0.0]]))


def test_a_gang_is_priced_n_times_and_a_move_pays_the_egress_once() -> None:
    market = priced(_state(16), _market())
    assert market.spot_price[0].tolist() == pytest.approx([16.0, 14.4])
    assert market.on_demand_price[0].tolist() == pytest.approx([16 * 3.06, 16 * 3.06])
    assert priced(_state(1), _market()).spot_price[0].tolist() == [1.0, 0.9]
    move = move_usd(_state(16), np.array([14.4]), np.array([EGRESS]))
    # The restart billed on all 16 nodes at the new price, the egress once.
    assert move[0] == pytest.approx(RESTART / H * 14.4 + EGRESS)
    # It is the one move price (optimize.decision.move_price), not a second one.
    one = move_price(Overheads(RESTART / 60, 0.0, float("inf"), 0.0, 0.0), np.array([14.4]),
                     0, np.array([EGRESS]), 1.0, 0.0)
    assert move[0] == pytest.approx(float(one.total[0]))


@pytest.mark.parametrize("policy", [SpotAnywhere(), SpotRisk()])
def test_a_gang_moves_for_a_lower_price_where_one_node_would_not(policy) -> None:
    # One node: $0.10/h less for 2 h saves $0.20, against $1.00 of egress and the restart:
    # it stays. Sixteen: $3.20 saved against $1.00 of egress (once) and $0.72 of restart.
    assert policy.decide(_state(1), _market())[0] == 0
    assert policy.decide(_state(16), _market())[0] == 1


def test_per_run_gang_sizes_in_one_batch() -> None:
    one = np.ones(2)
    state = DeadlineState(progress=one * 10 * H, work=one * 12 * H, time_left=one * 30 * H,
                          placement=np.array([0, 0]), overhead_left=one * 0.0,
                          restart=np.array([RESTART, RESTART]), checkpoint=1800.0,
                          home=np.array([0, 0]), deadline=one * 40 * H,
                          last_zone=np.array([0, 0]), nodes=np.array([1, 16]))
    market = _market()
    market = MarketNow(**{**market.__dict__,
                          **{k: np.repeat(getattr(market, k), 2, axis=0)
                             for k in ("spot_available", "available_for", "spot_price",
                                       "on_demand_price")}})
    assert SpotAnywhere().decide(state, market).tolist() == [0, 1]


def test_gang_restart_adds_the_rendezvous_for_more_than_one_node() -> None:
    assert gang_restart(60.0, 8, 120.0) == 180.0
    assert gang_restart(60.0, 1, 120.0) == 60.0
    with pytest.raises(ValueError, match="nodes"):
        gang_restart(60.0, 0, 120.0)

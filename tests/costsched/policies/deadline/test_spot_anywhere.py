"""spot-anywhere's decisions worked out by hand: without spot anywhere it waits out the
shortage while spot's expected pace still fits the deadline."""

from __future__ import annotations

import numpy as np

from costsched.policies.deadline import NONE, SpotAnywhere
from costsched.policies.deadline.base import DeadlineState, MarketNow

H = 3600.0
SPOT, OD = 0.918, 3.06
ON_DEMAND = 1  # one zone: placement 1 is on-demand in zone 0


def _state(work_h: float, progress_h: float, deadline_h: float, elapsed_h: float,
           placement: int = NONE) -> DeadlineState:
    one = np.ones(1)
    return DeadlineState(progress=one * progress_h * H, work=one * work_h * H,
                         time_left=one * (deadline_h - elapsed_h) * H,
                         placement=np.array([placement]), overhead_left=one * 0.0,
                         restart=180.0, checkpoint=1800.0, home=np.array([0]),
                         deadline=one * deadline_h * H, last_zone=np.array([0]))


def _market(spot: bool, share: float | None, spell_h: float) -> MarketNow:
    return MarketNow(tick=195.0, spot_available=np.array([[spot]]),
                     available_for=np.array([[195.0 if spot else 0.0]]),
                     spot_price=np.array([[SPOT]]), on_demand_price=np.array([[OD]]),
                     region=np.array([0]), move_usd=np.zeros((1, 1)),
                     spell_mean=None if share is None else np.array([[spell_h * H]]),
                     spot_share=None if share is None else np.array([share]))


def test_without_spot_it_waits_while_spot_s_expected_pace_fits() -> None:
    # 12 h of work left in 20 h: behind the straight line (8 of 20 h done at half time).
    # Spot 90% of the past in 3-h spells: a pace of 0.9 x (1 - (3 + 15 min) / 3 h) = 0.81
    # needs 14.8 h of the 19.9 h left after this tick and a restart: it waits for spot.
    state = _state(20, 8, 40, 20)
    assert SpotAnywhere().decide(state, _market(False, 0.9, 3.0))[0] == NONE
    # Spot half of the time: a pace of 0.45 needs 26.7 h: on-demand.
    assert SpotAnywhere().decide(state, _market(False, 0.5, 3.0))[0] == ON_DEMAND
    # Without the market's past: the straight line alone, on-demand.
    assert SpotAnywhere().decide(state, _market(False, None, 3.0))[0] == ON_DEMAND
    # Ahead of the straight line (12 of 20 h done at half time): it waits whatever the pace.
    assert SpotAnywhere().decide(_state(20, 12, 40, 20), _market(False, 0.5, 3.0))[0] == NONE


"""spot-risk: waits for spot while its expected pace fits, and starts a spot spell only
where it repays the slack it risks."""

from __future__ import annotations

import numpy as np

from costsched.policies.deadline import NONE, SpotAnywhere, SpotRisk
from costsched.policies.deadline.base import DeadlineState, MarketNow
from costsched.policies.deadline.multi_zone import line_pace

H = 3600.0
SPOT, OD = 0.918, 3.06


def _state(work_h: float, progress_h: float, deadline_h: float, elapsed_h: float
           ) -> DeadlineState:
    one = np.ones(1)
    return DeadlineState(progress=one * progress_h * H, work=one * work_h * H,
                         time_left=one * (deadline_h - elapsed_h) * H,
                         placement=np.array([NONE]), overhead_left=one * 0.0,
                         restart=180.0, checkpoint=1800.0, home=np.array([0]),
                         deadline=one * deadline_h * H, last_zone=np.array([0]))


def _market(spot: bool, share: float, spell_h: float, age_h: float = 0.0) -> MarketNow:
    return MarketNow(tick=195.0, spot_available=np.array([[spot]]),
                     available_for=np.array([[age_h * H if spot else 0.0]]),
                     spot_price=np.array([[SPOT]]), on_demand_price=np.array([[OD]]),
                     region=np.array([0]), move_usd=np.zeros((1, 1)),
                     spell_mean=np.array([[spell_h * H]]), spot_share=np.array([share]))


def test_without_spot_it_waits_while_spot_s_expected_pace_fits() -> None:
    # 12 h of work left in 20 h: behind the straight line (8 of 20 h done at half time).
    # With spot 90% of the past in 3-h spells, spot's pace is
    # 0.9 x (1 - (3 min + 15 min) / 3 h) x 0.8 = 0.65: 18.5 h of the 19.9 h left after this
    # tick and a restart: spot-risk waits.
    state = _state(20, 8, 40, 20)
    assert line_pace(state, _market(False, 0.9, 3.0))[0][0]
    assert SpotRisk().decide(state, _market(False, 0.9, 3.0))[0] == NONE
    # Spot half of the time: a pace of 0.36 needs 33 h: on-demand.
    assert SpotRisk().decide(state, _market(False, 0.5, 3.0))[0] == 1
    # Spot 75% of the time: a pace of 0.54 needs 22.2 h: on-demand, where spot-anywhere,
    # trusting the pace undiscounted (0.675: 17.8 h), waits.
    assert SpotRisk().decide(state, _market(False, 0.75, 3.0))[0] == 1
    assert SpotAnywhere().decide(state, _market(False, 0.75, 3.0))[0] == NONE


def test_a_job_without_slack_starts_only_spells_that_repay_the_risk() -> None:
    # 40 h of work left in 41 h. A new spell in a zone whose spells last 10 minutes is
    # likely to end before the job does: a restart now, 15 min of work lost and another
    # restart (21 min of the 57 min of slack) for 10 minutes of spot: on-demand instead.
    state = _state(48, 8, 52, 11)
    assert SpotAnywhere().decide(state, _market(True, 0.9, 10 / 60))[0] == 0  # spot
    assert SpotRisk().decide(state, _market(True, 0.9, 10 / 60))[0] == 1
    # Spells of 20 h repay the same risk: spot.
    assert SpotRisk().decide(state, _market(True, 0.9, 20.0))[0] == 0


def test_without_market_history_it_is_spot_anywhere() -> None:
    state = _state(20, 8, 40, 20)
    market = _market(False, 0.9, 3.0)
    bare = MarketNow(market.tick, market.spot_available, market.available_for,
                     market.spot_price, market.on_demand_price, market.region,
                     market.move_usd)
    assert SpotRisk().decide(state, bare)[0] == SpotAnywhere().decide(state, bare)[0] == 1

"""Each deadline policy whose own choice can be on-demand says why in its terms and
figures (`DeadlinePolicy.on_demand_why`, the words of a live placement on on-demand):
spot-anywhere without spot anywhere, or waiting for spot in its checkpoint's region, and
behind; spot-risk behind its discounted pace, or declining a spot start that does not
repay the slack it risks; uniform-progress by the rule that took it."""

from __future__ import annotations

import numpy as np

from costsched.policies.deadline import NONE, SpotAnywhere, SpotRisk
from costsched.policies.deadline.base import DeadlineState, MarketNow
from costsched.policies.deadline.uniform_progress import UniformProgress

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


def _market(spot: bool, share: float | None, spell_h: float) -> MarketNow:
    known = share is not None
    return MarketNow(tick=195.0, spot_available=np.array([[spot]]),
                     available_for=np.array([[0.0]]),
                     spot_price=np.array([[SPOT]]), on_demand_price=np.array([[OD]]),
                     region=np.array([0]), move_usd=np.zeros((1, 1)),
                     spell_mean=np.array([[spell_h * H]]) if known else None,
                     spot_share=np.array([share]) if known else None)


def _on_demand(policy: object, state: DeadlineState, market: MarketNow) -> str:
    assert policy.choose(state, market)[0] == 1  # type: ignore[attr-defined]  # its own
    return policy.on_demand_why(state, market)  # type: ignore[attr-defined]


def test_spot_anywhere_without_spot_says_how_the_job_is_behind() -> None:
    # 12 h of work left in 20 h, 8 h done at half time: behind the line (10 h by the next
    # decision) and behind spot's pace: 0.5 x (1 - 18 min / 3 h) = 45%, 27 h for 12 h.
    said = _on_demand(SpotAnywhere(), _state(20, 8, 40, 20), _market(False, 0.5, 3.0))
    assert said == (
        "spot-anywhere finds no spot now in any zone it allows and runs on-demand as the "
        "job is behind: 8 h of work done, short of the 10 h the straight line to the "
        "deadline reaches by its next decision, in 3 min, and at spot's expected pace (45% "
        "of the time making progress) the 12 h of work left would take 27 h, more than the "
        "20 h left after its next decision and a restart")


def test_spot_risk_says_its_discounted_pace_or_the_line_without_the_past() -> None:
    state = _state(20, 8, 40, 20)
    said = _on_demand(SpotRisk(), state, _market(False, 0.5, 3.0))
    assert said.endswith("runs on-demand as the job is behind: at spot's expected pace (36% "
                         "of the time making progress) the 12 h of work left would take 33 "
                         "h, more than the 20 h left after its next decision and a restart")
    said = _on_demand(SpotRisk(), state, _market(False, None, 3.0))
    assert said.endswith("behind: 8 h of work done, short of the 10 h the straight line to "
                         "the deadline reaches by its next decision, in 3 min")


def test_spot_risk_says_what_a_declined_spot_start_would_save_and_risk() -> None:
    # 40 h of work left in 41 h, spells of 10 minutes: the spell saves $0.36 of on-demand;
    # a start now and a likely preemption risk slack worth $15.78.
    said = _on_demand(SpotRisk(), _state(48, 8, 52, 11), _market(True, 0.9, 10 / 60))
    assert said.startswith("spot-risk risks no spot start now: the job is behind (")
    assert said.endswith(
        "and the spot spell it would start on is expected to save $0.36 over on-demand, "
        "less than the $15.78 the slack it risks is worth (a start now, and the lost work "
        "and restart of a preemption before the work is done)")


def test_uniform_progress_names_the_rule_that_took_on_demand() -> None:
    up = UniformProgress()
    assert _on_demand(up, _state(20, 8, 40, 20), _market(False, 0.9, 3.0)) == (
        "uniform-progress runs on-demand while its home zone has no spot and the job is "
        "behind the straight line to the deadline (8 h of work done, 10 h by the line now)")
    assert _on_demand(up, _state(20, 0, 20.05, 0), _market(True, 0.9, 3.0)) == (
        "uniform-progress's safety net: the work left (20 h) and two restarts (6 min) no "
        "longer fit in the 20 h to the deadline, in decisions every 3 min: on-demand to the "
        "end")


def test_uniform_progress_on_on_demand_says_what_it_waits_for() -> None:
    """Its hysteresis (asked where a decision reads it of a job kept on on-demand)."""
    up = UniformProgress()
    behind = _state(20, 9, 40, 20)  # 9 h done, the line at 10 h 3 min two restarts on
    behind.placement = np.array([1])  # on-demand in its home zone
    assert _on_demand(up, behind, _market(True, 0.9, 3.0)) == (
        "uniform-progress keeps on-demand until the job is ahead of the straight line to "
        "the deadline two restarts from now (9 h of work done, 10 h by the line then)")
    ahead = _state(20, 12, 40, 20)
    ahead.placement = np.array([1])
    assert _on_demand(up, ahead, _market(False, 0.9, 3.0)) == (
        "uniform-progress keeps on-demand while its home zone has no spot")

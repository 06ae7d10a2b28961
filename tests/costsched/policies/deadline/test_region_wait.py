"""spot-anywhere after a preemption, with spot only in another region: it waits where its
checkpoint is when the wait costs less than the checkpoint's egress, and crosses when the
slack the wait would spend is worth more (a job with a 50 GB checkpoint in us-east-1 and
spot now only in us-west-2, $0.02/GB: $1.00 of egress)."""

from __future__ import annotations

import numpy as np
import pytest

from costsched.policies.deadline import NONE, SpotAnywhere
from costsched.policies.deadline.base import (
    DeadlineState,
    MarketNow,
    recent_share,
    recent_spell,
    spell_mean,
    spot_share,
)
from costsched.policies.deadline.past import ended as _ended
from costsched.policies.deadline.past import runs_before as _runs_before

H = 3600.0
EAST, WEST = 0, 1  # zones: us-east-1c (the checkpoint's), us-west-2a


def _state(work_h: float, deadline_h: float, elapsed_h: float) -> DeadlineState:
    one = np.ones(1)
    return DeadlineState(progress=one * 0.0, work=one * work_h * H,
                         time_left=one * (deadline_h - elapsed_h) * H,
                         placement=np.array([NONE]), overhead_left=one * 0.0,
                         restart=720.0, checkpoint=15.0, home=np.array([EAST]),
                         deadline=one * deadline_h * H, last_zone=np.array([EAST]))


def _market(egress_usd: float, dry_h: float) -> MarketNow:
    """Spot now in the west only; both zones had spot 90% of their recent past in 5-hour
    spells, and the east's spells without spot last `dry_h` on average."""
    return MarketNow(tick=195.0, spot_available=np.array([[False, True]]),
                     available_for=np.array([[0.0, 3600.0]]),
                     spot_price=np.array([[0.918, 0.918]]),
                     on_demand_price=np.array([[3.06, 3.06]]),
                     region=np.array([0, 1]),
                     move_usd=np.array([[0.0, egress_usd], [egress_usd, 0.0]]),
                     spell_mean=np.array([[5 * H, 5 * H]]), spot_share=np.array([0.99]),
                     zone_share=np.array([[0.9, 0.9]]),
                     dry_mean=np.array([[dry_h * H, dry_h * H]]),
                     dry_for=np.array([[600.0, 0.0]]),
                     spot_spell=np.array([[5 * H, 5 * H]]))


def test_a_preemption_with_ample_slack_waits_instead_of_paying_the_egress() -> None:
    # 40 h of work in 60 h: at a pace of 0.9 x 0.9 x (1 - 12 min / 5 h) the work fits in
    # the time left even after a 1-hour wait, so the wait costs nothing: it stays.
    assert SpotAnywhere().decide(_state(40, 60, 0), _market(1.0, 1.0))[0] == NONE


def test_it_crosses_when_the_wait_costs_more_than_the_egress() -> None:
    # 40 h of work in 48 h: the pace no longer fits, every hour waited is on-demand work
    # later (worth more than $1.00): it moves to spot in the west now.
    assert SpotAnywhere().decide(_state(40, 48, 0), _market(1.0, 1.0))[0] == WEST
    # With slack to spare but nothing to pay for the move, it crosses too (as it always
    # did between zones of one region).
    assert SpotAnywhere().decide(_state(40, 60, 0), _market(0.0, 1.0))[0] == WEST


def test_the_recent_past_only_and_the_older_the_less() -> None:
    flags = np.array([[True] * 10 + [False] * 10])
    share = recent_share(flags, 3600.0, memory_hours=5.0)
    # At tick t the share counts ticks before t only (tick 0: the prior alone).
    assert share[0, 0] == spot_share(0.0, 0.0)
    # After 10 hours with spot, weights halving every 5 hours: 10 hours counted as less.
    seen = 3600.0 * sum(0.5 ** (k / 5) for k in range(10))
    assert share[0, 10] == pytest.approx(spot_share(seen, seen))
    # Hours without spot count more than the older hours with it: below the plain share.
    plain = spot_share(10 * 3600.0, 19 * 3600.0)
    assert share[0, 19] < plain
    changed = flags.copy()
    changed[0, 15:] = True  # the future does not change the past's statistics
    np.testing.assert_array_equal(recent_share(changed, 3600.0, 5.0)[0, :16], share[0, :16])
    # A dry spell of 10 ticks ends at tick 20 (seen there), none before.
    dry = np.concatenate([~flags, np.ones((1, 3), dtype=bool) & False], axis=1)
    ended = _ended(dry, _runs_before(dry) * 3600.0)
    assert ended[0, 20] == 10 * 3600.0 and ended[0].sum() == 10 * 3600.0
    means = recent_spell(ended, 3600.0, memory_hours=1e9)
    assert means[0, 19] == spell_mean(0.0, 0.0)
    assert means[0, 20] == spell_mean(10 * 3600.0, 1.0)


def test_after_an_early_preemption_it_is_not_stuck_on_on_demand() -> None:
    from costsched.backtest.deadline import DeadlineJob, simulate
    from costsched.policies.deadline import Greedy
    from tests.costsched.backtest.deadline.traces import trace

    # Spot for the first hour, none for 4 hours (on-demand while behind), then spot to the
    # end: 10 h of work due in 14 h leaves the slack to go back to spot, and it does.
    market = trace(["1" * 60 + "0" * 240 + "1" * 900], ["us-east-1a"], 60)
    job = DeadlineJob(10, 14, 3, 10, 1.0)
    runs = {p.name: simulate(market, p, job, np.array([0]), np.array([0])).iloc[0]
            for p in (SpotAnywhere(), Greedy())}
    mine = runs["spot-anywhere"]
    assert mine["met"] and mine["preemptions"] == 1
    # Spot from the return of spot (5 h in) to the end: the 6.4 h of work left then.
    assert mine["spot_hours"] > 7.4 and mine["on_demand_hours"] < 3.2
    assert runs["greedy"]["on_demand_hours"] > 9  # on-demand to the end once on it
    assert mine["cost_usd"] < runs["greedy"]["cost_usd"] * 0.6


def test_recent_statistics_match_their_definition_tick_by_tick() -> None:
    rng = np.random.default_rng(3)
    flags = rng.random((2, 3000)) < 0.6
    ended = np.where(rng.random((2, 3000)) < 0.1, rng.random((2, 3000)) * 1e4, 0.0)
    tick, memory = 60.0, 1.0  # 50 halvings over the trace: several closed-form blocks
    decay = 0.5 ** (tick / (memory * 3600))
    seen, true, total, count = (np.zeros(2) for _ in range(4))
    share, spell = np.empty((2, 3000)), np.empty((2, 3000))
    for t in range(3000):
        share[:, t] = spot_share(true, seen)
        seen, true = seen * decay + tick, true * decay + flags[:, t] * tick
        total, count = total * decay + ended[:, t], count * decay + (ended[:, t] > 0)
        spell[:, t] = spell_mean(total, count)
    np.testing.assert_allclose(recent_share(flags, tick, memory), share, rtol=1e-12)
    np.testing.assert_allclose(recent_spell(ended, tick, memory), spell, rtol=1e-12)

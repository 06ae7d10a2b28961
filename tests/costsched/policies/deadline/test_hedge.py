"""spot-hedge: starts weighed against waiting, slack priced by the shortfall chance, and
on-demand as a hedge when slack is short; on hand-made markets and traces."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from costsched.backtest.deadline import DeadlineJob, simulate
from costsched.policies.deadline import NONE, SpotAnywhere, SpotHedge, keeps_deadline
from costsched.policies.deadline.base import DeadlineState, MarketNow
from costsched.policies.deadline.hedge import (
    HedgeConstants,
    shortfall_chance,
    slack_usd_per_second,
    spot_rates,
)
from costsched.policies.deadline.outlook import learned
from tests.costsched.backtest.deadline.traces import Recorder, trace

H = 3600.0
EAST, WEST = 0, 1  # us-east-1c (the checkpoint's zone) and us-west-2a


def state(work_h: float, left_h: float, placement: int = NONE) -> DeadlineState:
    one = np.ones(1)
    return DeadlineState(progress=one * 0.0, work=one * work_h * H, time_left=one * left_h * H,
                         placement=np.array([placement]), overhead_left=one * 0.0,
                         restart=720.0, checkpoint=1800.0, home=np.array([EAST]),
                         deadline=one * left_h * H, last_zone=np.array([EAST]))


def market(available: tuple[bool, bool], egress_usd: float = 1.0,
           share: float = 0.9) -> MarketNow:
    """Two zones in two regions, 5-hour spells with spot and 1-hour spells without, spot
    `share` of the past in each and somewhere; spot in the west has held an hour."""
    return MarketNow(tick=195.0, spot_available=np.array([available]),
                     available_for=np.array([[H if available[0] else 0.0,
                                              H if available[1] else 0.0]]),
                     spot_price=np.array([[0.918, 0.918]]),
                     on_demand_price=np.array([[3.06, 3.06]]), region=np.array([0, 1]),
                     move_usd=np.array([[0.0, egress_usd], [egress_usd, 0.0]]),
                     spell_mean=np.array([[5 * H, 5 * H]]), spot_share=np.array([share]),
                     zone_share=np.array([[share, share]]),
                     dry_mean=np.array([[H, H]]),
                     dry_for=np.array([[0.0 if available[0] else 600.0,
                                        0.0 if available[1] else 600.0]]),
                     spot_spell=np.array([[5 * H, 5 * H]]))


def test_a_preemption_waits_for_the_checkpoints_region_while_slack_is_ample() -> None:
    # Spot only in the west, the checkpoint in the east ($1.00 of egress). With 20 hours
    # of slack the shortfall chance is nil and waiting an hour for the east is free: it
    # waits. With 10 hours the wait's slack is worth more than the egress: it crosses. With
    # under 2 hours the shortfall chance is above 0.9: by default (no hedge instead of
    # spot now) it takes the west's spot, as the safety rule allows; with a hedge threshold
    # of 0.9 and slack priced at a weight of 0.5, the west's spot (a restart and lost work
    # each spell, at slack's price) costs more than on-demand, and it hedges on on-demand
    # where its checkpoint is.
    policy, west_only = SpotHedge(), market((False, True))
    assert policy.decide(state(40, 60), west_only)[0] == NONE
    assert policy.decide(state(40, 50), west_only)[0] == WEST
    assert policy.decide(state(40, 41.8), west_only)[0] == WEST
    hedging = SpotHedge(HedgeConstants(hedge_above=0.9, keep_above=0.45, scarcity=0.5))
    assert hedging.decide(state(40, 41.8), west_only)[0] == west_only.on_demand(EAST)
    # Without the egress there is nothing to wait for.
    assert policy.decide(state(40, 60), market((False, True), egress_usd=0.0))[0] == WEST


def test_with_little_slack_it_hedges_on_demand_where_it_could_still_wait() -> None:
    # No spot anywhere now, and none anywhere 20% of the past. With 20 hours of slack it
    # waits; with 5 hours (where spot's shortages alone are expected to take 10) it starts
    # on-demand in the checkpoint's zone although waiting would still be safe.
    policy, none = SpotHedge(), market((False, False), share=0.8)
    assert policy.decide(state(40, 60), none)[0] == NONE
    tight = state(40, 45)
    assert keeps_deadline(tight, none, np.array([NONE]))[0]  # waiting is allowed
    assert policy.decide(tight, none)[0] == none.on_demand(EAST)
    # Once on on-demand, it stays there while spot is not worth leaving for.
    on_od = replace(tight, placement=np.array([none.on_demand(EAST)]))
    assert policy.decide(on_od, none)[0] == none.on_demand(EAST)


def test_the_shortfall_chance_grows_as_the_slack_shrinks_and_the_market_thins() -> None:
    def chance(left_h: float, share: float) -> float:
        m = market((True, True), share=share)
        s = state(40, left_h)
        share_, spell, dry = learned(m, m.spot_available.shape)
        return float(shortfall_chance(s, m, share_, spell, dry, spread=1.0)[0])

    by_slack = [chance(h, 0.9) for h in (70, 60, 50, 45, 42)]
    assert by_slack == sorted(by_slack) and by_slack[0] < 0.05 and by_slack[-1] > 0.95
    by_share = [chance(50, s) for s in (0.99, 0.9, 0.8, 0.6)]
    assert by_share == sorted(by_share)
    # No work left: no shortfall.
    done = replace(state(40, 50), progress=np.array([40 * H]))
    m = market((True, True))
    assert shortfall_chance(done, m, *learned(m, (1, 2)), spread=1.0)[0] == 0.0


def test_a_zone_is_priced_over_its_spell_with_the_move_and_the_wait() -> None:
    m = market((True, False))
    s = state(40, 60)
    share, spell, dry = learned(m, (1, 2))
    free = spot_rates(s, m, spell, dry, np.zeros(1))[0]
    # East: spot now, an hour old: 6 hours expected; billed over its useful part, with
    # its restart, and the next restart and the half checkpoint interval of work lost
    # when it ends (before the work).
    useful, restart, lost = 6 * H - 720, 720, 720 + 900
    assert free[EAST] == pytest.approx(0.918 * (useful + restart + lost) / useful)
    # West: no spot now, waited for (free here), a 5-hour spell, and the $1.00 egress.
    useful = 5 * H - 720
    assert free[WEST] == pytest.approx((0.918 * (useful + restart + lost) + 1.0 * H) / useful)
    priced = spot_rates(s, m, spell, dry, np.full(1, 2.0 / H))[0]
    # At $2 an hour of slack: the west's wait (70 minutes: its dry spell's mean and age)
    # and the slack lost when the spell ends are added; a job without an instance spends
    # a restart's slack whatever it starts, so that is not.
    assert priced[WEST] - free[WEST] == pytest.approx(2.0 * (H + 600 + lost) / useful)
    assert priced[EAST] - free[EAST] == pytest.approx(2.0 * lost / (6 * H - 720))
    # Running in the east: staying costs no restart now (the next one, when it ends, yes).
    running = replace(s, placement=np.array([EAST]))
    assert spot_rates(running, m, spell, dry, np.zeros(1))[0, EAST] == pytest.approx(
        0.918 * (6 * H + lost) / (6 * H))


def test_slack_is_worth_the_on_demand_premium_times_the_chance_more_as_it_runs_short() -> None:
    m = market((True, True))
    s = state(40, 70)
    assert slack_usd_per_second(s, m, np.zeros(1), 0.5)[0] == 0.0
    ample = slack_usd_per_second(s, m, np.ones(1), 0.5)[0]
    assert ample * H == pytest.approx(3.06 - 0.918)  # 40 h of work, 30 h of slack: x 1
    # 5 hours to spare, less a restart, and less the restart and checkpoint interval spot
    # cannot spend (the safety rule keeps them).
    short = slack_usd_per_second(state(40, 45), m, np.ones(1), 0.5)[0]
    assert short * H == pytest.approx((3.06 - 0.918) * 0.5 * 40 / (5 - 2 * 720 / H - 0.5))


def test_a_flickering_zone_is_left_alone_while_waiting_for_a_lasting_one_is_cheap() -> None:
    # Zone a (us-east-1a, the home zone) has had spot in one-tick spells for 20 minutes and
    # goes on so for 40 more; zone b (same region) is back 40 minutes after the job starts,
    # for good. With hours of slack spot-hedge waits for b and pays no restart for a
    # flicker; spot-anywhere starts on every flicker.
    job = DeadlineJob(1.0, 8.0, restart_minutes=3, checkpoint_minutes=10)
    t = trace(["10" * 30 + "0" * 500, "0" * 60 + "1" * 500], ["us-east-1a", "us-east-1b"], 60)
    hedge = Recorder(SpotHedge())
    runs = simulate(t, hedge, job, np.array([20]), np.array([0]))
    assert (hedge.placements[0, :40] == NONE).all() and (hedge.placements[0, 40:60] == 1).all()
    assert runs["met"].all() and runs["preemptions"].iloc[0] == 0
    flickers = simulate(t, SpotAnywhere(), job, np.array([20]), np.array([0]))
    assert flickers["preemptions"].iloc[0] == 20
    assert runs["cost_usd"].iloc[0] < flickers["cost_usd"].iloc[0]


@pytest.mark.parametrize("seed", range(3))
def test_it_meets_every_deadline_on_demand_could_and_replays_alike(seed: int) -> None:
    rng = np.random.default_rng(seed)
    zones = ["us-east-1a", "us-east-2a", "us-west-2a"]
    t = trace(np.repeat(rng.random((3, 40)) < 0.6, 6, axis=1), zones, 60)
    starts, homes = np.repeat([0, 40], 3), np.tile(np.arange(3), 2)
    job = DeadlineJob(2.0, 3.0, restart_minutes=12, checkpoint_minutes=30, checkpoint_gb=50)
    # Both deadlines and restarts at once (per run), each history.
    deadline = np.repeat([2.3, 3.0], 6)
    restart = np.tile(np.repeat([3.0, 12.0], 3), 2)
    for history in ("full", "none"):
        runs = simulate(t, SpotHedge(), job, np.tile(starts, 2), np.tile(homes, 2), deadline,
                        restart, history=history)
        assert runs["met"].all(), history
        again = simulate(t, SpotHedge(), job, np.tile(starts, 2), np.tile(homes, 2), deadline,
                         restart, history=history)
        assert runs.equals(again)  # no randomness: the same trace, the same decisions

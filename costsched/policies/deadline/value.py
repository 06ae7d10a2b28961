"""spot-value: every option priced to the end of the job, moves and waits included.

At every decision the job has a few options: stay where it runs, start spot now in a zone
that has it, wait for spot in a zone that has none now, or (where it runs on-demand) stay
there. Each is priced as what finishing the job from there is expected to cost
(`finish_usd`): the egress of the checkpoint to the zone (by region pair: free within a
region), the restart billed there, and the rest of the work at the zone's learned pace of
spot (the share of the past the zone had spot, less what its preemptions take of a spell
of its mean past length), with on-demand for what that pace cannot do before the deadline.
Waiting spends the zone's expected time without spot (the mean length of its past spells
without spot), which is slack: it costs nothing while the pace still fits, and on-demand
work once it no longer does. So a preemption is not a reason to cross regions when waiting
where the job is costs less than the egress, and a job on on-demand goes back to spot as
soon as spot is expected to finish the rest for less (the shared safety rule permitting).

Everything it uses is the past of the market (spells that ended, shares of time with spot,
prices now), so it is online. Without the per-zone past (a market that gives only the
zones' spell lengths or nothing) it takes the shares and lengths from what it is given,
else from the prior of `base`.
"""

from __future__ import annotations

import numpy as np

from costsched.policies.deadline.base import (
    NONE,
    PRIOR_SHARE,
    PRIOR_SPELL,
    DeadlinePolicy,
    DeadlineState,
    MarketNow,
    is_on_demand,
    is_spot,
    zone_of,
)

HOUR = 3600.0
# Spot's learned pace is discounted by this factor before it is trusted to finish work
# (a zone's past share of spot is an average; the time left may be worse).
PACE_MARGIN = 0.9
# A job on spot moves to another zone only for a saving above this share of the cost of
# staying (the estimates are averages; moving on noise pays a restart for nothing).
MOVE_MARGIN = 0.02


def finish_usd(work: np.ndarray, room: np.ndarray, share: np.ndarray, spell: np.ndarray,
               per_preemption: np.ndarray, spot_price: np.ndarray,
               od_price: np.ndarray) -> np.ndarray:
    """Expected USD to finish `work` seconds within `room` seconds in a zone (broadcasts):
    spot at its pace (`share` of the time, each spell of `spell` seconds losing
    `per_preemption`), billed for the time its preemptions waste too, and on-demand for
    the work that pace leaves undone, kept to the end (one restart of room kept for it)."""
    kept = np.clip(1 - per_preemption / np.maximum(spell, 1.0), 0.05, 1.0)
    rate = np.clip(share * kept * PACE_MARGIN, 1e-3, 0.999)
    room = np.maximum(room, 0.0)
    od_work = np.clip((work - rate * room) / (1 - rate), 0.0, work)
    return ((work - od_work) / kept * spot_price + od_work * od_price) / HOUR


class SpotValue(DeadlinePolicy):
    name = "spot-value"
    description = ("spot in any allowed zone; moves, waits and on-demand each priced to the "
                   "end of the job with the checkpoint's egress and the zones' learned pace")

    def choose(self, state: DeadlineState, market: MarketNow) -> np.ndarray:
        zones = market.zones
        rows = np.arange(len(state.home))
        shape = market.spot_available.shape
        work = state.remaining[:, None]
        time_left = state.time_left[:, None] - market.tick
        restart = np.reshape(np.asarray(state.restart, dtype=float), (-1, 1))
        share, spell, dry = learned(market, shape)
        per_preemption = restart + state.checkpoint / 2
        spot, od = market.spot_price, market.on_demand_price
        # The checkpoint's egress to each zone (none before the first start).
        egress = np.where((state.last_zone >= 0)[:, None],
                          market.move_usd[np.maximum(state.last_zone, 0)], 0.0)
        # Start spot in each zone: now where it has spot, after its expected time without.
        wait = np.where(market.spot_available, 0.0, dry)
        start = (egress + restart / HOUR * spot
                 + finish_usd(work, time_left - restart - wait, share, spell,
                              per_preemption, spot, od))

        current = state.placement
        here = np.maximum(zone_of(current, zones), 0)
        on_spot = is_spot(current, zones)
        on_demand = is_on_demand(current, zones)
        # Staying on spot: no restart (but what is left of one), no egress.
        stay_spot = finish_usd(work[:, 0], time_left[:, 0] - state.overhead_left,
                               share[rows, here], spell[rows, here],
                               per_preemption[:, 0] if per_preemption.shape[0] > 1
                               else per_preemption[0, 0],
                               spot[rows, here], od[rows, here])
        stay_od = work[:, 0] / HOUR * od[rows, here]

        best = np.argmin(start, axis=1)
        best_usd = start[rows, best]
        now = market.spot_available[rows, best]
        # On-demand until the best zone has spot, then spot there: what the wait is worth
        # where the slack is short (running now keeps it).
        waited = wait[rows, best]
        od_zone = np.where(on_demand, here,
                           np.where(state.last_zone >= 0, state.last_zone, state.home))
        od_price = od[rows, od_zone]
        od_restart = np.where(on_demand, 0.0, restart[:, 0] if restart.shape[0] > 1
                              else restart[0, 0])
        bridge = ((od_restart + waited) / HOUR * od_price + egress[rows, best]
                  + restart[:, 0] / HOUR * spot[rows, best]
                  + finish_usd(np.maximum(work[:, 0] - np.maximum(waited - od_restart, 0.0),
                                          0.0),
                               time_left[:, 0] - od_restart - waited - restart[:, 0],
                               share[rows, best], spell[rows, best],
                               per_preemption[:, 0] if per_preemption.shape[0] > 1
                               else per_preemption[0, 0], spot[rows, best], od[rows, best]))
        bridged = ~now & (bridge < best_usd)
        # Without an instance: the best start, or wait for it (on on-demand if that pays).
        idle = np.where(now, best, np.where(bridged, market.on_demand(od_zone), NONE))
        # On spot: move only for a clear saving, to spot there now.
        move = now & (best != here) & (best_usd < stay_spot * (1 - MOVE_MARGIN))
        from_spot = np.where(move, best, current)
        # On on-demand: to spot that has it now and is expected to finish for less; never
        # to nothing (each such flip would cost a restart).
        avail_usd = np.where(market.spot_available, start, np.inf)
        best_now = np.argmin(avail_usd, axis=1)
        leave = np.isfinite(avail_usd[rows, best_now]) & (avail_usd[rows, best_now] < stay_od)
        from_od = np.where(leave, best_now, current)
        return np.where(on_spot, from_spot, np.where(on_demand, from_od, idle))


def learned(market: MarketNow, shape: tuple[int, int]
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(share of the time with spot, mean spell with spot, expected seconds until spot)
    per run and zone, from the market's past, else the prior."""
    if market.zone_share is not None:
        share = np.broadcast_to(market.zone_share, shape)
    elif market.spot_share is not None:
        share = np.broadcast_to(np.reshape(market.spot_share, (-1, 1)), shape)
    else:
        share = np.full(shape, PRIOR_SHARE)
    spell = (np.broadcast_to(market.spot_spell, shape) if market.spot_spell is not None
             else np.broadcast_to(market.spell_mean, shape) if market.spell_mean is not None
             else np.full(shape, PRIOR_SPELL))
    if market.dry_mean is not None:
        dry = np.broadcast_to(market.dry_mean, shape)
    else:
        # Spells with and without spot alternate: the share fixes their ratio.
        dry = spell * (1 - share) / np.maximum(share, 1e-3)
    return share, spell, np.maximum(dry, market.tick)

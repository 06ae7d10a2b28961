"""spot-anywhere: costsched's own policy, spot in any zone or region the job may use.

Where the job's spot instance is gone (or it has none), it starts spot in another zone
that has it now instead of falling back to on-demand, and leaves on-demand for spot as
soon as the move pays for itself and the shared safety rule allows it. A preemption is not
a reason to cross regions, though: where waiting for spot in the checkpoint's region is
expected to cost less than the checkpoint's egress to the other region
(`waits_for_region`), it waits there (or runs on-demand there when behind, as without spot
anywhere). It picks a zone by the expected cost of the rest of the work at the current
prices: the spot price raised by what a preemption costs (a restart and half a checkpoint
interval of work lost) spread over how long the zone's spot is expected to hold: how long
it has held so far plus the mean length of the zone's past spells where the market knows
them (a spell that has lasted tends to last), plus the checkpoint's egress when the zone
is in another region. A planned move or switch checkpoints first, so it costs a restart
and the egress, no lost work. It moves between spot zones only for a lower price that
repays the move. Without spot anywhere it runs on-demand only where waiting for spot no
longer fits: behind the straight line to the deadline (uniform-progress) and behind spot's
expected pace too (`spot_pace`: the share of the past with spot somewhere, less what
preemptions take of a spell), so that a job with ample slack waits out a shortage instead
of paying on-demand for it.

Leaving on-demand also spends slack (deadline minus the work still to do): the restart
earns no progress, and slack spent early is what forces on-demand to the end later. So the
restart's slack is priced too, dearer the less slack is left per second of work to do
(`slack_usd`): with slack scarce the job leaves on-demand only for spot expected to hold
long enough to repay it, instead of paying a restart for every short spell.

For a gang (`DeadlineState.nodes`) every price above is the whole gang's, and a move pays
the restart (with the rendezvous) on all nodes but the checkpoint's egress once: moves
are cheaper against the work left than for one node (`gang`).
"""

from __future__ import annotations

from costsched.amounts import age
from costsched.lazy import numpy as np
from costsched.policies.deadline.base import (
    NONE,
    DeadlinePolicy,
    DeadlineState,
    MarketNow,
    is_on_demand,
    is_spot,
    zone_of,
)
from costsched.policies.deadline.gang import move_usd as gang_move_usd
from costsched.policies.deadline.gang import priced
from costsched.policies.deadline.on_demand_pick import cheapest_on_demand
from costsched.policies.deadline.outlook import finish_usd, learned
from costsched.policies.deadline.uniform_progress import line

HOUR = 3600.0
# Share of the work still to do that a second of slack spent is taken to push from spot to
# on-demand, per second of slack left per second of work (see `slack_usd`). Measured on the
# tuning split of bench_deadline only (with the rules below): 0.25 / 0.5 / 0.7 / 1.0 cost
# +5.3% / +5.5% / +5.7% / +4.8% over the optimum with the auto checkpoint interval and
# +11.8% / +12.0% / +13.4% / +13.5% with 30-minute checkpoints: flat from 0.25 to 0.5.
SLACK_WEIGHT = 0.5
# Spot's expected pace is trusted as measured (no discount) before the job waits for spot
# without spot anywhere. Chosen on the tuning split of bench_deadline only (first 60% of
# the 2023 availability recording, 5 zones, and traces drawn from the model fitted on it):
# a margin of 0.5 / 0.8 / 0.9 / 1.0 / 1.1 costs +6.0% / +5.7% / +5.5% / +5.5% / +12.6% over
# the optimum there with the auto checkpoint interval, +12.6% / +12.5% / +12.0% / +12.0% /
# +14.5% with 30-minute checkpoints (the fitted model's draws alike at every value).
PACE_MARGIN = 1.0


class SpotAnywhere(DeadlinePolicy):
    name = "spot-anywhere"
    description = "spot in any allowed zone or region; on-demand only when none is safe"

    def choose(self, state: DeadlineState, market: MarketNow) -> np.ndarray:
        listed = market  # USD per hour of one instance, as the on-demand pick reads it
        market = priced(state, market)  # USD per hour of the job's whole gang
        zones = market.zones
        rows = np.arange(len(state.home))
        current = state.placement
        here = zone_of(current, zones)
        hours_left = state.remaining / HOUR
        # Egress of the checkpoint to each zone (none before the first start).
        egress = np.where((state.last_zone >= 0)[:, None],
                          market.move_usd[np.maximum(state.last_zone, 0)], 0.0)
        run = np.maximum(market.available_for, market.tick)
        if market.spell_mean is not None:
            # Spells that have lasted tend to last (their remaining length grows with their
            # age), and some zones hold spot longer than others: age plus the zone's mean.
            run = np.where(market.spot_available, market.available_for + market.spell_mean,
                           run)
        per_preemption = state.restart + state.checkpoint / 2
        effective = market.spot_price * (1 + np.reshape(per_preemption, (-1, 1)) / run)
        score = np.where(market.spot_available, effective * hours_left[:, None] + egress,
                         np.inf)
        best = np.argmin(score, axis=1)
        any_spot = np.isfinite(score[rows, best])
        best_price = market.spot_price[rows, best]
        # A planned move checkpoints first: it pays the restart and the egress (once).
        move_usd = gang_move_usd(state, best_price, egress[rows, best])

        on_spot = is_spot(current, zones)
        cheaper = (market.spot_price[rows, np.maximum(here, 0)] - best_price) * hours_left
        stay_spot = on_spot & ~(cheaper > move_usd)

        on_demand = is_on_demand(current, zones)
        od_price = market.on_demand_price[rows, np.maximum(here, 0)]
        # Spot is expected to hold at least a checkpoint interval (or as long as it has held
        # so far).
        lasting = np.maximum(run[rows, best], state.checkpoint)
        spot_cost = best_price * (1 + per_preemption / lasting)
        useful = np.minimum(hours_left, lasting / HOUR)
        leave_cost = move_usd + slack_usd(state, od_price - best_price, state.restart)
        leave_od = any_spot & ((od_price - spot_cost) * useful > leave_cost)

        behind, keep_od = self.pace(state, market)
        keep_od &= on_demand
        # On-demand where it costs least to the end of the work (`on_demand_pick`; asked
        # only where it may be taken).
        where_od = (cheapest_on_demand(state, listed, state.remaining) if behind.any()
                    else current)
        without_spot = np.where(keep_od, current, np.where(behind, where_od, NONE))
        wanted = np.where(any_spot, best, without_spot)
        wanted = np.where(on_demand & any_spot & ~leave_od, current, wanted)
        wanted = np.where(stay_spot, current, wanted)
        # A start in another region than the checkpoint's, from no instance: waiting for
        # spot in the checkpoint's region instead, where that is expected to cost less
        # than the egress (the move's other costs are paid either way).
        crossing = ((current < 0) & (state.last_zone >= 0) & any_spot
                    & (market.region[best] != market.region[np.maximum(state.last_zone, 0)]))
        if crossing.any():
            wait = waits_for_region(state, market, best, crossing)
            wanted = np.where(wait, without_spot, wanted)
        return wanted

    def pace(self, state: DeadlineState, market: MarketNow) -> tuple[np.ndarray, np.ndarray]:
        """Without spot anywhere: (behind: start on-demand, keep: stay on on-demand).
        Behind the straight line (and on on-demand until a restart ahead of it) and, where
        the market's past is known, behind spot's expected pace as well."""
        behind, keep = line_pace(state, market)
        paced = spot_pace(state, market, PACE_MARGIN)
        if paced is None:
            return behind, keep
        return behind & paced[0], keep & paced[1]

    def pace_said(self, state: DeadlineState, market: MarketNow) -> str:
        """How the batch's first run is behind (`pace`), in figures."""
        line_said = behind_line_said(state, market)
        paced = spot_pace_said(state, market, PACE_MARGIN)
        return f"{line_said}, and {paced}" if paced else line_said

    def on_demand_why(self, state: DeadlineState, market: MarketNow) -> str:
        """Its own choice of on-demand for a job without an instance (the live decision
        asks no why of a job kept on on-demand): with no spot in any zone it allows, or
        waiting for spot in its checkpoint's region (`waits_for_region`), it runs on-demand
        meanwhile where the job is behind (`pace`)."""
        behind = self.pace_said(state, market)
        if bool(np.asarray(market.spot_available)[0].any()):
            return (f"{self.name} waits for spot in the region of the job's checkpoint, "
                    "expected to cost less than the checkpoint's egress to another "
                    f"region, and runs on-demand meanwhile as the job is behind: {behind}")
        return (f"{self.name} finds no spot now in any zone it allows and runs on-demand as "
                f"the job is behind: {behind}")


def waits_for_region(state: DeadlineState, market: MarketNow, best: np.ndarray,
                     crossing: np.ndarray) -> np.ndarray:
    """Where `crossing`: True where waiting for spot in a zone of the checkpoint's region
    costs less than the egress of starting now in zone `best` of another region. A wait
    costs the slack it spends: the on-demand work it adds to finishing there
    (`outlook.finish_usd`, at the zone's learned pace), nothing while the pace still fits.
    Chosen on the tuning splits over comparing the whole expected costs of both (which
    also moves for a better pace): +3.3% against +3.4% over the optimum on SkyNomad's
    shape on its unused zones, +11.9% against +12.2% on bench_deadline's tune set."""
    rows = np.arange(len(best))
    shape = market.spot_available.shape
    share, spell, dry = learned(market, shape)
    work = state.remaining[:, None]
    restart = np.reshape(np.asarray(state.restart, dtype=float), (-1, 1))
    room = state.time_left[:, None] - market.tick - restart
    per_preemption = restart + state.checkpoint / 2
    offered = np.isfinite(market.spot_price)  # a zone without spot has no price
    spot, od = np.where(offered, market.spot_price, 0.0), market.on_demand_price
    last = np.maximum(state.last_zone, 0)
    egress = market.move_usd[last]
    wait = np.where(market.spot_available, 0.0, dry)
    finish = (gang_move_usd(state, spot, egress)
              + finish_usd(work, room - wait, share, spell, per_preemption, spot, od))
    home_region = (market.region[None, :] == market.region[last][:, None]) & offered
    # What the wait alone costs (the slack it spends), against the egress it saves.
    now = finish_usd(work, room, share, spell, per_preemption, spot, od)
    slack_cost = np.where(home_region, finish - now, np.inf).min(axis=1)
    return crossing & (slack_cost < egress[rows, best])


def line_pace(state: DeadlineState, market: MarketNow) -> tuple[np.ndarray, np.ndarray]:
    """Uniform progress: (behind the straight line, within a restart ahead of it)."""
    expected = line(state, market)
    return state.progress < expected, state.progress < expected + state.restart


def spot_pace(state: DeadlineState, market: MarketNow,
              margin: float) -> tuple[np.ndarray, np.ndarray] | None:
    """(behind, keep) against spot's expected pace, None without the market's past. Spot
    runs the job at (share of the past with spot somewhere) x (share of a spell of the
    zones' mean past length not lost to a preemption: a restart and half a checkpoint
    interval) x `margin`. Behind: the work left at that pace does not fit in the time left
    after this tick and a restart; keep: it does not fit with a restart to spare."""
    if market.spot_share is None or market.spell_mean is None:
        return None
    spell = np.mean(market.spell_mean, axis=1)
    per_preemption = state.restart + state.checkpoint / 2
    kept = np.clip(1 - per_preemption / spell, 0.05, 1.0)
    rate = np.clip(market.spot_share * kept * margin, 1e-3, 1.0)
    needed = state.remaining / rate
    room = state.time_left - market.tick - state.restart
    return needed > room, needed > room - state.restart


def behind_line_said(state: DeadlineState, market: MarketNow) -> str:
    """`line_pace`'s figures for the batch's first run."""
    return (f"{age(float(state.progress[0]))} of work done, short of the "
            f"{age(float(line(state, market)[0]))} the straight line to the deadline reaches "
            f"by its next decision, in {age(market.tick)}")


def spot_pace_said(state: DeadlineState, market: MarketNow, margin: float) -> str:
    """`spot_pace`'s figures for the batch's first run ('' without the market's past)."""
    if market.spot_share is None or market.spell_mean is None:
        return ""
    spell = float(np.mean(market.spell_mean[0]))
    restart = float(np.broadcast_to(state.restart, (1,))[0])
    kept = min(max(1 - (restart + state.checkpoint / 2) / spell, 0.05), 1.0)
    rate = min(max(float(market.spot_share[0]) * kept * margin, 1e-3), 1.0)
    room = float(state.time_left[0]) - market.tick - restart
    return (f"at spot's expected pace ({rate:.0%} of the time making progress) the "
            f"{age(float(state.remaining[0]))} of work left would take "
            f"{age(float(state.remaining[0]) / rate)}, more than the {age(max(room, 0.0))} "
            "left after its next decision and a restart")


def slack_usd(state: DeadlineState, saving: np.ndarray, seconds: float) -> np.ndarray:
    """USD worth of `seconds` of slack: the on-demand premium over spot (`saving`, USD/h)
    on the work that slack may have to move to on-demand, which grows as the slack left per
    second of remaining work shrinks (none when the work is done)."""
    slack = np.maximum(state.time_left - state.remaining - state.restart, 1.0)
    scarcity = SLACK_WEIGHT * state.remaining / slack
    return np.maximum(saving, 0.0) * seconds / HOUR * scarcity

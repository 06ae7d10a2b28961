"""spot-hedge: every start of spot weighed against waiting for a better one, the slack
priced by the chance that the deadline will need on-demand, on-demand as a hedge.

One number drives it: the *shortfall chance*, the probability that the slack left
(deadline minus the work still to do, a restart, and the restart and checkpoint interval
the safety rule keeps back, `reserve`) will not cover what finishing on spot at the
market's pace takes: the time with no spot in any zone, and a restart and half a
checkpoint interval of lost work per spell (`shortfall_chance`). The market's pace comes
from its past (the share of the time with spot somewhere, the mean spells with and
without spot), added to the policy's prior, which speaks where the past is thin (a new
store, a market never watched); the chance is spread by how many spells the time left
holds (few spells: a wide spread).

From it, each second of slack is priced (`slack_usd_per_second`): the on-demand premium
over spot, times the chance, raised as the slack per second of work left runs short (the
last hours of slack decide whether the rest of the work can still use spot).

Each zone is then priced per hour of progress over its expected spell (`spot_rates`): the
spot price over the spell, and the restart, the checkpoint's egress to another region,
the next restart and the lost work when the spell ends before the work, and the slack all
of them spend; a zone without spot now is priced as if waited for, its expected time
without spot counted as slack spent (`waits`). A spell that has lasted is expected to last
(its age plus the zone's mean spell), and a dry spell too.

The choice, per run and tick:

- the zone with the least rate, if it has spot now (a job on spot moves only to a cheaper
  zone, and only where its rate, the move included, is lower);
- on-demand instead, where the shortfall chance is above `hedge_above` (`keep_above` to
  stay on it) and on-demand costs less per hour of progress than any spot now: with
  little slack the job hedges rather than start a spell unlikely to repay its restart
  (by default never: `HedgeConstants`);
- where waiting for a zone is cheapest, the job keeps the spot it runs on, or waits,
  unless on-demand over the wait costs less than the slack the wait spends (`bridges`);
  with too little slack to use spot at all, a job on on-demand stays there.

On-demand is where it costs least over the time it would run there (to the end of the
work as a hedge, over the wait as a bridge), its start and the checkpoint's egress
included (`on_demand_pick`). The shared safety rule (`DeadlinePolicy.decide`) still puts
the job on on-demand where a preemption could make it late. Gangs are priced as their N
instances with the egress paid once (`gang`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from costsched.amounts import age, usd
from costsched.lazy import numpy as np
from costsched.policies.deadline.base import (
    NONE,
    DeadlinePolicy,
    DeadlineState,
    MarketNow,
    MarketPrior,
    is_on_demand,
    is_spot,
    zone_of,
)
from costsched.policies.deadline.gang import move_usd, priced
from costsched.policies.deadline.on_demand_pick import cheapest_on_demands
from costsched.policies.deadline.outlook import learned

HOUR = 3600.0


@dataclass(frozen=True)
class HedgeConstants:
    """The policy's constants (the defaults were chosen as docs/deadlines.md says)."""

    # Shortfall chance above which on-demand is taken instead of spot now (1.0: never;
    # the choice of every fold of the leave-one-set-out, docs/deadlines.md).
    hedge_above: float = 1.0
    keep_above: float = 0.5  # ... above which a job on on-demand stays there
    scarcity: float = 0.25  # slack's price per (seconds of work left / seconds of slack)
    spread: float = 1.0  # the shortfall's spread, in (spells in the time left) ** -1/2
    # A market not watched: spot half of the time (in a zone, or somewhere), counted as
    # an hour seen; spells of an hour with spot and an hour without, counted as one each.
    prior: MarketPrior = field(default_factory=MarketPrior)


class SpotHedge(DeadlinePolicy):
    name = "spot-hedge"
    description = ("spot in any zone, each start weighed against waiting; on-demand to "
                   "bridge a wait for spot when the slack it spends is worth more")

    def __init__(self, constants: HedgeConstants | None = None) -> None:
        self.constants = constants or HedgeConstants()
        self.prior = self.constants.prior

    def _weighed(self, state: DeadlineState, market: MarketNow
                 ) -> tuple[MarketNow, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The gang's market, each zone's expected time without spot (`dry`), the
        shortfall chance, a second of slack's price and each zone's rate per hour of
        progress: what `choose` weighs."""
        c = self.constants
        market = priced(state, market)  # USD per hour of the job's whole gang
        share, spell, dry = learned(market, market.spot_available.shape, self.prior)
        chance = shortfall_chance(state, market, share, spell, dry, c.spread)
        per_second = slack_usd_per_second(state, market, chance, c.scarcity)
        return market, dry, chance, per_second, spot_rates(state, market, spell, dry,
                                                           per_second)

    def choose(self, state: DeadlineState, market: MarketNow) -> np.ndarray:
        c = self.constants
        listed = market  # USD per hour of one instance, as the on-demand pick reads it
        market, dry, chance, per_second, rates = self._weighed(state, market)
        zones = market.zones
        rows = np.arange(len(state.progress))
        here = zone_of(state.placement, zones)
        running = is_spot(state.placement, zones) & market.spot_available[
            rows, np.maximum(here, 0)]
        # A job on spot moves to another zone only for a lower price (its rate, the move
        # included, lower too): not on the hope that a young spell there outlasts its own.
        dearer = market.spot_price >= market.spot_price[rows, np.maximum(here, 0)][:, None]
        rates = np.where(running[:, None] & dearer & (np.arange(zones) != here[:, None]),
                         np.inf, rates)
        best = np.argmin(rates, axis=1)
        now = market.spot_available[rows, best]
        best_now = np.where(market.spot_available, rates, np.inf).min(axis=1)

        on_od = is_on_demand(state.placement, zones)
        wait = waits(market, dry)[rows, best]
        # On-demand where it costs least over the time it would run: to the end of the
        # work as a hedge, over the wait as a bridge (`on_demand_pick`; asked only where
        # it may be taken).
        likely = now & (chance > np.where(on_od, c.keep_above, c.hedge_above))
        waiting = ~now & ~running
        to_end = over_wait = np.maximum(here, 0)
        if likely.any() or waiting.any():
            to_end, over_wait = (zone_of(p, zones) for p in cheapest_on_demands(
                state, listed, [state.remaining, np.minimum(wait, state.remaining)]))
        # Instead of spot now: on-demand where the shortfall is likely and it costs less
        # per hour of progress than any spot now.
        hedged = likely & (on_demand_rate(state, market, np.where(on_od, here, to_end),
                                          per_second) < best_now)
        # Instead of waiting for spot: on-demand where the slack the wait spends is worth
        # more than on-demand costs over it (`bridges`); with too little slack to use spot
        # at all, on-demand is kept.
        od_hedge = hedged | waiting & bridges(
            state, market, np.where(on_od, here, over_wait), per_second, wait)
        od_hedge |= on_od & ~np.isfinite(rates[rows, best])
        od = np.where(on_od, state.placement,
                      market.on_demand(np.where(hedged, to_end, over_wait)))
        wait = np.where(running, state.placement, NONE)
        return np.where(od_hedge, od, np.where(now, best, wait))

    def wait_why(self, state: DeadlineState, market: MarketNow) -> str:
        _, _, _, _, rates = self._weighed(state, market)
        if np.isfinite(rates[0]).any():
            return ""
        return f"it risks no spot now: {no_progress_said(state, market)}"

    def on_demand_why(self, state: DeadlineState, market: MarketNow) -> str:
        c = self.constants
        listed = market  # USD per hour of one instance, as the on-demand pick reads it
        market, dry, chance, per_second, rates = self._weighed(state, market)
        risks = ("" if np.isfinite(rates[0]).any() else
                 f"it risks no spot now: {no_progress_said(state, market)}")
        on_od = bool(is_on_demand(state.placement, market.zones)[0])
        best = int(np.argmin(rates[0]))
        spot_now = bool(np.asarray(market.spot_available)[0, best])
        limit = c.keep_above if on_od else c.hedge_above
        if spot_now and float(chance[0]) > limit:
            return (f"{self.name} hedges: spot's chance of missing the deadline, "
                    f"{float(chance[0]):.0%}, is over its limit of {limit:.0%}, and "
                    "on-demand costs less per hour of progress than any spot now")
        if not spot_now and not (on_od and risks):
            wait = waits(market, dry)[np.arange(len(state.progress)), best]
            here = zone_of(state.placement, market.zones)
            _, over_wait = (zone_of(p, market.zones) for p in cheapest_on_demands(
                state, listed, [state.remaining, np.minimum(wait, state.remaining)]))
            worth, cost, _ = bridge_usd(state, market, np.where(on_od, here, over_wait),
                                        per_second, wait)
            return (f"{self.name} bridges a wait for spot on on-demand: over the wait of "
                    f"{age(float(wait[0]))} it saves slack worth {usd(float(worth[0]))}, "
                    f"more than the {usd(float(cost[0]))} it costs beyond spot"
                    + (risks and f"; {risks}"))
        return f"{self.name} keeps on-demand, as {risks}" if risks else ""


def no_progress_said(state: DeadlineState, market: MarketNow) -> str:
    """Why no zone's spot can make progress for the batch's first run (`spot_rates`
    infinite everywhere): the slack left after the next decision, the work and a start is
    less than a checkpoint interval."""
    restart = float(_per_run(state.restart, len(state.progress))[0])
    left, work = float(state.time_left[0]), float(state.remaining[0])
    slack = left - market.tick - work - restart
    spent = (f"its next decision, in {age(market.tick)}, the work left ({age(work)}) and a "
             f"start ({age(restart)})")
    if slack <= 0:
        return f"{age(left)} to the deadline is less than {spent}"
    return (f"{age(left)} to the deadline leaves {age(slack)} after {spent}, less than a "
            f"checkpoint interval ({age(state.checkpoint)})")


def shortfall_chance(state: DeadlineState, market: MarketNow, share: np.ndarray,
                     spell: np.ndarray, dry: np.ndarray, spread: float) -> np.ndarray:
    """Per run: the probability that the slack left does not cover finishing the work on
    spot at the market's pace. Finishing takes, per second of work, (1 - s) / s seconds
    without spot anywhere (s: the share of the past with spot somewhere) and a restart and
    half a checkpoint interval per spell of the zones' mean useful length; the need is
    taken as normal around that, with a standard deviation of the need over the square
    root of the spells (with and without spot) the time left holds, times `spread`."""
    restart = _per_run(state.restart, len(state.progress))
    work = state.remaining
    slack = state.time_left - market.tick - restart - work - reserve(state)
    weight = np.maximum(share.sum(axis=1), 1e-9)
    mean_spell = (share * spell).sum(axis=1) / weight
    mean_dry = (share * dry).sum(axis=1) / weight
    anywhere = (np.asarray(market.spot_share) if market.spot_share is not None
                else share.max(axis=1))
    anywhere = np.clip(anywhere, 0.02, 0.999)
    useful = np.maximum(mean_spell - restart, 60.0)
    need = work * ((1 - anywhere) / anywhere + (restart + state.checkpoint / 2) / useful)
    cycles = np.maximum(state.time_left, 1.0) / (mean_spell + mean_dry)
    sigma = np.maximum(need * np.sqrt(spread / np.maximum(cycles, 1e-9)), 1.0)
    return np.where(work > 0, normal_cdf((need - slack) / sigma), 0.0)


def slack_usd_per_second(state: DeadlineState, market: MarketNow, chance: np.ndarray,
                         scarcity: float) -> np.ndarray:
    """Per run: USD a second of slack is worth: the on-demand premium over the cheapest
    spot listed (the work that slack keeps on spot), times the shortfall chance, times
    `scarcity` x the seconds of work left per second of slack where that exceeds 1 (slack
    runs short)."""
    restart = _per_run(state.restart, len(state.progress))
    premium = np.maximum(market.on_demand_price.min(axis=1) - market.spot_price.min(axis=1),
                         0.0)
    slack = np.maximum(state.time_left - restart - state.remaining - reserve(state), 60.0)
    return chance * premium / HOUR * np.maximum(1.0, scarcity * state.remaining / slack)


def reserve(state: DeadlineState) -> np.ndarray:
    """Slack spot cannot spend: a restart and a checkpoint interval (with less, the safety
    rule keeps a job off spot, `spot_rates`)."""
    return _per_run(state.restart, len(state.progress)) + state.checkpoint


def spot_rates(state: DeadlineState, market: MarketNow, spell: np.ndarray, dry: np.ndarray,
               per_second: np.ndarray) -> np.ndarray:
    """USD per hour of progress of running in each zone (runs, zones), over the spell it
    is expected to hold there (its age and the zone's mean spell; a zone without spot now:
    a mean spell after its dry spell's age and mean length, waited as slack): the spot
    price, the start (a restart billed, the checkpoint's egress; none where the job runs
    now), the next start and the work lost when the spell ends before the work, and the
    slack they spend. Infinite where the slack left allows no progress there, and where
    spot is not offered (no price)."""
    zones = market.zones
    n = len(state.progress)
    restart = _per_run(state.restart, n)[:, None]
    work = state.remaining[:, None]
    here = zone_of(state.placement, zones)
    staying = is_spot(state.placement, zones)[:, None] & (np.arange(zones) == here[:, None])
    egress = np.where((state.last_zone >= 0)[:, None],
                      market.move_usd[np.maximum(state.last_zone, 0)], 0.0)
    available = market.spot_available
    life = np.where(available, market.available_for + spell, spell)
    wait = waits(market, dry)
    started = np.where(staying, 0.0, restart)
    # With less slack (after the start's restart) than a checkpoint interval, the safety
    # rule stops spot once the work since the last checkpoint exceeds it (a planned stop).
    after = (state.time_left - market.tick - state.remaining)[:, None] - restart - started
    exposure = np.mod(state.progress, state.checkpoint)[:, None]
    cut = np.where(after < state.checkpoint, np.maximum(after - exposure, 0.0), np.inf)
    stint = np.minimum(life, started + cut)
    useful = np.minimum(stint, work + started) - started
    ends = stint < work + started
    offered = np.isfinite(market.spot_price)  # a zone without spot has no price
    price = np.where(offered, market.spot_price, 0.0)
    slack = per_second[:, None]
    start_usd = np.where(staying, 0.0, move_usd(state, price, egress))
    # When it ends first: the next start's restart and, where spot is lost (not stopped by
    # the safety rule), the work since the last checkpoint (half an interval on average),
    # billed again and spent from the slack.
    lost = restart + np.where(stint < life, 0.0, state.checkpoint / 2)
    end_usd = np.where(ends, lost * (price / HOUR + slack), 0.0)
    # A job without an instance spends a restart's slack whatever it starts: only a
    # running job's start (a move) counts it.
    start_slack = np.where((state.placement >= 0)[:, None], started, 0.0)
    usd = price * useful / HOUR + start_usd + end_usd + slack * (start_slack + wait)
    return np.where((useful > 0) & offered, usd / np.maximum(useful, 1.0) * HOUR, np.inf)


def waits(market: MarketNow, dry: np.ndarray) -> np.ndarray:
    """Seconds until spot is expected back in each zone (runs, zones): none where it has
    spot now; else the zone's mean dry spell past the age of the one it is in."""
    dry_for = 0.0 if market.dry_for is None else market.dry_for
    return np.where(market.spot_available, 0.0, dry + dry_for)


def bridges(state: DeadlineState, market: MarketNow, zone: np.ndarray,
            per_second: np.ndarray, wait: np.ndarray) -> np.ndarray:
    """Per run: whether on-demand in `zone` over a wait of `wait` seconds for spot costs
    less than the slack the wait would spend (`bridge_usd`)."""
    worth, cost, saved = bridge_usd(state, market, zone, per_second, wait)
    return (worth > cost) & (saved > 0)


def bridge_usd(state: DeadlineState, market: MarketNow, zone: np.ndarray,
               per_second: np.ndarray, wait: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per run: (USD of the slack on-demand in `zone` saves over a wait of `wait` seconds
    for spot, USD on-demand costs over it beyond spot, seconds saved). Started, on-demand
    saves the wait less its restart and the restart back to spot, for its premium over
    spot on the wait and its restart billed (and the checkpoint's egress to `zone`);
    kept, it saves the whole wait for the premium alone."""
    rows = np.arange(len(zone))
    price = market.on_demand_price[rows, zone]
    spot = market.spot_price.min(axis=1)
    restart = _per_run(state.restart, len(zone))
    kept = is_on_demand(state.placement, market.zones)
    saved = np.where(kept, wait, wait - 2 * restart)
    cost = ((price - spot) * wait / HOUR
            + np.where(kept, 0.0, move_usd(state, price, _egress(state, market, zone))))
    return per_second * saved, cost, saved


def on_demand_rate(state: DeadlineState, market: MarketNow, zone: np.ndarray,
                   per_second: np.ndarray) -> np.ndarray:
    """USD per hour of progress of on-demand in `zone` to the end of the work: its price,
    and where the job is not on it yet, its start (a restart billed, the checkpoint's egress
    to `zone`, and its slack)."""
    rows = np.arange(len(zone))
    price = market.on_demand_price[rows, zone]
    restart = _per_run(state.restart, len(zone))
    start = (move_usd(state, price, _egress(state, market, zone))
             + np.where(state.placement >= 0, per_second * restart, 0.0))
    start = np.where(is_on_demand(state.placement, market.zones), 0.0, start)
    return price + start / np.maximum(state.remaining, 1.0) * HOUR


def _egress(state: DeadlineState, market: MarketNow, zone: np.ndarray) -> np.ndarray:
    """Per run: the checkpoint's egress to `zone` from where the job last ran (none
    before its first start)."""
    last = np.maximum(state.last_zone, 0)
    return np.where(state.last_zone >= 0, market.move_usd[last, zone], 0.0)


def normal_cdf(z: np.ndarray) -> np.ndarray:
    """The standard normal's distribution function to within 0.01 (a logistic curve)."""
    return 1.0 / (1.0 + np.exp(-1.702 * np.clip(z, -40.0, 40.0)))


def _per_run(value: float | np.ndarray, n: int) -> np.ndarray:
    return np.broadcast_to(np.asarray(value, dtype=float), (n,)).astype(float)

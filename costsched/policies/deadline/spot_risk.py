"""spot-risk: spot-anywhere that prices the risk of spot against the slack left.

It places the job on spot as spot-anywhere does (any zone, each priced with what its
preemptions are expected to cost), and differs where there is no spot anywhere: instead of
on-demand behind both the straight line to the deadline and spot's expected pace, it asks
only whether spot can still be risked at a discounted pace.
Spot runs the job at an expected pace of (share of the past with spot somewhere) x (the
share of a spell that is not lost to preemptions: a restart and the work since the last
checkpoint, half an interval on average, per spell of the zones' mean past length). Where
the work left at that pace no longer fits in the time left (less a restart and a margin),
spot cannot be risked and the job runs on-demand; otherwise it waits for spot, which is
what pays. On on-demand it stays until the pace fits again with a restart to spare
(hysteresis), and it goes back to spot when spot-anywhere's rule says the move pays.

Everything it uses is the past of the market (spells that ended, the share of time with
spot), so it is online and as cheap as spot-anywhere.
"""

from __future__ import annotations

from costsched.amounts import usd
from costsched.lazy import numpy as np
from costsched.policies.deadline.base import DeadlineState, MarketNow, is_spot, zone_of
from costsched.policies.deadline.gang import priced
from costsched.policies.deadline.multi_zone import (
    HOUR,
    SpotAnywhere,
    behind_line_said,
    line_pace,
    slack_usd,
    spot_pace,
    spot_pace_said,
)
from costsched.policies.deadline.on_demand_pick import cheapest_on_demand

# Spot's expected pace is discounted by this factor before it is trusted to finish the
# job (the share of the past with spot is an average; the time left may be worse).
# Chosen on the tuning split of bench_deadline (first 60% of the 2023 availability
# recording, 5 zones) only: 0.6 / 0.8 / 1.0 cost +13.1% / +12.0% / +11.8% over the optimum
# there, no discount +20.5%.
PACE_MARGIN = 0.8


class SpotRisk(SpotAnywhere):
    name = "spot-risk"
    description = ("spot in any allowed zone; on-demand only when the slack left cannot "
                   "absorb spot's expected preemptions and shortages")

    def choose(self, state: DeadlineState, market: MarketNow) -> np.ndarray:
        wanted, declined, _, _ = self._risked(state, market)
        if declined is None or not declined.any():
            return wanted
        # On-demand where it costs least to the end of the work (`on_demand_pick`).
        return np.where(declined, cheapest_on_demand(state, market, state.remaining), wanted)

    def _risked(self, state: DeadlineState, market: MarketNow
                ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray, np.ndarray]:
        """(spot-anywhere's choice; where a spot start is declined as too risky, None
        without the market's past; what the spell is expected to save, USD; the slack it
        risks, USD)."""
        wanted = super().choose(state, market)
        none = np.zeros(len(wanted))
        if market.spell_mean is None:
            return wanted, None, none, none
        market = priced(state, market)  # USD per hour of the job's whole gang
        # A job without an instance and behind spot's pace starts spot only where the
        # spell is expected to repay the slack it risks: a restart now, and if it ends
        # before the work does, the work since the last checkpoint and another restart.
        zones = market.zones
        rows = np.arange(len(wanted))
        z = np.maximum(zone_of(wanted, zones), 0)
        starting = (state.placement < 0) & is_spot(wanted, zones)
        behind, _ = self.pace(state, market)
        risky = starting & behind
        if not risky.any():
            return wanted, risky, none, none
        lasting = market.available_for[rows, z] + market.spell_mean[rows, z]
        ends_first = np.clip(state.remaining / np.maximum(lasting, 1.0), 0.0, 1.0)
        risked = state.restart + ends_first * (state.checkpoint / 2 + state.restart)
        saving = market.on_demand_price[rows, z] - market.spot_price[rows, z]
        useful = np.minimum(state.remaining, lasting) / HOUR
        gain, cost = saving * useful, slack_usd(state, saving, risked)
        return wanted, risky & ~(gain > cost), gain, cost

    def pace(self, state: DeadlineState, market: MarketNow) -> tuple[np.ndarray, np.ndarray]:
        paced = spot_pace(state, market, PACE_MARGIN)
        return line_pace(state, market) if paced is None else paced

    def pace_said(self, state: DeadlineState, market: MarketNow) -> str:
        return spot_pace_said(state, market, PACE_MARGIN) or behind_line_said(state, market)

    def on_demand_why(self, state: DeadlineState, market: MarketNow) -> str:
        """A spot start declined as too risky (the module's doc), in its figures; else
        spot-anywhere's words, at its own pace."""
        _, declined, gain, cost = self._risked(state, market)
        if declined is None or not bool(declined[0]):
            return super().on_demand_why(state, market)
        return (f"{self.name} risks no spot start now: the job is behind "
                f"({self.pace_said(state, market)}), and the spot spell it would start on is "
                f"expected to save {usd(float(gain[0]))} over on-demand, less than the "
                f"{usd(float(cost[0]))} the slack it risks is worth (a start now, and the "
                "lost work and restart of a preemption before the work is done)")

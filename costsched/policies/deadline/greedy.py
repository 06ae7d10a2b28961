"""greedy: spot in the home zone whenever it is there, nothing while it is not, and from
the last safe moment (the shared safety rule) on-demand to the end."""

from __future__ import annotations

from costsched.lazy import numpy as np
from costsched.policies.deadline.base import (
    NONE,
    DeadlinePolicy,
    DeadlineState,
    MarketNow,
    is_on_demand,
)


class Greedy(DeadlinePolicy):
    name = "greedy"
    description = "home-zone spot until the last safe moment, then on-demand"

    def choose(self, state: DeadlineState, market: MarketNow) -> np.ndarray:
        rows = np.arange(len(state.home))
        spot = market.spot_available[rows, state.home]
        wanted = np.where(spot, state.home, NONE)
        # Once on on-demand, stay there to the end.
        return np.where(is_on_demand(state.placement, market.zones), state.placement, wanted)

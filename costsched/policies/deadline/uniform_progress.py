"""uniform-progress: Can't Be Late's Uniform Progress (Wu et al., NSDI 2024), one zone.

The job should keep up with the straight line from no progress at its start to all the
work one restart before its deadline (the restart is the line's safety margin). Spot in
the home zone whenever it is there; without spot, on-demand while the job is behind the
line and nothing while it is ahead. Once on on-demand it stays until it is ahead of the
line by one restart, so that it does not pay a restart for every tick around the line.
"""

from __future__ import annotations

import numpy as np

from costsched.policies.deadline.base import (
    NONE,
    DeadlinePolicy,
    DeadlineState,
    MarketNow,
    is_on_demand,
)


def line(state: DeadlineState, market: MarketNow) -> np.ndarray:
    """Progress the straight line expects at the end of this tick."""
    span = np.maximum(state.deadline - state.restart, market.tick)
    return state.work * np.minimum((state.elapsed + market.tick) / span, 1.0)


class UniformProgress(DeadlinePolicy):
    name = "uniform-progress"
    description = "home-zone spot; on-demand while behind the straight line to the deadline"

    def choose(self, state: DeadlineState, market: MarketNow) -> np.ndarray:
        rows = np.arange(len(state.home))
        spot = market.spot_available[rows, state.home]
        expected = line(state, market)
        behind = state.progress < expected
        on_demand = is_on_demand(state.placement, market.zones)
        stay = on_demand & (state.progress < expected + state.restart)
        wanted = np.where(spot, state.home,
                          np.where(behind, market.on_demand(state.home), NONE))
        return np.where(stay, state.placement, wanted)

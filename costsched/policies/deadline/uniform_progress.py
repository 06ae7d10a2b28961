"""uniform-progress: Can't Be Late's Uniform Progress (Wu et al., NSDI 2024), one zone.

The job should keep up with the straight line ep(t) = C * t / D from no progress at its
start to all its work C at its deadline D. With d the restart (changeover) time, cp(t) the
progress and R(t), C(t) the time and the work left, at every decision, in this order:

1. safety net: off spot with R(t) < C(t) + 2d, on-demand to the end;
2. taking risks: spot whenever the home zone has it, even while behind the line; a job on
   spot stays there until it is preempted;
3. hysteresis: on on-demand, stay until cp(t) >= ep(t + 2d) (ahead of where the line will
   be two restarts from now), so that the job does not flip between on-demand and idle
   around the line, paying a restart each time;
4. uniform progress: idle and behind the line (cp(t) < ep(t)): on-demand to catch up;
   otherwise wait.
"""

from __future__ import annotations

import numpy as np

from costsched.policies.deadline.base import (
    NONE,
    DeadlinePolicy,
    DeadlineState,
    MarketNow,
    is_on_demand,
    is_spot,
)


def expected_progress(state: DeadlineState, elapsed: np.ndarray) -> np.ndarray:
    """ep: the work the straight line from start to deadline has done after `elapsed`."""
    return state.work * np.clip(elapsed / state.deadline, 0.0, 1.0)


def line(state: DeadlineState, market: MarketNow) -> np.ndarray:
    """Progress expected at the end of this tick on the straight line to all the work one
    restart before the deadline (spot-anywhere's pace without spot)."""
    span = np.maximum(state.deadline - state.restart, market.tick)
    return state.work * np.minimum((state.elapsed + market.tick) / span, 1.0)


class UniformProgress(DeadlinePolicy):
    name = "uniform-progress"
    description = ("Can't Be Late's rule: home-zone spot when there; on-demand while behind "
                   "the straight line to the deadline, with hysteresis")

    def choose(self, state: DeadlineState, market: MarketNow) -> np.ndarray:
        rows = np.arange(len(state.home))
        zones, d = market.zones, state.restart
        spot = market.spot_available[rows, state.home]
        on_spot = is_spot(state.placement, zones)
        on_demand = is_on_demand(state.placement, zones)
        here_od = np.where(on_demand, state.placement, market.on_demand(state.home))
        t = state.elapsed
        safety = state.time_left < state.remaining + 2 * d
        hold_od = on_demand & (state.progress < expected_progress(state, t + 2 * d))
        behind = state.progress < expected_progress(state, t)
        wanted = np.where(behind, here_od, NONE)
        wanted = np.where(hold_od, state.placement, wanted)
        wanted = np.where(spot, state.home, wanted)
        wanted = np.where(on_spot, state.placement, wanted)
        return np.where(safety & ~on_spot, here_od, wanted)

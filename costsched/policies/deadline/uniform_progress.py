"""uniform-progress: Can't Be Late's Uniform Progress (Wu et al., NSDI 2024), one zone.

The job should keep up with the straight line ep(t) = C * t / D from no progress at its
start to all its work C at its deadline D. With d the restart (changeover) time, cp(t) the
progress and R(t), C(t) the time and the work left, at every decision:

1. safety net: off spot with the work left and two restarts no longer fitting in the
   time left, R(t) < C(t) + 2d (in whole ticks, as the replay bills them): on-demand to
   the end;
2. exploitation: a job on spot stays there until it is preempted;
3. hysteresis: a job on on-demand stays there while its zone has no spot, and while it has
   spot until cp(t) >= ep(t + 2d) (ahead of where the line will be two restarts from now);
   only then it moves to spot. It never leaves on-demand to wait: each such flip between
   on-demand and idle around the line would cost a restart;
4. taking risks: a job without an instance takes spot whenever its zone has it, even
   behind the line;
5. uniform progress: without an instance and without spot, on-demand if behind the line
   (cp(t) < ep(t)), otherwise wait.

This is the paper's policy as its authors' simulator runs it: on-demand is kept until spot
is back and the job is ahead, so that the job does not pay a restart (and risk a
preemption's lost work) for every spot spell that comes while it catches up.
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
)


def expected_progress(state: DeadlineState, elapsed: np.ndarray) -> np.ndarray:
    """ep: the work the straight line from start to deadline has done after `elapsed`."""
    return state.work * np.clip(elapsed / state.deadline, 0.0, 1.0)


def line(state: DeadlineState, market: MarketNow) -> np.ndarray:
    """Progress expected at the end of this tick on the straight line to all the work one
    restart before the deadline (spot-anywhere's pace without spot)."""
    span = np.maximum(state.deadline - state.restart, market.tick)
    return state.work * np.minimum((state.elapsed + market.tick) / span, 1.0)


def safety_net(state: DeadlineState, market: MarketNow) -> np.ndarray:
    """Rule 1: the work left and two restarts no longer fit in the time left, in whole
    ticks (as the replay bills them)."""
    tick = market.tick
    return np.ceil((state.remaining + 2 * state.restart) / tick) >= np.floor(
        state.time_left / tick)


class UniformProgress(DeadlinePolicy):
    name = "uniform-progress"
    description = ("Can't Be Late's rule: home-zone spot when there; on-demand while behind "
                   "the straight line to the deadline, kept until spot and ahead (hysteresis)")

    def choose(self, state: DeadlineState, market: MarketNow) -> np.ndarray:
        rows = np.arange(len(state.home))
        zones, d = market.zones, state.restart
        spot = market.spot_available[rows, state.home]
        on_spot = is_spot(state.placement, zones)
        on_demand = is_on_demand(state.placement, zones)
        here_od = np.where(on_demand, state.placement, market.on_demand(state.home))
        t = state.elapsed
        ahead = state.progress >= expected_progress(state, t + 2 * d)
        behind = state.progress < expected_progress(state, t)
        without = np.where(spot, state.home, np.where(behind, here_od, NONE))
        from_od = np.where(spot & ahead, state.home, state.placement)
        wanted = np.where(on_spot, state.placement, np.where(on_demand, from_od, without))
        return np.where(safety_net(state, market) & ~on_spot, here_od, wanted)

    def on_demand_why(self, state: DeadlineState, market: MarketNow) -> str:
        """Which of its rules (the module's doc) takes on-demand for the batch's first run,
        with its figures."""
        d, t = float(np.broadcast_to(state.restart, (1,))[0]), float(state.elapsed[0])
        work, left = float(state.remaining[0]), float(state.time_left[0])
        done = float(state.progress[0])
        if bool(safety_net(state, market)[0]):
            return (f"{self.name}'s safety net: the work left ({age(work)}) and two restarts "
                    f"({age(2 * d)}) no longer fit in the {age(left)} to the deadline, in "
                    f"decisions every {age(market.tick)}: on-demand to the end")
        spot = bool(market.spot_available[0, int(state.home[0])])
        if not spot:
            expected = float(expected_progress(state, np.array([t]))[0])
            return (f"{self.name} runs on-demand while its home zone has no spot and the job "
                    f"is behind the straight line to the deadline ({age(done)} of work done, "
                    f"{age(expected)} by the line now)" if expected > done else
                    f"{self.name} keeps on-demand while its home zone has no spot")
        expected = float(expected_progress(state, np.array([t + 2 * d]))[0])
        return (f"{self.name} keeps on-demand until the job is ahead of the straight line to "
                f"the deadline two restarts from now ({age(done)} of work done, "
                f"{age(expected)} by the line then)")

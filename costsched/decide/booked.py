"""Booked capacity in a deadline policy's hands: a job that holds a capacity block (or a
reservation) runs there while it is usable, and the policy plans the rest around it.

The booked capacity is the market's last zone column (`BookedWindow.zone`): never spot, and
on-demand there is the booked capacity, priced 0 while it is booked (it is paid already)
and never preempted. `WithBooked` wraps any `costsched.policies.deadline` policy:

- within the window (a tick wholly inside [start, end), `end` being when the job must have
  left: the block's end less its margin) the job runs on the booked capacity;
- outside it, the wrapped policy decides on the market without the booked column (the very
  market it would see without a booking), as if the job had only the work the window
  still ahead cannot hold and only the time outside the window: before the window it need
  do no more than what will not fit in it, and once that is done the job waits for the
  window (a live job keeps the instance it has: it is never left without one); after
  the window the job has left the booked capacity (its end is a planned stop: the work is
  kept) and the policy has the job as it is.

The live deadline decider and the deadline backtest both ask it (`decide.deadline`), so a
replay with a block measures what a job holding one does.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

from costsched.lazy import numpy as np
from costsched.policies.deadline.base import NONE, DeadlinePolicy, DeadlineState, MarketNow

# MarketNow's arrays with a zone axis last (runs, zones) or alone (zones,).
_PER_ZONE = ("spot_available", "available_for", "spot_price", "on_demand_price", "region",
             "spell_mean", "zone_share", "dry_mean", "dry_for", "spot_spell")


@dataclass(frozen=True)
class BookedWindow:
    """Booked capacity a run may use: from `start` to `end` seconds after the run's (the
    job's) start, per run or one for all, in the market's last zone column `zone`; `twin`:
    a zone of the same region, where the wrapped policy finds the job's checkpoint once it
    left the booked capacity."""

    start: np.ndarray | float
    end: np.ndarray | float
    zone: int
    twin: int

    def holds(self, elapsed: np.ndarray | float, tick: float) -> np.ndarray:
        """Whether a tick `elapsed` seconds after the start is wholly within the window."""
        return (np.asarray(elapsed) >= np.asarray(self.start) - 1e-6) & \
            (np.asarray(elapsed) + tick <= np.asarray(self.end) + 1e-6)


class WithBooked(DeadlinePolicy):
    """`inner` with booked capacity (see the module's doc); named as `inner`."""

    description = "a deadline policy with capacity booked ahead"

    def __init__(self, inner: DeadlinePolicy, window: BookedWindow) -> None:
        self.inner, self.window = inner, window
        self.name = inner.name  # type: ignore[misc] - the wrapped policy's name

    def decide(self, state: DeadlineState, market: MarketNow) -> np.ndarray:
        zones = market.zones
        if self.window.zone != zones - 1:
            raise ValueError(f"booked zone {self.window.zone}: expected the market's last "
                             f"column ({zones - 1})")
        inside = self.window.holds(state.elapsed, market.tick)
        around = self.outside(state, zones, market.tick)
        chosen = self.inner.decide(around, _without_last(market))
        # The wrapped policy's placements in the whole market: on-demand shifts by one.
        chosen = np.where(chosen >= zones - 1, chosen + 1, chosen)
        # Before the window, once what it cannot hold is done: wait for it (it is paid).
        early = state.elapsed < np.asarray(self.window.start)
        chosen = np.where(early & (around.remaining <= 0), NONE, chosen)
        return np.where(inside, zones + self.window.zone, chosen).astype(np.int64)

    def choose(self, state: DeadlineState, market: MarketNow) -> np.ndarray:
        return self.decide(state, market)

    def outside(self, state: DeadlineState, zones: int, tick: float) -> DeadlineState:
        """The job as the wrapped policy sees it outside the window, in the market without
        the booked column: less the work the window still ahead will hold (its time less a
        restart, and less a tick at each end: the job is on it for whole ticks inside it
        only) and plus the restart after it when it cannot hold all, less the window's time;
        off the booked capacity."""
        elapsed = state.elapsed
        start = np.maximum(np.asarray(self.window.start, dtype=float), elapsed)
        end = np.minimum(np.asarray(self.window.end, dtype=float), state.deadline)
        ahead = np.maximum(end - start, 0.0)
        holds = np.minimum(np.maximum(ahead - state.restart - 2 * tick, 0.0), state.remaining)
        # Work the window cannot hold is done outside it, and what is left after it starts
        # again off the booked capacity: one restart more.
        after = np.where((ahead > 0) & (holds < state.remaining), state.restart, 0.0)
        booked = zones + self.window.zone
        leaving = state.placement == booked
        placement = np.where(leaving, NONE, np.where(state.placement >= zones,
                                                     state.placement - 1, state.placement))
        last = np.where(state.last_zone == self.window.zone, self.window.twin,
                        state.last_zone)
        return replace(state, work=state.work - holds + after, time_left=state.time_left - ahead,
                       deadline=state.deadline - ahead, placement=placement,
                       overhead_left=np.where(leaving, 0.0, state.overhead_left),
                       last_zone=last)


def _without_last(market: MarketNow) -> MarketNow:
    """The market without its last zone column."""
    cut = {}
    for f in fields(market):
        value = getattr(market, f.name)
        if f.name in _PER_ZONE and value is not None:
            cut[f.name] = value[..., :-1]
    cut["move_usd"] = market.move_usd[:-1, :-1]
    return replace(market, **cut)

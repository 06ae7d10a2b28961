"""Replay jobs with a deadline over an availability trace, one tick at a time, for many
start times and home zones at once.

Per tick: a spot placement whose zone has lost its spot is preempted (the work since the
last checkpoint is lost); the policy then chooses the placement for the tick; a change of
placement is a planned stop of the old one, which keeps all progress (the job contract:
on SIGTERM the job writes a checkpoint before it exits; checkpoints take no time here, as
the periodic ones), and a start pays the restart before any progress, plus the checkpoint's
egress when it starts in another region than the checkpoint's. Every tick a placement holds
is billed in full at that tick's price. A run that misses its deadline goes on (on-demand,
by the safety rule) until it is done, so its cost and lateness are known. The market a
policy sees at a tick holds the trace up to that tick only: which zones have spot, for how
long, the mean length of each zone's past spells with and without spot, and the share of
the past each zone had spot.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from costsched.backtest.deadline.trace import AvailabilityTrace
from costsched.decide.booked import BookedWindow, WithBooked
from costsched.decide.deadline import next_placements
from costsched.model import InvalidInput
from costsched.policies.deadline.base import (
    NONE,
    DeadlinePolicy,
    DeadlineState,
    MarketNow,
    MarketPrior,
    is_spot,
    zone_of,
)
from costsched.policies.deadline.past import MarketPast

HOUR = 3600.0
DeadlineStep = Callable[[int, DeadlineState, MarketNow, np.ndarray], None]
RUN_COLUMNS = ["start_tick", "home", "cost_usd", "finish_hours", "met", "preemptions",
               "restarts", "region_moves", "egress_usd", "spot_hours", "on_demand_hours"]
# What the market's past holds at a run's first tick: the whole trace before it ("full"),
# or nothing ("none": only the run's own ticks, as a new store meets the market).
HISTORIES = ("full", "none")


@dataclass(frozen=True)
class DeadlineJob:
    """A job of `work_hours` on `nodes` instances at once (a gang), due `deadline_hours`
    after its start."""

    work_hours: float
    deadline_hours: float
    restart_minutes: float
    checkpoint_minutes: float
    checkpoint_gb: float = 1.0
    # Seconds each checkpoint takes to write (no progress meanwhile); 0: free.
    checkpoint_write_seconds: float = 0.0
    # A gang of this many instances: billed N x the price, egress once per move.
    nodes: int = 1

    def __post_init__(self) -> None:
        for name in ("work_hours", "deadline_hours", "checkpoint_minutes"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise InvalidInput(f"{name} {value}: expected a positive number")
        if not (isinstance(self.nodes, (int, np.integer)) and self.nodes >= 1):
            raise InvalidInput(f"nodes {self.nodes!r}: expected a whole number >= 1")
        for name in ("restart_minutes", "checkpoint_gb", "checkpoint_write_seconds"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise InvalidInput(f"{name} {value}: expected a number >= 0")

    @property
    def work(self) -> float:
        """Seconds of running to finish: the work and the checkpoints written on the way
        (one per interval but the last)."""
        writes = max(math.ceil(self.work_hours * HOUR / (self.checkpoint_minutes * 60)) - 1, 0)
        return self.work_hours * HOUR + writes * self.checkpoint_write_seconds

    @property
    def deadline(self) -> float:
        return self.deadline_hours * HOUR

    @property
    def restart(self) -> float:
        return self.restart_minutes * 60

    @property
    def checkpoint(self) -> float:
        """Seconds of running between checkpoints: the interval and the write."""
        return self.checkpoint_minutes * 60 + self.checkpoint_write_seconds

    def horizon(self, tick: int, deadline: float | None = None) -> int:
        """Ticks a run may take: to its deadline (seconds; the job's by default), and on
        past it on-demand if it misses."""
        due = self.deadline if deadline is None else deadline
        return math.ceil(due / tick) + math.ceil((self.work + self.restart) / tick) + 1


@dataclass(frozen=True)
class BookedRun:
    """Capacity every run books (a capacity block bought at the run's start): in trace
    zone `zone` (the last: `AvailabilityTrace.with_booked_zone`), usable from `start_hours`
    after the run's start for `hours` (the job has left by then), `upfront_usd` paid at the
    start. It runs as the zone's on-demand placement at no price while usable
    (`decide.booked.WithBooked`)."""

    zone: int
    start_hours: float
    hours: float
    upfront_usd: float


def simulate(trace: AvailabilityTrace, policy: DeadlinePolicy, job: DeadlineJob,
             starts: np.ndarray, homes: np.ndarray,
             deadline_hours: np.ndarray | None = None,
             restart_minutes: np.ndarray | None = None,
             on_step: DeadlineStep | None = None, history: str = "full",
             booked: BookedRun | None = None) -> pd.DataFrame:
    """One row per run (start tick, home zone index): columns RUN_COLUMNS.
    `on_step(tick, state, market, chosen)`: told each tick's decision for every run as it
    is made (the tick counted from each run's start; `chosen` is kept where a run is done).
    `deadline_hours`, `restart_minutes`: per run, instead of the job's (runs of several
    settings replayed at once, as each would be alone: one pass over the ticks for all).
    `history`: what the market's past holds (HISTORIES): with "none" each run's policy
    sees the trace from its own start only (its statistics start from their priors).
    `booked`: capacity each run books at its start (its price counted there)."""
    if history not in HISTORIES:
        raise InvalidInput(f"history {history!r}: expected one of {', '.join(HISTORIES)}")
    starts = np.asarray(starts, dtype=np.int64)
    homes = np.asarray(homes, dtype=np.int64)
    n, zones, tick = len(starts), len(trace.zones), trace.tick
    deadline = (np.full(n, job.deadline) if deadline_hours is None
                else np.asarray(deadline_hours, dtype=float) * HOUR)
    restart = (job.restart if restart_minutes is None
               else np.asarray(restart_minutes, dtype=float) * 60)
    longest = replace(job, restart_minutes=float(np.max(restart)) / 60)
    horizon = longest.horizon(tick, float(deadline.max()))
    trace = trace.padded(int(starts.max()) + horizon + 1)
    rows = np.arange(n)
    work = np.full(n, job.work)
    move_usd = trace.move_usd(job.checkpoint_gb)
    # Per tick and zone (rows: ticks), so that a tick's market is one gather of rows.
    available_at = np.ascontiguousarray(trace.available.T)
    spot_price = np.ascontiguousarray(trace.spot_price.T)
    od_price = np.ascontiguousarray(trace.on_demand_price.T)
    past, first_row = _market_past(trace, starts, horizon, history, policy.prior)

    progress = np.zeros(n)
    placement = np.full(n, NONE, dtype=np.int64)
    overhead = np.zeros(n)
    last_zone = np.full(n, NONE, dtype=np.int64)
    cost = np.zeros(n)
    finish = np.full(n, np.nan)
    done = np.zeros(n, dtype=bool)
    preemptions = np.zeros(n, dtype=np.int64)
    restarts = np.zeros(n, dtype=np.int64)
    region_moves = np.zeros(n, dtype=np.int64)
    egress = np.zeros(n)
    spot_s = np.zeros(n)
    od_s = np.zeros(n)
    if booked is not None:  # bought at each run's start; used through the policy
        window = BookedWindow(booked.start_hours * HOUR,
                              (booked.start_hours + booked.hours) * HOUR, booked.zone,
                              trace.regions.index(trace.regions[booked.zone]))
        policy = WithBooked(policy, window)
        cost += booked.upfront_usd

    for t in range(horizon):
        if done.all():
            break
        at = starts + t
        available = available_at[at]
        zone = zone_of(placement, zones)
        lost = ~done & is_spot(placement, zones) & ~available[rows, np.maximum(zone, 0)]
        if lost.any():
            progress = np.where(lost, _saved(progress, job.checkpoint), progress)
            placement = np.where(lost, NONE, placement)
            overhead = np.where(lost, 0.0, overhead)
            preemptions += lost
        state = DeadlineState(progress=progress, work=work, time_left=deadline - t * tick,
                              placement=placement, overhead_left=overhead,
                              restart=restart, checkpoint=job.checkpoint, home=homes,
                              deadline=deadline, last_zone=last_zone, nodes=job.nodes)
        od_now = od_price[at]
        if booked is not None:  # paid already: no price while it can be used
            od_now[:, booked.zone] = np.where(window.holds(float(t * tick), float(tick)),
                                              0.0, od_now[:, booked.zone])
        market = MarketNow(float(tick), available, spot_price=spot_price[at],
                           on_demand_price=od_now, region=trace.region_codes,
                           move_usd=move_usd, **past.at(first_row + t))
        # The deadline core a live job is decided by; a replay may wait where it says so.
        chosen = np.where(done, placement, next_placements(policy, state, market))
        if on_step is not None:
            on_step(t, state, market, chosen)
        new_zone = zone_of(chosen, zones)
        bad = ~done & is_spot(chosen, zones) & ~available[rows, np.maximum(new_zone, 0)]
        if bad.any():
            raise RuntimeError(f"policy {policy.name} chose spot in "
                               f"{trace.zones[new_zone[bad][0]]} where there is none")
        change = ~done & (chosen != placement)  # a planned stop keeps the progress
        start = change & (chosen >= 0)
        moved = start & (last_zone >= 0)
        paid = np.where(moved, move_usd[np.maximum(last_zone, 0), np.maximum(new_zone, 0)],
                        0.0)
        cost += paid
        egress += paid
        restarts += moved
        region_moves += moved & (trace.region_codes[np.maximum(last_zone, 0)]
                                 != trace.region_codes[np.maximum(new_zone, 0)])
        last_zone = np.where(start, new_zone, last_zone)
        overhead = np.where(start, restart, np.where(change, 0.0, overhead))
        placement = chosen

        running = ~done & (placement >= 0)
        spot = is_spot(placement, zones)
        z = np.maximum(new_zone, 0)
        price = np.where(spot, spot_price[at, z], od_now[rows, z])
        cost += np.where(running, price * tick / HOUR * job.nodes, 0.0)
        spot_s += np.where(running & spot, tick, 0.0)
        od_s += np.where(running & ~spot, tick, 0.0)
        idle_part = np.minimum(overhead, tick)
        gained = np.where(running, tick - idle_part, 0.0)
        overhead = np.where(running, overhead - idle_part, overhead)
        ends = running & (progress + gained >= work)
        finish = np.where(ends, t * tick + idle_part + (work - progress), finish)
        progress = progress + gained
        done |= ends

    return pd.DataFrame({
        "start_tick": starts, "home": homes, "cost_usd": cost,
        "finish_hours": finish / HOUR, "met": done & (finish <= deadline + 1e-6),
        "preemptions": preemptions, "restarts": restarts, "region_moves": region_moves,
        "egress_usd": egress, "spot_hours": spot_s / HOUR,
        "on_demand_hours": od_s / HOUR,
    })[RUN_COLUMNS]


def _saved(progress: np.ndarray, checkpoint: float) -> np.ndarray:
    return np.floor(progress / checkpoint) * checkpoint


def _market_past(trace: AvailabilityTrace, starts: np.ndarray, horizon: int,
                 history: str, prior: MarketPrior) -> tuple[MarketPast, np.ndarray]:
    """The market's past statistics from `prior`, and per run the row of them its first
    tick reads (its tick t reads that row + t): the whole trace's, or each start's own
    window's."""
    if history == "full":
        return MarketPast.of(trace.available, trace.tick, prior), starts
    first, which = np.unique(starts, return_inverse=True)
    parts = [MarketPast.of(trace.available[:, s:s + horizon], trace.tick, prior)
             for s in first]
    return MarketPast.stacked(parts), which.astype(np.int64) * horizon

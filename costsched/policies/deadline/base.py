"""The deadline policy interface: a job's state and the market now in, the next placement out.

Everything is an array over runs (one row per job or replayed run), so that a replay of
many start times moves them all one tick at a time, and a live job is a batch of one.
A placement is an int per run: `NONE` (not running), `z` (spot in zone z) or `Z + z`
(on-demand in zone z), for the market's Z zones.

Job model (the backtest engine and the hindsight optimum follow it too): the job writes a
checkpoint every `checkpoint` seconds of progress; a preemption loses the work since the
last checkpoint, a planned stop (a change of placement) loses nothing, because the job
writes a checkpoint on SIGTERM before it exits (the job contract), and every start pays
`restart` seconds (billed, no progress) before the work goes on.

A job may be a gang of `nodes` instances (`DeadlineState.nodes`, 1 by default): then the
market is its whole gang's (spot for all N at once; prices per instance), it is billed N
times the price, its restart includes the nodes' rendezvous and a move pays the
checkpoint's egress once (`gang`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

from costsched.lazy import numpy as np
from costsched.policies.deadline.on_demand_pick import cheapest_on_demand
from costsched.policies.deadline.state import NONE as NONE
from costsched.policies.deadline.state import DeadlineState as DeadlineState
from costsched.policies.deadline.state import MarketNow as MarketNow

# `MarketNow.spell_mean` counts one spell of this many seconds besides those seen to end,
# so that a zone with little history is neither trusted nor dismissed.
PRIOR_SPELL = 3600.0


PRIOR_SHARE = 0.5


@dataclass(frozen=True)
class MarketPrior:
    """What a policy believes of a market it has not watched: the share of the time a zone
    (or some zone) has spot, counted as `seconds` seen, and the length in seconds of one
    spell with spot and of one without, counted as one spell each. The market's past is
    added to it (`spot_share`, `spell_mean`), so it counts less the more is seen."""

    share: float = PRIOR_SHARE
    spell: float = PRIOR_SPELL
    dry: float = PRIOR_SPELL
    seconds: float = PRIOR_SPELL


DEFAULT_PRIOR = MarketPrior()


def spot_share(seconds_with_spot: np.ndarray, seconds_seen: np.ndarray,
               prior: MarketPrior = DEFAULT_PRIOR) -> np.ndarray:
    """`MarketNow.spot_share` from the time seen and the part of it with spot somewhere."""
    return ((np.asarray(seconds_with_spot) + prior.share * prior.seconds)
            / (np.asarray(seconds_seen) + prior.seconds))


def spell_mean(total_seconds: np.ndarray, count: np.ndarray,
               prior_spell: float = PRIOR_SPELL) -> np.ndarray:
    """`MarketNow.spell_mean` from the total length and number of the spells seen to end,
    with one spell of `prior_spell` seconds besides."""
    return (np.asarray(total_seconds) + prior_spell) / (np.asarray(count) + 1)


# The past a market's recent statistics weigh: an hour this long ago counts half as much
# as the last one (spot markets change regime over days).
MEMORY_HOURS = 48.0


def recent_share(flags: np.ndarray, tick: float, memory_hours: float = MEMORY_HOURS,
                 prior: MarketPrior = DEFAULT_PRIOR) -> np.ndarray:
    """Per row and tick of a (rows, ticks) bool array: the share of the ticks before it
    that were True, weights halving every `memory_hours`, with the prior of `spot_share`."""
    decay = 0.5 ** (tick / (memory_hours * 3600))
    values = np.asarray(flags, dtype=float)
    seen = tick * _weighted_before(np.ones_like(values), decay)
    return spot_share(tick * _weighted_before(values, decay), seen, prior)


def recent_spell(ended: np.ndarray, tick: float, memory_hours: float = MEMORY_HOURS,
                 prior_spell: float = PRIOR_SPELL) -> np.ndarray:
    """Per row and tick: the mean length of the spells seen to end before or at the tick
    (`ended`: seconds of the spell that ended at each tick, 0 where none did), weights
    halving every `memory_hours`, with the prior of `spell_mean`."""
    decay = 0.5 ** (tick / (memory_hours * 3600))
    ended = np.asarray(ended, dtype=float)
    count = (ended > 0).astype(float)
    total = decay * _weighted_before(ended, decay) + ended
    return spell_mean(total, decay * _weighted_before(count, decay) + count, prior_spell)


def _weighted_before(values: np.ndarray, decay: float) -> np.ndarray:
    """Per row and tick t: the sum over ticks k < t of values[k] * decay ** (t - 1 - k),
    in blocks short enough that decay ** -block stays far from overflowing."""
    rows, ticks = values.shape
    out = np.empty((rows, ticks))
    block = max(1, int(200 / max(-np.log2(decay), 1e-12)))
    carry = np.zeros(rows)
    for first in range(0, ticks, block):
        part = values[:, first:first + block]
        j = np.arange(part.shape[1])
        total = np.cumsum(part * decay ** -j, axis=1)
        before = np.concatenate([np.zeros((rows, 1)), total[:, :-1]], axis=1)
        out[:, first:first + part.shape[1]] = (decay ** j * carry[:, None]
                                                + decay ** (j - 1.0) * before)
        m = part.shape[1]
        carry = decay ** m * carry + decay ** (m - 1.0) * total[:, -1]
    return out


def zone_of(placement: np.ndarray, zones: int) -> np.ndarray:
    """The zone of each placement (NONE stays NONE)."""
    return np.where(placement >= zones, placement - zones, placement)


def is_on_demand(placement: np.ndarray, zones: int) -> np.ndarray:
    return placement >= zones


def is_spot(placement: np.ndarray, zones: int) -> np.ndarray:
    return (placement >= 0) & (placement < zones)


def keeps_deadline(state: DeadlineState, market: MarketNow,
                   placement: np.ndarray) -> np.ndarray:
    """The safety rule shared by every policy: True where `placement` for this tick leaves
    on-demand able to finish by the deadline whatever happens next. On-demand always does
    (once started it is never taken away). Anything else may be stopped at the next tick
    (a preemption), keeping only the work checkpointed by then; from there on-demand needs
    one restart and the rest of the work, which must fit in the time left after this tick.
    Where that fails, the job runs on-demand now, and on-demand now still fits: the rule
    held a tick ago, and a planned switch keeps at least the checkpointed work it assumed."""
    tick = market.tick
    staying = placement == state.placement
    running = placement >= 0
    gain = np.where(staying, np.maximum(tick - state.overhead_left, 0.0),
                    np.maximum(tick - state.restart, 0.0))
    after = state.progress + np.where(running, gain, 0.0)
    # Only spot can be stopped unplanned; nothing running keeps what it has.
    kept = np.where(is_spot(placement, market.zones),
                    np.floor(after / state.checkpoint) * state.checkpoint, after)
    fits = state.work - kept + state.restart <= state.time_left - tick
    finishes = running & (after >= state.work)
    return fits | finishes | is_on_demand(placement, market.zones)


class DeadlinePolicy(ABC):
    """`choose` proposes; `decide` applies the safety rule on top (the engine calls it)."""

    name: ClassVar[str]
    description: ClassVar[str]
    # What it believes of a market before seeing any of it (the replay and the live
    # decider add the market's past to it: `past.MarketPast`).
    prior: MarketPrior = DEFAULT_PRIOR

    def decide(self, state: DeadlineState, market: MarketNow) -> np.ndarray:
        wanted = np.asarray(self.choose(state, market), dtype=np.int64)
        safe = keeps_deadline(state, market, wanted)
        if safe.all():
            return wanted
        return np.where(safe, wanted, self.fallback(state, market))

    @abstractmethod
    def choose(self, state: DeadlineState, market: MarketNow) -> np.ndarray:
        """The placement per run for the next tick (spot only where available now)."""

    def on_demand_why(self, state: DeadlineState, market: MarketNow) -> str:
        """Why `choose` proposes on-demand for the batch's first run, in the policy's own
        terms and figures ('': no more than its name says; `decide.deadline_why`)."""
        return ""

    def wait_why(self, state: DeadlineState, market: MarketNow) -> str:
        """Why `choose` waits for spot for the batch's first run rather than take it now
        ('': no more than its name says)."""
        return ""

    @staticmethod
    def fallback(state: DeadlineState, market: MarketNow) -> np.ndarray:
        """On-demand where the safety rule says so: the current on-demand placement, else
        the on-demand that costs least to the end of the work, its start included
        (`on_demand_pick.cheapest_on_demand`; the zone of its checkpoint on a tie)."""
        return np.where(is_on_demand(state.placement, market.zones), state.placement,
                        cheapest_on_demand(state, market, state.remaining))

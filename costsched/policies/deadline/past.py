"""What a deadline policy may know of the market's past: per tick and zone, from an
availability matrix (zones x ticks), the statistics `MarketNow` carries.

One computation for the replay and the live decider: the backtest engine takes every tick
of a trace (or of each run's own window, when the store is to hold only that,
`backtest.deadline.engine.simulate(history="none")`), the live decider the last tick of
the matrix its store's observations make (`service.deadline_jobs`). Everything at tick t
is read from ticks up to t (its availability, how long it has held) or before it (the
spells seen to end, the shares of the time with spot): never from the future.
"""

from __future__ import annotations

from dataclasses import dataclass

from costsched.lazy import numpy as np
from costsched.policies.deadline.base import (
    DEFAULT_PRIOR,
    MarketPrior,
    recent_share,
    recent_spell,
    spell_mean,
    spot_share,
)


@dataclass(frozen=True)
class MarketPast:
    """Arrays (ticks, zones), seconds unless named otherwise, `spot_share` (ticks,): the
    fields of `MarketNow` of the same names at each tick."""

    available_for: np.ndarray
    spell_mean: np.ndarray
    spot_share: np.ndarray
    zone_share: np.ndarray
    dry_mean: np.ndarray
    dry_for: np.ndarray
    spot_spell: np.ndarray

    @classmethod
    def of(cls, available: np.ndarray, tick: float,
           prior: MarketPrior = DEFAULT_PRIOR) -> MarketPast:
        """The statistics of a (zones, ticks) availability matrix at each of its ticks,
        each starting from `prior`."""
        available = np.asarray(available, dtype=bool)
        tick = float(tick)
        run = runs_before(available) * tick
        dry = ~available
        dry_run = runs_before(dry) * tick

        def rows(a: np.ndarray) -> np.ndarray:
            return np.ascontiguousarray(a.T)

        return cls(available_for=rows(run),
                   spell_mean=rows(past_spell_mean(available, run, prior.spell)),
                   spot_share=past_spot_share(available, tick, prior),
                   zone_share=rows(recent_share(available, tick, prior=prior)),
                   dry_mean=rows(recent_spell(ended(dry, dry_run), tick,
                                              prior_spell=prior.dry)),
                   dry_for=rows(dry_run),
                   spot_spell=rows(recent_spell(ended(available, run), tick,
                                                prior_spell=prior.spell)))

    def at(self, rows: np.ndarray) -> dict[str, np.ndarray]:
        """The fields at these rows (a tick per run), keyed as `MarketNow`'s."""
        return {name: getattr(self, name)[rows] for name in FIELDS}

    @staticmethod
    def stacked(parts: list[MarketPast]) -> MarketPast:
        """Several matrices' statistics one after the other (rows: the first's ticks, then
        the second's...), to be read at a row per run."""
        return MarketPast(*(np.concatenate([getattr(p, name) for p in parts])
                            for name in FIELDS))


FIELDS = ("available_for", "spell_mean", "spot_share", "zone_share", "dry_mean", "dry_for",
          "spot_spell")


def runs_before(flags: np.ndarray) -> np.ndarray:
    """Ticks each row has been True without a break, up to and including tick t."""
    z, n = flags.shape
    idx = np.broadcast_to(np.arange(1, n + 1), (z, n))
    last_false = np.maximum.accumulate(np.where(flags, 0, idx), axis=1)
    return np.where(flags, idx - last_false, 0)


def ended(flags: np.ndarray, run_before: np.ndarray) -> np.ndarray:
    """Per row and tick: the seconds of the spell of True that ended at the tick's start
    (True at the tick before, False now), else 0."""
    out = np.zeros(flags.shape)
    out[:, 1:] = np.where(flags[:, :-1] & ~flags[:, 1:], run_before[:, :-1], 0.0)
    return out


def past_spell_mean(available: np.ndarray, run_before: np.ndarray,
                    prior_spell: float = DEFAULT_PRIOR.spell) -> np.ndarray:
    """Per zone and tick: the mean length in seconds of the zone's spot spells seen to end
    by the tick (gone at its start), with the prior spell: the past of the trace only."""
    gone = ended(available, run_before)
    return spell_mean(np.cumsum(gone, axis=1), np.cumsum(gone > 0, axis=1), prior_spell)


def past_spot_share(available: np.ndarray, tick: float,
                    prior: MarketPrior = DEFAULT_PRIOR) -> np.ndarray:
    """Per tick: the share of the ticks before it with spot in at least one zone (with the
    prior of `base.spot_share`): the past of the trace only."""
    anywhere = available.any(axis=0)
    before = np.concatenate([[0], np.cumsum(anywhere)[:-1]]) * tick
    return spot_share(before, np.arange(available.shape[1]) * tick, prior)

"""What the past of the market says of a zone, and what finishing a job there is expected
to cost: the pricing the deadline policies share for waits and moves.

A zone's pace of spot is the share of the past it had spot, less what its preemptions take
of a spell of its mean past length (a restart and half a checkpoint interval of work); the
work that pace cannot do before the deadline is done on-demand (`finish_usd`). Waiting for
a zone without spot spends its expected time without it (the mean length of its past
spells without spot), which is slack: it costs nothing while the pace still fits, and
on-demand work once it no longer does. Everything here is the past of the market (the
older, the less it counts: `base.MEMORY_HOURS`); without the per-zone past (a market that
gives only the zones' spell lengths, or nothing) it falls back to what it is given, else
to the prior of `base`.
"""

from __future__ import annotations

from costsched.lazy import numpy as np
from costsched.policies.deadline.base import DEFAULT_PRIOR, MarketNow, MarketPrior

HOUR = 3600.0
# Spot's learned pace is discounted by this factor before it is trusted to finish work
# (a zone's past share of spot is an average; the time left may be worse).
PACE_MARGIN = 0.9


def finish_usd(work: np.ndarray, room: np.ndarray, share: np.ndarray, spell: np.ndarray,
               per_preemption: np.ndarray, spot_price: np.ndarray,
               od_price: np.ndarray) -> np.ndarray:
    """Expected USD to finish `work` seconds within `room` seconds in a zone (broadcasts):
    spot at its pace (`share` of the time, each spell of `spell` seconds losing
    `per_preemption`), billed for the time its preemptions waste too, and on-demand for
    the work that pace leaves undone, kept to the end (one restart of room kept for it)."""
    kept = np.clip(1 - per_preemption / np.maximum(spell, 1.0), 0.05, 1.0)
    rate = np.clip(share * kept * PACE_MARGIN, 1e-3, 0.999)
    room = np.maximum(room, 0.0)
    od_work = np.clip((work - rate * room) / (1 - rate), 0.0, work)
    return ((work - od_work) / kept * spot_price + od_work * od_price) / HOUR


def learned(market: MarketNow, shape: tuple[int, int], prior: MarketPrior = DEFAULT_PRIOR
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(share of the time with spot, mean spell with spot, expected seconds until spot)
    per run and zone, from the market's past, else `prior`."""
    if market.zone_share is not None:
        share = np.broadcast_to(market.zone_share, shape)
    elif market.spot_share is not None:
        share = np.broadcast_to(np.reshape(market.spot_share, (-1, 1)), shape)
    else:
        share = np.full(shape, prior.share)
    spell = (np.broadcast_to(market.spot_spell, shape) if market.spot_spell is not None
             else np.broadcast_to(market.spell_mean, shape) if market.spell_mean is not None
             else np.full(shape, prior.spell))
    if market.dry_mean is not None:
        dry = np.broadcast_to(market.dry_mean, shape)
    elif market.spot_spell is None and market.spell_mean is None:
        dry = np.full(shape, prior.dry)  # no past at all: the prior's
    else:
        # Spells with and without spot alternate: the share fixes their ratio.
        dry = spell * (1 - share) / np.maximum(share, 1e-3)
    return share, spell, np.maximum(dry, market.tick)

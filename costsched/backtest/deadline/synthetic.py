"""Synthetic spot availability: a generative model fitted to a recorded trace, to test
deadline policies on availability they were not tuned on.

Each zone alternates spells (spot available) and gaps (none), their lengths drawn from the
zone's own recorded spells and gaps (a bootstrap of the fitting trace: the spells cut by
its ends are left out). Variations of the fitted model (`Variation`):

- `spell_scale`, `gap_scale`: every spell / gap length multiplied (shorter spells: more
  preemptions; longer gaps: longer shortages);
- `shortage_hours`, `shortage_share`: correlation between zones: shortages common to all
  zones start on average every `shortage_hours` hours, each as long as a gap drawn from the
  pooled gaps, and each zone takes part in a shortage with probability `shortage_share`;
- `drift`: spells are multiplied by a factor going linearly from 1 at the start to `drift`
  at the end, and gaps by its inverse (the market tightening over time).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from costsched.backtest.deadline.trace import AvailabilityTrace
from costsched.model import InvalidInput


@dataclass(frozen=True)
class Variation:
    name: str
    spell_scale: float = 1.0
    gap_scale: float = 1.0
    shortage_hours: float = 0.0  # 0: zones independent
    shortage_share: float = 0.0
    drift: float = 1.0


@dataclass(frozen=True)
class SpotModel:
    """Per zone, the spell and gap lengths (in ticks) seen in the fitting trace."""

    zones: tuple[str, ...]
    tick: int
    spells: tuple[np.ndarray, ...]
    gaps: tuple[np.ndarray, ...]
    available_share: np.ndarray  # per zone: share of ticks with spot (to start a zone in)

    @classmethod
    def fit(cls, trace: AvailabilityTrace) -> SpotModel:
        spells, gaps = [], []
        for row in trace.available:
            up, down = _lengths(row)
            # A zone never seen to change: one spell (or gap) as long as the trace.
            spells.append(up if len(up) else np.array([len(row) if row.all() else 1]))
            gaps.append(down if len(down) else np.array([len(row) if not row.any() else 1]))
        return cls(trace.zones, trace.tick, tuple(spells), tuple(gaps),
                   trace.available.mean(axis=1))

    def sample(self, ticks: int, variation: Variation, seed: int, *,
               like: AvailabilityTrace) -> AvailabilityTrace:
        """A trace of `ticks` ticks over the model's zones, priced as `like` (its mean
        price per zone), from `seed`: the same seed gives the same trace."""
        if ticks < 1:
            raise InvalidInput(f"ticks {ticks}: expected at least 1")
        rng = np.random.default_rng(seed)
        drift = np.linspace(1.0, variation.drift, ticks)
        rows = [self._zone(z, ticks, variation, drift, rng) for z in range(len(self.zones))]
        available = np.stack(rows)
        if variation.shortage_hours > 0 and variation.shortage_share > 0:
            available &= ~self._shortages(ticks, variation, rng)
        zones = list(self.zones)
        keep = [like.zones.index(z) for z in zones]
        spot = like.spot_price[keep].mean(axis=1)
        od = like.on_demand_price[keep].mean(axis=1)
        return AvailabilityTrace.from_arrays(available, zones, self.tick, start=like.start,
                                             cloud=like.cloud, spot_price=spot,
                                             on_demand_price=od)

    def _zone(self, z: int, ticks: int, variation: Variation, drift: np.ndarray,
              rng: np.random.Generator) -> np.ndarray:
        row = np.zeros(ticks, dtype=bool)
        up = bool(rng.random() < self.available_share[z])
        t = 0
        while t < ticks:
            factor = drift[t] if up else 1.0 / drift[t]
            pool, scale = ((self.spells[z], variation.spell_scale) if up
                           else (self.gaps[z], variation.gap_scale))
            length = max(1, round(float(rng.choice(pool)) * scale * factor))
            row[t:t + length] = up
            t += length
            up = not up
        return row

    def _shortages(self, ticks: int, variation: Variation,
                   rng: np.random.Generator) -> np.ndarray:
        out = np.zeros((len(self.zones), ticks), dtype=bool)
        pooled = np.concatenate(self.gaps)
        mean_between = variation.shortage_hours * 3600 / self.tick
        t = int(rng.exponential(mean_between))
        while t < ticks:
            length = max(1, round(float(rng.choice(pooled)) * variation.gap_scale))
            part = rng.random(len(self.zones)) < variation.shortage_share
            out[part, t:t + length] = True
            t += length + int(rng.exponential(mean_between))
        return out


def _lengths(row: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lengths of the complete runs of True and of False (the runs cut by either end of
    the row are unknown in length and left out)."""
    edges = np.flatnonzero(np.diff(row.astype(np.int8))) + 1
    if len(edges) < 2:
        return np.array([], dtype=np.int64), np.array([], dtype=np.int64)
    lengths = np.diff(edges)
    first_up = bool(row[edges[0]])
    values = np.array([first_up if i % 2 == 0 else not first_up
                       for i in range(len(lengths))])
    return lengths[values], lengths[~values]

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
  at the end, and gaps by its inverse (the market tightening over time);
- `scarce_zone`, `scarce_from`, `scarce_spell`, `scarce_gap`: a regime change: from that
  share of the trace on, one zone's spells are multiplied by `scarce_spell` and its gaps by
  `scarce_gap` (a zone that was reliable turns scarce).

A model need not be fitted to a recording: `SpotModel.parametric` draws each zone's
spells and gaps from log-normal laws of given medians, for markets judged apart from every
recording. `stepped_prices` puts a price path on a trace (spot prices rising in steps
while on-demand stays, as H100 spot did in 2026).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

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
    scarce_zone: int | None = None
    scarce_from: float = 0.5
    scarce_spell: float = 1.0
    scarce_gap: float = 1.0


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

    @classmethod
    def parametric(cls, zones: tuple[str, ...], tick: int, spell_hours: Sequence[float],
                   gap_hours: Sequence[float], sigma: float, seed: int,
                   draws: int = 500) -> SpotModel:
        """Per zone, `draws` spells and gaps (in ticks, at least one) from log-normal laws
        of the given medians in hours and log-scale `sigma` (the same seed, the same
        model)."""
        if not (len(zones) == len(spell_hours) == len(gap_hours)) or sigma < 0:
            raise InvalidInput("parametric model: expected one spell and one gap median per "
                               "zone and a sigma >= 0")
        rng = np.random.default_rng(seed)

        def pool(median: float) -> np.ndarray:
            hours = median * np.exp(sigma * rng.standard_normal(draws))
            return np.maximum(1, np.round(hours * 3600 / tick)).astype(np.int64)

        spells = tuple(pool(h) for h in spell_hours)
        gaps = tuple(pool(h) for h in gap_hours)
        share = np.array([u.mean() / (u.mean() + d.mean()) for u, d in zip(spells, gaps,
                                                                            strict=True)])
        return cls(tuple(zones), tick, spells, gaps, share)

    def sample(self, ticks: int, variation: Variation, seed: int, *,
               like: AvailabilityTrace) -> AvailabilityTrace:
        """A trace of `ticks` ticks over the model's zones, priced as `like` (its mean
        price per zone), from `seed`: the same seed gives the same trace."""
        if ticks < 1:
            raise InvalidInput(f"ticks {ticks}: expected at least 1")
        rng = np.random.default_rng(seed)
        drift = np.linspace(1.0, variation.drift, ticks)
        rows = [self._zone(z, ticks, variation, drift, rng) for z in range(len(self.zones))]
        if variation.scarce_zone is not None:
            z, cut = variation.scarce_zone, int(ticks * variation.scarce_from)
            scarce = Variation("scarce", spell_scale=variation.scarce_spell,
                               gap_scale=variation.scarce_gap)
            rows[z][cut:] = self._zone(z, ticks - cut, scarce, np.ones(ticks - cut), rng)
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


def stepped_prices(trace: AvailabilityTrace, spot_share: Sequence[float]) -> AvailabilityTrace:
    """The trace with spot priced at `spot_share` x on-demand, the shares (a path of
    steps, such as weekly prices) spread evenly over its ticks in order."""
    shares = np.asarray(spot_share, dtype=float)
    if shares.ndim != 1 or len(shares) == 0 or not ((shares > 0) & (shares <= 1)).all():
        raise InvalidInput("spot_share: expected shares of the on-demand price in (0, 1]")
    step = np.minimum(np.arange(trace.ticks) * len(shares) // trace.ticks, len(shares) - 1)
    return replace(trace, spot_price=trace.on_demand_price * shares[step][None, :],
                   price_source=f"spot at {shares.min():.0%}-{shares.max():.0%} of on-demand "
                                f"in {len(shares)} steps")


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

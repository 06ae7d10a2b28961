"""Hand-made availability traces and a scripted policy for the deadline tests."""

from __future__ import annotations

import numpy as np
import pandas as pd

from costsched.backtest.deadline import AvailabilityTrace
from costsched.policies.deadline import DeadlinePolicy, DeadlineState, MarketNow
from costsched.policies.deadline.base import NONE, is_spot, zone_of

SPOT, ON_DEMAND = 1.0, 3.0


def trace(rows: list[str] | np.ndarray, zones: list[str], tick: int = 60) -> AvailabilityTrace:
    """Rows of '1'/'0' per zone (or a bool matrix), priced SPOT and ON_DEMAND everywhere."""
    matrix = (np.array([[c == "1" for c in r] for r in rows]) if isinstance(rows, list)
              else np.asarray(rows, dtype=bool))
    return AvailabilityTrace.from_arrays(matrix, zones, tick, spot_price=SPOT,
                                         on_demand_price=ON_DEMAND)


def intervals(t: AvailabilityTrace, instance_type: str = "p3.2xlarge") -> pd.DataFrame:
    """The trace as stored intervals (one per run of equal ticks per zone)."""
    out = []
    for z, zone in enumerate(t.zones):
        row = t.available[z]
        edges = np.flatnonzero(np.diff(row.astype(int))) + 1
        bounds = np.concatenate([[0], edges, [len(row)]])
        for a, b in zip(bounds[:-1], bounds[1:], strict=True):
            out.append({"cloud": t.cloud, "region": t.regions[z], "zone": zone,
                        "instance_type": instance_type, "gpu_model": "V100", "gpu_count": 1,
                        "start": t.start + pd.Timedelta(seconds=int(a) * t.tick),
                        "end": t.start + pd.Timedelta(seconds=int(b) * t.tick),
                        "available": bool(row[a]), "kind": "availability",
                        "source": "hand-made"})
    return pd.DataFrame(out)


class Scripted(DeadlinePolicy):
    """Plays a placement per run and tick (no safety rule: any schedule at all); spot where
    there is none becomes nothing; after the script, on-demand in the first zone."""

    name = "scripted"
    description = "a fixed schedule"

    def __init__(self, script: np.ndarray) -> None:
        self.script = script
        self.t = 0

    def choose(self, state: DeadlineState, market: MarketNow) -> np.ndarray:
        raise NotImplementedError

    def decide(self, state: DeadlineState, market: MarketNow) -> np.ndarray:
        t, self.t = self.t, self.t + 1
        if t >= self.script.shape[1]:
            return np.where(state.placement >= market.zones, state.placement, market.zones)
        wanted = self.script[:, t]
        rows = np.arange(len(wanted))
        there = market.spot_available[rows, np.maximum(zone_of(wanted, market.zones), 0)]
        return np.where(is_spot(wanted, market.zones) & ~there, NONE, wanted)


class Recorder:
    """Wraps a policy and keeps what it decided at each tick (runs x ticks)."""

    def __init__(self, policy: DeadlinePolicy) -> None:
        self.policy = policy
        self.name = policy.name
        self.prior = policy.prior
        self.ticks: list[np.ndarray] = []

    def decide(self, state: DeadlineState, market: MarketNow) -> np.ndarray:
        out = self.policy.decide(state, market)
        self.ticks.append(out.copy())
        return out

    @property
    def placements(self) -> np.ndarray:
        return np.stack(self.ticks, axis=1)

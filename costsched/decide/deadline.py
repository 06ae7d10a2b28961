"""The deadline core: a `costsched.policies.deadline` policy's next placement for a batch of
runs (one live job, or every replayed start of a backtest), from arrays.

The live decider (`service.deadline_jobs`, over the store's market at t, a batch of one) and
the deadline backtest (`backtest.deadline.engine`, over the trace's market at each tick,
every run at once) both ask `next_placements`. A replay may wait (`NONE`: no instance this
tick) where the policy says so; a live job is never left without an instance (`wait=False`):
where the policy would wait, a job that runs keeps its instance, and a job without one goes
to the cheapest zone with spot now, else on-demand where its checkpoint is (its home zone
before it ran).
"""

from __future__ import annotations

import numpy as np

from costsched.policies.deadline.base import NONE, DeadlinePolicy, DeadlineState, MarketNow


def next_placements(policy: DeadlinePolicy, state: DeadlineState, market: MarketNow, *,
                    wait: bool = True) -> np.ndarray:
    """Per run, the placement for this tick: `NONE`, zone z (spot) or zones + z
    (on-demand), the safety rule applied (`DeadlinePolicy.decide`). `wait=False`: never
    `NONE` (see the module's doc)."""
    chosen = np.asarray(policy.decide(state, market), dtype=np.int64)
    idle = chosen == NONE
    if wait or not idle.any():
        return chosen
    spot_now = np.where(market.spot_available, market.spot_price, np.inf)
    has_spot = np.isfinite(spot_now).any(axis=1)
    cheapest = np.argmin(spot_now, axis=1)
    checkpoint_zone = np.where(state.last_zone >= 0, state.last_zone, state.home)
    instead = np.where(state.placement >= 0, state.placement,
                       np.where(has_spot, cheapest, market.on_demand(checkpoint_zone)))
    return np.where(idle, instead, chosen).astype(np.int64)

"""Where a job runs on on-demand: the on-demand offering that costs least over the time it
is expected to run there, its start included.

The shared safety rule, spot-hedge (a bridge over a wait for spot, a hedge), spot-anywhere
and spot-risk ask here where they leave spot for on-demand, and so does the live decider
where it never waits: on-demand is not tied to the zone of the job's checkpoint (the
home-zone policies' own choices, on-demand and uniform-progress, stay in the home zone).
Each zone's on-demand is priced over `seconds` of running for the job's whole gang, and
its start as a move is (`gang.move_usd`: a restart billed at that price, the checkpoint's
egress from the zone it was last in, none before its first start). The checkpoint's zone
(its home zone before it ran) is kept on a tie: a market whose on-demand costs the same
everywhere keeps the job where its checkpoint is. Where the job goes back to spot later is
priced then, as any start of spot is (the policy returns wherever spot is cheapest).
"""

from __future__ import annotations

from collections.abc import Sequence

from costsched.lazy import numpy as np
from costsched.policies.deadline.gang import move_usd, priced
from costsched.policies.deadline.state import DeadlineState, MarketNow

HOUR = 3600.0


def on_demand_usd(state: DeadlineState, market: MarketNow,
                  seconds: np.ndarray | float) -> np.ndarray:
    """USD per run and zone (runs, zones) of starting on-demand there and running it
    `seconds` (per run, or one for all), for the job's whole gang; `market`: prices per
    instance, as a policy is handed it."""
    return _priced_over(state, market, [seconds])[0]


def cheapest_on_demand(state: DeadlineState, market: MarketNow,
                       seconds: np.ndarray | float) -> np.ndarray:
    """Per run, the on-demand placement (zones + z) that costs least over `seconds` of
    running there, its start included (`on_demand_usd`); the checkpoint's zone (its home
    zone before it ran) where none costs less."""
    return cheapest_on_demands(state, market, [seconds])[0]


def cheapest_on_demands(state: DeadlineState, market: MarketNow,
                        spans: Sequence[np.ndarray | float]) -> list[np.ndarray]:
    """`cheapest_on_demand` over each of `spans`, the starts priced once."""
    rows = np.arange(len(state.progress))
    here = np.where(state.last_zone >= 0, state.last_zone, state.home)
    price, egress = market.on_demand_price, market.move_usd
    if (price == price[:, :1]).all() and not np.diagonal(egress).any() and \
            (egress >= 0).all():
        # One price everywhere: no zone costs less than the checkpoint's (no egress there).
        return [market.on_demand(here) for _ in spans]
    out = []
    for usd in _priced_over(state, market, spans):
        best = np.argmin(usd, axis=1)
        keep = usd[rows, here] <= usd[rows, best] + 1e-9
        out.append(market.on_demand(np.where(keep, here, best)))
    return out


def _priced_over(state: DeadlineState, market: MarketNow,
                 spans: Sequence[np.ndarray | float]) -> list[np.ndarray]:
    """`on_demand_usd` over each of `spans`, the start priced once."""
    gang = priced(state, market)
    n = len(state.progress)
    price = gang.on_demand_price
    egress = np.where((state.last_zone >= 0)[:, None],
                      market.move_usd[np.maximum(state.last_zone, 0)], 0.0)
    start = move_usd(state, price, egress)
    out = []
    for seconds in spans:
        run = np.broadcast_to(np.asarray(seconds, dtype=float), (n,))[:, None]
        usd = price * run / HOUR + start
        out.append(np.where(np.isfinite(usd), usd, np.inf))
    return out

"""Gangs: a job of N nodes (`DeadlineState.nodes`) as the deadline policies price it.

A gang is N instances of one offering in one zone, running all together or not at all:

- it runs in a zone only while that zone has spot for all N at once; the market a policy
  is handed (`MarketNow.spot_available`, `available_for` and the past-spell statistics)
  is the market of the job's whole gang, so its preemption hazard is that of N instances
  (the gang stops when any node is lost). The backtest gives it so, from traces of how
  many instances of a requested group were running (`AvailabilityTrace.from_counts`);
- it costs N times the price: prices stay USD per instance-hour in the market, and the
  policies price a placement at `nodes` times them (`priced`);
- its restart is a node's boot plus the rendezvous of the N nodes (`gang_restart`);
- a move moves N instances with the checkpoint's egress paid once: priced by the one move
  price, `optimize.decision.move_price`, at the gang's price (`move_usd`).

A gang that loses a node is released whole, not held. Holding the survivors would bill
them with no progress until replacements come, and save no time: the replacements boot
and the gang meets again (the rendezvous) either way, so the restart after a shortfall is
the same. What holding would have cost on the 16-node AWS traces is in
docs/deadlines.md, "Gangs".
"""

from __future__ import annotations

import math
from dataclasses import replace

from costsched.lazy import numpy as np
from costsched.optimize.decision import Overheads, move_price
from costsched.policies.deadline.state import DeadlineState, MarketNow

HOUR = 3600.0


def gang_restart(restart_seconds: float, nodes: int, rendezvous_seconds: float) -> float:
    """Seconds from a start to work going on for a gang of `nodes`: one node's restart
    (its boot and set-up, all nodes in parallel) and then the rendezvous of all of them
    (none for one node)."""
    if nodes < 1 or int(nodes) != nodes:
        raise ValueError(f"nodes {nodes}: expected a whole number >= 1")
    return float(restart_seconds) + (float(rendezvous_seconds) if nodes > 1 else 0.0)


def nodes_of(state: DeadlineState) -> np.ndarray:
    """The gang size per run, as floats of shape (runs,)."""
    return np.broadcast_to(np.asarray(state.nodes, dtype=float), state.progress.shape)


def priced(state: DeadlineState, market: MarketNow) -> MarketNow:
    """The market with its prices for the job's whole gang: USD per hour of `nodes`
    instances (the same market for one node)."""
    nodes = nodes_of(state)
    if (nodes == 1).all():
        return market
    per_run = nodes[:, None]
    return replace(market, spot_price=market.spot_price * per_run,
                   on_demand_price=market.on_demand_price * per_run)


def move_usd(state: DeadlineState, gang_usd_per_hour: np.ndarray,
             egress_usd: np.ndarray) -> np.ndarray:
    """USD of a planned move (or a start) of the job's gang to a placement billed
    `gang_usd_per_hour` (all its nodes; per run, or per run and zone), with `egress_usd`
    the checkpoint's egress to it (once, whatever the number of nodes): the one move
    price, `optimize.decision.move_price`, with the job's restart billed at the new price
    and neither lost work (a planned stop checkpoints first) nor overlap (the old gang
    stops before the new one starts)."""
    restart, price = state.restart, np.asarray(gang_usd_per_hour, dtype=float)
    restart_minutes = (float(restart) / 60 if np.ndim(restart) == 0
                       else np.asarray(restart, dtype=float).reshape(
                           (-1,) + (1,) * (price.ndim - 1)) / 60)
    overheads = Overheads(restart_minutes=restart_minutes, warmup_minutes=0.0,
                          transfer_gbps=math.inf, overlap_minutes=0.0,
                          lost_work_minutes=0.0, egress=True)
    return np.asarray(move_price(overheads, price, 0, np.asarray(egress_usd, dtype=float),
                                 1.0, 0.0).total, dtype=float)

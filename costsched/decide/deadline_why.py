"""Why a deadline policy's live decision runs a job on on-demand where spot is offered, in
the policy's terms and figures: the words of `decide.deadline.decide_now`'s `why`.

A placement on on-demand comes from one of three places, asked in the order the decision
is made: the policy's own choice (`DeadlinePolicy.choose` proposes on-demand: its
`on_demand_why` says why, in its terms), the shared safety rule (the policy would wait for
spot, or take it, and a preemption before its next decision could leave the job late:
`keeps_deadline`), or a live job never waiting (no zone has spot now). Where the cheapest
spot has none now, why (`DeadlineMarket.gone`) is said too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from costsched.amounts import age, stored_price
from costsched.lazy import numpy as np
from costsched.policies import OfferingKey
from costsched.policies.deadline.base import (
    NONE,
    DeadlinePolicy,
    DeadlineState,
    MarketNow,
    is_spot,
    keeps_deadline,
)
from costsched.vocabulary import offering_label

if TYPE_CHECKING:
    from costsched.decide.deadline_market import DeadlineMarket
    from costsched.lazy import pandas as pd


def on_demand_why(policy: DeadlinePolicy, state: DeadlineState, market: MarketNow,
                  found: DeadlineMarket,
                  spot_key: Callable[[pd.DataFrame, int], OfferingKey]) -> str:
    """Why `policy` runs the job (the batch's first run) on on-demand now rather than on
    spot ('' where no zone offers spot): see the module's doc."""
    prices = np.asarray(market.spot_price[0], dtype=float)
    offered = np.isfinite(prices)
    if not offered.any():
        return ""
    cheapest = int(np.argmin(np.where(offered, prices, np.inf)))
    named = (f"{_label(spot_key(found.offerings, cheapest))} at "
             f"{stored_price(float(prices[cheapest]))}/h")
    gone = found.gone_at(cheapest)
    first = (f"the cheapest spot, {named}, has none now: {gone}" if gone else
             f"the cheapest spot is {named}")
    wanted = int(np.asarray(policy.choose(state, market))[0])
    if wanted >= market.zones:  # the policy's own choice
        own = policy.on_demand_why(state, market)
        return f"{first}; {own or f'{policy.name} takes on-demand over spot here'}"
    if not bool(keeps_deadline(state, market, np.array([wanted]))[0]):
        wants = (f"{policy.name} would wait for spot" if wanted == NONE else
                 f"{policy.name} would take spot in "
                 f"{_label(spot_key(found.offerings, wanted))}")
        waits = policy.wait_why(state, market) if wanted == NONE else ""
        because = f" ({waits})" if waits else ""
        risk = "a wait" if wanted == NONE else "that"
        return (f"{first}; {wants}{because}, and {risk} could leave it late: "
                f"{safety_said(state, market, wanted)}")
    return (f"{first}; no zone it allows has spot now, and a job is not left without an "
            "instance to wait for it")


def safety_said(state: DeadlineState, market: MarketNow, wanted: int) -> str:
    """The shared safety rule's figures (`keeps_deadline`), for the batch's first run
    placed at `wanted`: were spot lost at the next decision, on-demand would need the work
    not checkpointed by then and a restart, in the time left after it."""
    restart = float(np.broadcast_to(state.restart, (1,))[0])
    progress = float(state.progress[0])
    after = progress if wanted == NONE else progress + max(market.tick - restart, 0.0)
    kept = (np.floor(after / state.checkpoint) * state.checkpoint
            if bool(is_spot(np.array([wanted]), market.zones)[0]) else after)
    need = float(state.work[0]) - kept + restart
    left = float(state.time_left[0])
    room = left - market.tick
    within = (f"with {age(room)} left then" if room > 0 else
              f"and the deadline, {age(left)} away, comes first")
    return (f"at its next decision, in {age(market.tick)}, finishing on-demand would need "
            f"{age(need)} (the work left and a restart), {within}")


def _label(key: OfferingKey) -> str:
    return offering_label(*key[:5])

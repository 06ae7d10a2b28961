"""Where should a job run now? A policy asked live, from the store's prices as of a time.

The same policy objects and decision model the backtest replays: a job placed on an
offering gets the decision a replay of the same store would make at the same instant.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import numpy as np
import pandas as pd

from costsched.model import InvalidInput, Job, Offering
from costsched.optimize.decision import Overheads, move_cost
from costsched.policies import JobState, MarketView, OfferingKey, make_policy, view_from_prices
from costsched.policies.base import expected_cost
from costsched.prices import prices_at
from costsched.service.stores import StoreLike, using
from costsched.service.values import as_time, at_least
from costsched.throughput import ThroughputTable


@dataclass(frozen=True)
class Decision:
    at: datetime
    policy: str
    current: OfferingKey | None
    choice: OfferingKey
    offering: Offering  # the chosen offering, ready to launch
    usd_per_hour: float  # its price as of `at`
    # The decision model's expected USD of the steps left where the job is (NaN before its
    # first placement, or where its offering has no price now), and on the choice, the
    # move included.
    stay_usd: float
    choice_usd: float

    @property
    def moves(self) -> bool:
        """True when the job should change offering (or be placed for the first time)."""
        return self.choice != self.current


def decide(store: StoreLike, job: Job, *, home_region: str,
           current: OfferingKey | None = None, steps_left: float | None = None,
           policy: str = "dynamic-aware", at: datetime | str | None = None,
           margin: float = 0.05, overheads: Overheads | None = None,
           table: ThroughputTable | None = None,
           measured_rates: pd.DataFrame | None = None) -> Decision:
    """The offering `policy` puts `job` on at `at` (default now), given the offering it runs
    on (`current`, None before its first placement) and the steps it has left (default all
    of them). `measured_rates`: preemptions and spot hours seen per (cloud, region, GPU
    model, count), as the decision model takes them (default: the clouds' rates)."""
    when = as_time(at)
    left = job.steps if steps_left is None else steps_left
    at_least("steps_left", left, 0)
    at_least("margin", margin, 0)
    table = table if table is not None else ThroughputTable.load()
    with using(store) as opened:
        frame = prices_at(opened, when)
    if frame.empty:
        raise InvalidInput(f"at {when:%Y-%m-%d %H:%M} UTC: no prices known; import or "
                           "collect prices first")
    view = view_from_prices(frame, when, table, job.model, measured_rates)
    state = JobState(job, home_region, left, None if current is None else tuple(current),
                     overheads or Overheads())
    chosen = make_policy(policy, margin=margin)
    choice = chosen.decide(view, state)
    row = view.row(choice)
    stay, there = _expected(view, state, choice)
    return Decision(when, chosen.name, state.current, choice, view.offering(choice),
                    float(view.prices[row]), stay, there)


def _expected(view: MarketView, state: JobState, choice: OfferingKey) -> tuple[float, float]:
    """Expected USD of the steps left on the current offering, and on `choice` plus the
    move's cost when it is a move."""
    there = view.row(choice)
    cost_there = float(expected_cost(view, state, np.array([there]))[0])
    here = view.row(state.current)
    if here is None:
        return float("nan"), cost_there
    if here == there:
        return cost_there, cost_there
    job = state.job
    move = move_cost(state.overheads, view.prices[[here, there]], 0,
                     view.egress_from(here)[[here, there]], job.checkpoint_gb,
                     job.checkpoint_hours)[1]
    return float(expected_cost(view, state, np.array([here]))[0]), cost_there + float(move)

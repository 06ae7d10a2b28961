"""Where should a job run now? A policy asked live, from the store's prices as of a time.

The same policy objects and decision model the backtest replays: a job placed on an
offering gets the decision a replay of the same store would make at the same instant.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
import pandas as pd

from costsched.model import InvalidInput, Job, Offering
from costsched.optimize.decision import Overheads, move_cost
from costsched.optimize.forecast import typical_from_observations
from costsched.optimize.hazard import Evidence
from costsched.policies import JobState, MarketView, OfferingKey, make_policy, view_from_prices
from costsched.policies.base import expected_cost
from costsched.policies.history import with_typical
from costsched.prices import prices_at
from costsched.service.stores import StoreLike, using
from costsched.service.throughputs import table_with_measured
from costsched.service.values import as_time, at_least
from costsched.store import PriceStore
from costsched.throughput import ThroughputTable

# Fewer hours of observed spot time than this leave a group to the cloud's default rate.
MIN_OBSERVED_HOURS = 24.0


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
           measured_rates: pd.DataFrame | Evidence | None = None) -> Decision:
    """The offering `policy` puts `job` on at `at` (default now), given the offering it runs
    on (`current`, None before its first placement) and the steps it has left (default all
    of them). `measured_rates`: preemptions and spot hours seen per (cloud, region, GPU
    model, count), as the decision model takes them; the store's spot availability
    observations before `at` are added to them (`observed_rates`); groups seen by
    neither take the clouds' default rates."""
    when = as_time(at)
    left = job.steps if steps_left is None else steps_left
    at_least("steps_left", left, 0)
    at_least("margin", margin, 0)
    with using(store) as opened:
        table = table if table is not None else table_with_measured(opened)
        frame = prices_at(opened, when)
        rates = decision_rates(opened, when, measured_rates)
    if frame.empty:
        raise InvalidInput(f"at {when:%Y-%m-%d %H:%M} UTC: no prices known; import or "
                           "collect prices first")
    view = view_from_prices(frame, when, table, job.model, rates)
    state = JobState(job, home_region, left, None if current is None else tuple(current),
                     overheads or Overheads())
    chosen = make_policy(policy, margin=margin)
    if chosen.history_hours:  # the same price history a replay gives the policy
        since = when - timedelta(hours=chosen.history_hours)
        with using(store) as opened:
            past = pd.concat([prices_at(opened, since, use_catalog=False),
                              opened.history(since, when, os="linux")])
        view = with_typical(view, typical_from_observations(
            past, view.keys, when.timestamp(), chosen.history_hours))
    choice = chosen.decide(view, state)
    row = view.row(choice)
    stay, there = _expected(view, state, choice)
    return Decision(when, chosen.name, state.current, choice, view.offering(choice),
                    float(view.prices[row]), stay, there)


def decision_rates(store: PriceStore, at: datetime,
                   measured: pd.DataFrame | Evidence | None = None) -> Evidence:
    """What the decision model's hazards are computed from at `at`: `measured` (such as
    the preemptions costsched's own jobs met), the store's observations (`observed_rates`)
    and the newest published risk signals (`costsched.optimize.hazard`). Evidence given
    is complete already: returned as it is."""
    if isinstance(measured, Evidence):
        return measured
    return Evidence(signals=store.signals.latest(at)).with_observed(
        measured, observed_rates(store, at))


def observed_rates(store: PriceStore, at: datetime, *,
                   min_hours: float = MIN_OBSERVED_HOURS) -> pd.DataFrame | None:
    """Preemptions per hour of running spot time per (cloud, region, zone, instance type,
    GPU model, count) from the store's preemption traces and probe logs before `at`, where
    at least `min_hours` were observed in the region; None when no region was. The
    decision model pools them from zone to cloud (`costsched.optimize.hazard`)."""
    rates = store.spot_availability.preemption_rates(
        by=("cloud", "region", "zone", "instance_type", "gpu_model", "gpu_count"), end=at)
    region_hours = rates.groupby(["cloud", "region"])["hours"].transform("sum")
    rates = rates[region_hours >= min_hours]
    return rates.reset_index(drop=True) if len(rates) else None


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

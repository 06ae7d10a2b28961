"""dynamic-aware: every period, choose where the job runs next by what that period costs
and what it leaves for the rest of the job, every move charged.

For each offering j it may run the next period on, the decision model's expected cost of
the job's remaining steps (`optimize.lookahead.next_period_costs`): moving there (idle
hours billed on j, the old instance's overlap, the checkpoint's egress), the period at
today's price of j, then the steps left finished on the best offering at its forecast
price (its mean over the past week, `optimize.forecast`), with the move to it. Today's
price holds for the next period only: a job waits out a price spike on a cheap offering,
or stays put when a move's saving would not outlast the spike. It moves to the best j
when that saves more than `margin` x the expected cost of the next period where it is.

The margin is hysteresis against moving for a saving within the noise of a period's
prices, so it is a share of what the decision is about: the next period. (A share of the
whole remaining job grows with the job while the saving of moving now rather than at the
next decision is at most a period's: a long job stayed on a dear offering for days after
a cheaper one came back.)
"""

from __future__ import annotations

from costsched.lazy import numpy as np
from costsched.optimize.decision import egress_per_gb, move_cost
from costsched.optimize.forecast import WINDOW_HOURS
from costsched.optimize.lookahead import moves_between, next_period_costs
from costsched.optimize.rank import best_of
from costsched.policies.base import JobState, Policy
from costsched.policies.history import forecast_prices
from costsched.policies.market import MarketView, OfferingKey
from costsched.policies.multi_cloud import MULTI_CLOUD

DEFAULT_MARGIN = 0.05
DEFAULT_PERIOD_HOURS = 24.0


class DynamicAware(Policy):
    name = "dynamic-aware"
    description = ("re-decide every period among the multi-cloud choices, by the cost of the "
                   "next period and of finishing at the past week's prices, moves charged")
    scope = MULTI_CLOUD
    history_hours = WINDOW_HOURS
    weighs_moves = True  # the move's price and the margin are in `decide`

    def __init__(self, margin: float = DEFAULT_MARGIN,
                 period_hours: float = DEFAULT_PERIOD_HOURS) -> None:
        super().__init__()
        self.margin = margin
        self.period_hours = period_hours

    def decide(self, view: MarketView, state: JobState) -> OfferingKey:
        usable = self.candidates(view, state)
        rows = np.flatnonzero(usable)
        if len(rows) == 0:
            raise self.no_candidate(view, state)
        cur = view.row(state.current)
        here = int(np.searchsorted(rows, cur)) if cur is not None and usable[cur] else None
        job, overheads = state.job, state.overheads
        prices = view.prices[rows]
        forecast, later = view.shared(
            ("dynamic-aware", rows.tobytes(), overheads, job.checkpoint_gb,
             job.checkpoint_hours), lambda: _later_moves(view, rows, state))
        idle = overheads.move_idle_hours(job.checkpoint_gb, job.checkpoint_hours)
        if here is None:  # not placed yet, or its offering is gone: a launch, not a move
            move_now, idle_now = np.zeros(len(rows)), np.zeros(len(rows))
        else:
            move_now = move_cost(overheads, prices, here, view.egress_from(cur)[rows],
                                 job.checkpoint_gb, job.checkpoint_hours)
            move_now[here] = 0.0
            idle_now = np.full(len(rows), idle)
            idle_now[here] = 0.0
        costs = next_period_costs(state.steps_left, view.steps_per_second[rows], prices,
                                  forecast, view.preemptions_per_hour[rows],
                                  job.checkpoint_hours, state.restart_hours, self.period_hours,
                                  move_now, idle_now, later)
        cost = costs.total
        best = best_of(cost, view.tie_order[rows])
        if here is None:
            return view.key(int(rows[best]))
        saving = float(cost[here] - cost[best])
        if best != here and saving > self.margin * float(costs.period[here]):
            return view.key(int(rows[best]))
        return state.current  # type: ignore[return-value]


def _later_moves(view: MarketView, rows: np.ndarray,
                 state: JobState) -> tuple[np.ndarray, np.ndarray]:
    """The forecast price of `rows` and the [from, to] USD of a move between them after the
    next period: the same for every job of the same checkpoint and overheads over `rows`."""
    job = state.job
    forecast = forecast_prices(view)[rows]
    if view.egress is not None:
        egress = view.egress[rows][:, rows]
    else:
        offerings = view.offerings.iloc[rows]
        # By zone pair too, as the move now is priced (`MarketView.egress_from`).
        egress = egress_per_gb(offerings["cloud"].to_numpy(), offerings["region"].to_numpy(),
                               zone=offerings["zone"].to_numpy() if "zone" in offerings
                               else None)
    return forecast, moves_between(state.overheads, forecast, egress, job.checkpoint_gb,
                                   job.checkpoint_hours)

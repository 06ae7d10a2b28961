"""Two-stage expected costs: run the next decision period on an offering, then finish the
job on the best offering at forecast prices, every move charged by the decision model.

A policy that re-decides every period only commits to the next period: it can park a job
on a slow, cheap GPU while a price spike lasts and come back, or skip a move whose saving
would not outlast the spike. Its expected cost of running the next period on offering j:

    move(now -> j) + price_j x hours run in the period
      + min over k of [move(j -> k at forecast prices) + cost of the steps left on k
                       at its forecast price]

Hours and progress follow the decision model (`decision.outcomes`: spot risk, checkpoint
interval, restart); a move idles the new instance for `Overheads.move_idle_hours`.
"""

from __future__ import annotations

from dataclasses import dataclass

from costsched.lazy import numpy as np
from costsched.optimize import decision
from costsched.optimize.decision import Overheads


def moves_between(overheads: Overheads, prices: np.ndarray, egress_usd_per_gb: np.ndarray,
                  checkpoint_gb: float, checkpoint_hours: float) -> np.ndarray:
    """[from, to] USD of moving a job between offerings at `prices`: `decision.move_cost`
    for every source at once (0 on the diagonal: staying is no move)."""
    prices = np.asarray(prices, dtype=float)
    idle = overheads.move_idle_hours(checkpoint_gb, checkpoint_hours)
    cost = idle * prices[None, :] + overheads.overlap_hours * prices[:, None]
    egress = overheads.egress_gb(checkpoint_gb)
    if egress > 0:
        cost = cost + egress * np.asarray(egress_usd_per_gb, dtype=float)
    np.fill_diagonal(cost, 0.0)
    return cost


@dataclass(frozen=True)
class PeriodCosts:
    """Per offering the next period runs on: expected USD of the job's steps left."""

    total: np.ndarray  # the move there, the period, and the rest finished at its best
    period: np.ndarray  # the part spent in the next period: the move there and the hours run


def next_period_costs(steps_left: float, steps_per_second: np.ndarray, prices: np.ndarray,
                      forecast: np.ndarray, preemptions_per_hour: np.ndarray,
                      checkpoint_hours: float, restart_hours: float, period_hours: float,
                      move_now: np.ndarray, idle_now: np.ndarray,
                      move_later: np.ndarray) -> PeriodCosts:
    """Expected USD of the job's `steps_left` when the next period runs on each offering
    (see the module's formula), and of that period alone. Per offering: `prices` hold for
    the period, `forecast` after it; `move_now` and `idle_now`: USD and idle hours of
    getting there (0 where the job is); `move_later`: [from, to] USD of a move after the
    period, at forecast prices."""
    now = decision.outcomes(steps_left, steps_per_second, prices, preemptions_per_hour,
                            checkpoint_hours, restart_hours)
    # Work per wall-clock hour under spot risk: W hours of work take W / pace expected hours.
    pace = now.work_hours / now.hours
    finishes = now.hours + idle_now <= period_hours
    run_hours = np.where(finishes, now.hours, period_hours - idle_now)
    left = np.where(finishes, 0.0, steps_left - run_hours * pace * steps_per_second * 3600)
    per_step = now.hours * forecast / steps_left  # USD per step left, at forecast prices
    finish = move_later + left[:, None] * np.where(np.isnan(per_step), np.inf, per_step)
    best_finish = np.where(left > 0, finish.min(axis=1), 0.0)
    period = move_now + prices * run_hours
    return PeriodCosts(period + best_finish, period)

"""oracle: the cheapest plan in hindsight, with every future price known.

A plan is one offering per decision period (the multi-cloud choice set), charged by the
same rules as every other policy (`accounting.Run`), migration costs included. Every
online policy's run is such a plan, so the oracle's cost is a lower bound on theirs.

The search is dynamic programming over the periods. The state after period k is (the
offering the job is on, steps done, USD spent); steps done depend on the path (GPUs differ
in speed), so each offering keeps the Pareto front of (more steps, fewer USD) labels: a
label with fewer steps and more USD than another on the same offering can never finish
cheaper (its future can at best copy the other's). Labels are also cut when their cost
plus a lower bound on finishing (steps left x the lowest USD/step any offering reaches
from then on) cannot beat the best plan found so far (at first: the best plan that never
moves); a pair of a label and an offering whose bound already fails is not run at
all. The cuts are exact, so the result is the optimum over all plans, not an
approximation; a test checks it against brute force on small traces. Offerings no plan can
tell apart (same cloud, region, zone, speed and price history) are searched once.

A job already placed (`JobState.current`) is planned from where it runs: staying there is
no move, and the first move away is charged as any other (the plan for the rest of a job a
policy has run so far, e.g. from the time a new cloud is first priced).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from costsched.backtest.accounting import Run
from costsched.backtest.trace import HOUR
from costsched.model import InvalidInput
from costsched.policies.base import JobState, Scope, scope_mask
from costsched.policies.multi_cloud import MULTI_CLOUD

MAX_PERIODS = 10_000


class Oracle:
    """Not an online policy: it plans a whole run with the future known."""

    name: ClassVar[str] = "oracle"
    description: ClassVar[str] = ("hindsight optimum over the multi-cloud choices, migration "
                                  "costs included")
    scope: ClassVar[Scope] = MULTI_CLOUD

    def plan(self, run: Run, state: JobState) -> list[int]:
        """The offering row for each period, from the start until the job's `run.steps` are
        done; from `state.current` when the job runs there at the start."""
        trace = run.trace
        reps = self._representatives(run, state)
        if len(reps) == 0:
            raise InvalidInput(f"oracle: no offering can run {state.job.model!r}")
        rates = run.steps_per_second[reps] * HOUR
        placed, here = self._placed(run, state, reps)

        cur = np.array([here])
        prog = np.array([0.0])
        cost = np.array([0.0])
        history: list[tuple[np.ndarray, np.ndarray]] = []
        # The best plan that never moves bounds the search from the first period on.
        seed, upper = self._best_stay(run, reps) if here < 0 else (here, _stay_usd(run, here))
        found = None
        for k in range(MAX_PERIODS):
            t0 = run.period_start(k)
            offered = reps[~np.isnan(trace.price_at(t0, reps))]
            if len(offered) == 0:  # only possible at the start: prices never disappear
                raise InvalidInput(f"oracle: no offering in scope can run {state.job.model!r} "
                                   "at the start")
            # Lower bound on finishing: every remaining step costs at least the cheapest
            # USD/step of any offering from the next period on (prices hold after the end).
            row = max(int(trace.times.searchsorted(run.period_start(k + 1), "right")) - 1, 0)
            with np.errstate(invalid="ignore"):
                floor = np.nanmin(trace.suffix_min[row, reps] / rates) if len(rates) else np.inf
            parent, new = _moves(run, k, offered, prog, cost, floor, upper)
            if len(parent) == 0:
                history.append((new, parent))
                break
            out = run.advance(k, cur[parent], new, run.steps - prog[parent])
            total = cost[parent] + out.usd
            done = np.where(out.finished, total, np.inf)
            i = int(np.argmin(done))
            if done[i] < upper:
                upper, found = done[i], (k, int(parent[i]), int(new[i]))
            alive = ~out.finished
            cur, prog, cost = new[alive], prog[parent[alive]] + out.steps[alive], total[alive]
            parent = parent[alive]
            keep = cost + (run.steps - prog) * floor < upper
            keep &= _pareto(cur[keep], prog[keep], cost[keep], keep)
            cur, prog, cost, parent = cur[keep], prog[keep], cost[keep], parent[keep]
            history.append((cur, parent))
            if len(cur) == 0:
                break
        plan = _stay_plan(run, seed) if found is None else _unwind(history, found)
        # Staying is no move: the plan keeps the job on its own offering, not on the twin
        # searched for it.
        for k, row in enumerate(plan):
            if row != here:
                break
            plan[k] = placed
        return plan

    def _placed(self, run: Run, state: JobState, reps: np.ndarray) -> tuple[int, int]:
        """The row the job runs on at the start and the row searched for it (its twin
        among `reps`); (-1, -1) before its first placement."""
        if state.current is None:
            return -1, -1
        trace = run.trace
        row = trace.rows.get(tuple(state.current))  # type: ignore[arg-type]
        if row is None or np.isnan(trace.price_at(run.start, np.array([row]))[0]):
            raise InvalidInput(f"oracle: the job's offering {state.current!r} has no price "
                               "at the start")
        twin = reps[run.trace.twins[reps] == trace.twins[row]]
        in_scope = scope_mask(self.scope, trace.offerings, state.region, state.job.constraints)
        if not in_scope[row] or len(twin) == 0:
            raise InvalidInput(f"oracle: the job's offering {state.current!r} is not one "
                               f"it may choose for {state.job.model!r}")
        return row, int(twin[0])

    @staticmethod
    def _best_stay(run: Run, reps: np.ndarray) -> tuple[int, float]:
        trace = run.trace
        offered = reps[~np.isnan(trace.price_at(run.start, reps))]
        if len(offered) == 0:
            return -1, np.inf
        end = run.start + run.steps / run.steps_per_second[offered]
        usd = trace.cost(offered, np.full(len(offered), float(run.start)), end)
        best = int(np.argmin(usd))
        return int(offered[best]), float(usd[best]) * (1 + 1e-9)

    def _representatives(self, run: Run, state: JobState) -> np.ndarray:
        """One offering per group that no plan can tell apart (`PriceTrace.twins`): same
        cloud, region, zone and speed and the same price at every time."""
        in_scope = scope_mask(self.scope, run.trace.offerings, state.region,
                              state.job.constraints)
        usable = in_scope & ~np.isnan(run.steps_per_second)
        rows = np.flatnonzero(usable)
        _, first = np.unique(run.trace.twins[rows], return_index=True)
        return rows[np.sort(first)]


def _moves(run: Run, k: int, offered: np.ndarray, prog: np.ndarray, cost: np.ndarray,
           floor: float, upper: float) -> tuple[np.ndarray, np.ndarray]:
    """(label, offering) pairs worth running period k for, label-major as the search
    expands them: those whose lower bound can beat `upper`. A pair that may finish in the
    period costs at least its label's cost plus its steps left at the offering's lowest
    price from now on; one that may not, its label's cost plus the whole period's price
    (moves free) plus the steps a whole period leaves at `floor`. Both bounds are below
    what the search computes for the pair, with a margin for rounding, so this drops only
    pairs it would drop after running them."""
    trace = run.trace
    t0 = float(run.period_start(k))
    rate = run.steps_per_second[offered]
    now = max(int(trace.times.searchsorted(run.period_start(k), "right")) - 1, 0)
    lowest = trace.suffix_min[now, offered] / HOUR  # USD/s
    period_usd = trace.spent_all(t0 + run.period_s)[offered] - trace.spent_all(t0)[offered]
    left = (run.steps - prog)[:, None]
    limit = upper * (1 + 1e-9) + 1e-9
    idle_s = run.idle_hours * HOUR
    with np.errstate(invalid="ignore", divide="ignore"):
        need = left / rate
        finish = (need <= run.period_s + 1.0) & (cost[:, None] + need * lowest < limit)
        go_on = ((need > run.period_s - idle_s - 1.0)
                 & (cost[:, None] + period_usd + (left - rate * run.period_s) * floor < limit))
    label, column = np.nonzero(finish | go_on)
    return label, offered[column]


def _pareto(cur: np.ndarray, prog: np.ndarray, cost: np.ndarray,
            mask: np.ndarray) -> np.ndarray:
    """Within `mask`, True for the labels no other label on the same offering dominates."""
    keep = np.zeros(len(mask), dtype=bool)
    if len(cur) == 0:
        return keep
    order = np.lexsort((cost, -prog, cur))
    group = np.cumsum(np.concatenate(([False], np.diff(cur[order]) != 0)))
    # A running minimum of cost that restarts per group: later groups are shifted below all
    # earlier ones, so an earlier group's minimum never carries over.
    big = float(np.max(cost)) + 1.0
    shifted = cost[order] - group * big
    before = np.concatenate(([np.inf], np.minimum.accumulate(shifted)[:-1]))
    survivors = np.zeros(len(cur), dtype=bool)
    survivors[order] = shifted < before
    keep[np.flatnonzero(mask)] = survivors
    return keep


def _stay_usd(run: Run, row: int) -> float:
    """What staying on `row` to the end costs, as charged (the bound a placed job's search
    starts from, a hair above so that staying itself is found)."""
    usd = 0.0
    done = 0.0
    for k in range(MAX_PERIODS):
        out = run.advance_one(k, row, row, run.steps - done)
        usd += out.usd
        if out.finished:
            return usd * (1 + 1e-9)
        done += out.steps
    return np.inf


def _stay_plan(run: Run, row: int) -> list[int]:
    done, prev = 0.0, -1
    for k in range(MAX_PERIODS):
        out = run.advance(k, np.array([prev]), np.array([row]), np.array([run.steps - done]))
        if out.finished[0]:
            return [row] * (k + 1)
        done, prev = done + float(out.steps[0]), row
    raise InvalidInput(f"oracle: the job cannot finish within {MAX_PERIODS} periods")


def _unwind(history: list[tuple[np.ndarray, np.ndarray]],
            found: tuple[int, int, int]) -> list[int]:
    k, label, last = found
    plan = [last]
    for period in range(k - 1, -1, -1):
        cur, parent = history[period]
        plan.append(int(cur[label]))
        label = int(parent[label])
    return plan[::-1]

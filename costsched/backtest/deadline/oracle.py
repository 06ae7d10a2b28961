"""The hindsight optimum of a job with a deadline over an availability trace: the least
cost any schedule could reach knowing the whole trace, under the engine's rules (billed
ticks, a restart per start, work lost back to the last checkpoint at every preemption
but none at a planned stop, which checkpoints first, egress between regions), by dynamic
programming backwards over ticks.

State at the start of a tick: what runs (nothing, with the checkpoint in a region or none
yet; on-demand in a region; spot in a zone) and the waste so far, w = elapsed - progress
(time spent restarting, idle or redoing lost work). The deadline holds iff the waste at the
end stays within the slack (deadline - work), so waste is the only other dimension, and it
is counted in steps of q = gcd(tick, restart, checkpoint, work, deadline) seconds, on which
every restart, idle tick and lost work falls exactly (15 s for 195-s ticks, 3- or 12-minute
restarts and 30-minute checkpoints): no rounding, the optimum is exact.

A start is taken as one step over the ceil(restart / tick) ticks it bills before work
resumes: leaving a placement before its restart is over is never cheaper than having
waited idle instead. On-demand is one state per region at the region's lowest on-demand
price of the tick (exact where zones of a region are priced alike, as on-demand prices
are; a lower bound otherwise).

A gang (`DeadlineJob.nodes`) is billed its N instances at every tick and its checkpoint's
egress once per move; its availability is the trace's (give the trace of the gang:
`AvailabilityTrace.from_counts`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from costsched.backtest.deadline.engine import HOUR, DeadlineJob
from costsched.backtest.deadline.trace import AvailabilityTrace

# Waste states per row beyond which `default_step` coarsens the step: time and memory grow
# with it. 1,000 keeps 52-hour deadlines on 48-hour jobs exact (961 states of 15 s) and
# takes 195-s steps for 70 hours (the bound moved by under 0.2% against exact, measured).
MAX_STATES = 1000


def optimum(trace: AvailabilityTrace, job: DeadlineJob, starts: Sequence[int] | np.ndarray,
            zones: Sequence[str] | None = None, step: int | None = None) -> np.ndarray:
    """USD of the optimal schedule per start tick (inf where even on-demand from the start
    misses the deadline), over `zones` (all of the trace's by default).

    `step`: seconds of waste per state, a divisor of the tick; None for the exact step.
    A coarser step rounds every restart and lost work down to it: a lower bound on the
    optimum (what a schedule costs is still billed exactly; only its lateness is
    underestimated, by less than a step per restart or stop), computed faster."""
    if zones is not None:
        trace = trace.subset(zones)
    starts = np.asarray(starts, dtype=np.int64)
    tick = trace.tick
    work, deadline = _seconds(job.work), _seconds(job.deadline)
    restart, checkpoint = _seconds(job.restart), _seconds(job.checkpoint)
    slack = deadline - work
    if slack < restart or len(starts) == 0:
        return np.full(len(starts), np.inf)
    exact = math.gcd(tick, restart, checkpoint, work, deadline)
    q = exact if step is None else int(step)
    if q <= 0 or tick % q:
        raise ValueError(f"step {step}: expected a divisor of the tick ({tick} s)")
    g, o = tick // q, restart // q
    n = slack // q + 1
    pad = max(g, o, checkpoint // q) + 1
    k = max(1, math.ceil(restart / tick))  # ticks billed by a start before work resumes
    ticks = math.ceil(deadline / tick)
    trace = trace.padded(int(starts.max()) + ticks + k + 1)

    # Running rows grouped by region: on-demand of the region, then its spot zones.
    region = trace.region_codes
    regions = int(region.max()) + 1
    order = np.argsort(region, kind="stable")
    price_rows, spot_rows, run_region, bounds = [], [], [], []
    for r in range(regions):
        bounds.append(len(price_rows))
        price_rows.append(trace.on_demand_price[region == r].min(axis=0))
        spot_rows.append(-1)
        run_region.append(r)
        for z in order[region[order] == r]:
            price_rows.append(trace.spot_price[z])
            spot_rows.append(z)
            run_region.append(r)
    price = np.stack(price_rows) * (tick / HOUR * job.nodes)  # USD per tick of the gang
    cum = np.concatenate([np.zeros((len(price), 1)), np.cumsum(price, axis=1)], axis=1)
    # USD per row and tick of running one tick, and of the k ticks a start bills from it.
    tick_usd = price.astype(np.float32)
    start_usd = (cum[:, k:] - cum[:, :-k]).astype(np.float32)
    spot_rows, run_region = np.array(spot_rows), np.array(run_region)
    spans = list(zip(bounds, [*bounds[1:], len(price_rows)], strict=True))
    is_spot = spot_rows >= 0
    up = np.ones((len(price), trace.ticks), dtype=bool)
    up[is_spot] = trace.available[spot_rows[is_spot]]
    startable = np.ones_like(up)
    startable[is_spot] = trace.run_after[spot_rows[is_spot]] >= k
    egress = trace.move_usd(job.checkpoint_gb)
    first = np.array([np.flatnonzero(region == r)[0] for r in range(regions)])
    switch_from = _switch(egress[np.ix_(first, first)].astype(np.float32))

    # Rows of the value arrays: [none (no checkpoint yet), none per region, running...].
    y = len(price)
    nones = slice(1, 1 + regions)
    running = slice(1 + regions, 1 + regions + y)
    s = len(starts)
    w = np.arange(n)
    done_value = np.full((1 + regions + y, s, n + pad), np.inf, dtype=np.float32)
    done_value[:, :, :n] = 0.0  # at or past the deadline's tick every feasible state is done
    future = [done_value] * (k + 1)  # future[j]: the value at tick t + 1 + j
    inf = np.float32(np.inf)
    for t in range(ticks - 1, -1, -1):
        at = starts + t
        later, after_start = future[0], future[k - 1]
        # Start a placement now: its k billed ticks, then its value with the restart added.
        started = after_start[running, :, o:o + n] + start_usd[:, at][:, :, None]
        started[~startable[:, at]] = inf
        # Per region (its rows are contiguous; slices, as np.minimum.reduceat over the
        # first axis is about 20x slower).
        best = np.stack([started[a:b].min(axis=0) for a, b in spans])
        best_any = best.min(axis=0)
        now = np.empty_like(done_value)
        now[:, :, n:] = inf
        now[0, :, :n] = np.minimum(later[0, :, g:g + n], best_any)
        switch = switch_from(best, best_any)
        now[nones, :, :n] = np.minimum(later[nones, :, g:g + n], switch)
        # A planned stop keeps all progress; a preemption keeps only the checkpointed work
        # (waste grows by progress mod checkpoint).
        stopped = w + (np.mod(t * tick - w * q, checkpoint) // q)
        leave = now[nones, :, :n][run_region]
        value = later[running, :, :n] + tick_usd[:, at][:, :, None]  # keep running
        np.minimum(value, leave, out=value)
        # Where spot is gone (only there: a gather of the rows that need it), preempted.
        row, start = np.nonzero(~up[:, at])
        value[row, start] = np.take(now[1 + run_region[row], start], stopped, axis=1)
        now[running, :, :n] = value
        finished = t * tick - work  # waste at or below this: the work was done before t
        if finished >= 0:
            now[:, :, :min(n, finished // q + 1)] = 0.0
        future = [now, *future[:k]]
    return future[0][0, :, 0].astype(float)


def default_step(tick: int, job: DeadlineJob, max_states: int = MAX_STATES) -> int:
    """The exact step where the waste grid has at most `max_states` states, else the
    finest divisor of the tick that keeps it there (a lower bound, see `optimum`)."""
    work, deadline = _seconds(job.work), _seconds(job.deadline)
    exact = math.gcd(tick, _seconds(job.restart), _seconds(job.checkpoint), work, deadline)
    slack = max(deadline - work, 0)
    if slack // exact + 1 <= max_states:
        return exact
    divisors = [d for d in range(exact, tick + 1) if tick % d == 0]
    return next((d for d in divisors if slack // d + 1 <= max_states), tick)


def _switch(egress: np.ndarray) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """Per source region: the best start anywhere with the checkpoint's egress to it, as
    a function of (best start per region, best start anywhere)."""
    regions = len(egress)
    if regions == 1:
        return lambda best, best_any: best
    off = egress[~np.eye(regions, dtype=bool)].reshape(regions, regions - 1)
    if (off == off[:, :1]).all() and (np.diag(egress) == 0).all():
        # One rate to every other region (within a cloud): the home region's best, or the
        # best anywhere plus that rate.
        rate = off[:, 0][:, None, None]
        return lambda best, best_any: np.minimum(best, best_any + rate)
    return lambda best, best_any: np.stack([np.min(best + egress[r][:, None, None], axis=0)
                                            for r in range(regions)])


def _seconds(value: float) -> int:
    rounded = round(value)
    if abs(rounded - value) > 1e-6:
        raise ValueError(f"{value} s: the optimum needs whole seconds")
    return int(rounded)

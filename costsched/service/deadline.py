"""Deadline backtests: jobs with a deadline replayed over the stored spot availability
through the deadline policies, against the hindsight optimum over the same zones."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import product

import numpy as np
import pandas as pd

from costsched.backtest.deadline import (
    AvailabilityTrace,
    DeadlineJob,
    default_step,
    optimum,
    per_window,
    simulate,
    summarize,
)
from costsched.backtest.deadline.engine import HISTORIES
from costsched.backtest.deadline.oracle import MAX_STATES
from costsched.backtest.deadline.report import BASELINE, HOME_OPTIMUM, OPTIMUM
from costsched.model import InvalidInput
from costsched.optimize import checkpoint_interval
from costsched.policies.deadline import DEADLINE_POLICIES, deadline_policy
from costsched.service.deadline_blocks import Block, booked_arm
from costsched.service.stores import StoreLike, using
from costsched.service.values import at_least, positive

DEFAULT_CHECKPOINT_MINUTES = 30.0  # the decision model's default checkpoint interval
Progress = Callable[[int, int], None]


@dataclass(frozen=True)
class DeadlineBacktestResult:
    results: pd.DataFrame  # one row per (setting, policy, home zone, start)
    summary: pd.DataFrame  # per setting and policy; see backtest.deadline.report
    trace: dict  # zones, regions, start, ticks, tick_seconds, prices, start times
    optimum_steps: dict  # seconds of waste per DP state, per deadline and restart

    @property
    def windows(self) -> pd.DataFrame:
        """Per setting, start and policy: mean cost over the home zones and the ratio to
        the optimum from the same start (`backtest.deadline.per_window`)."""
        return per_window(self.results)

    @property
    def misses(self) -> int:
        return int((~self.results["met"]).sum())


def deadline_backtest(
    store: StoreLike,
    *,
    zones: Sequence[str] | None = None,
    instance_type: str = "p3.2xlarge",
    job_hours: float = 48.0,
    deadline_hours: Sequence[float] = (52.0, 70.0),
    restart_minutes: Sequence[float] = (3.0, 12.0),
    checkpoint_minutes: float | str = DEFAULT_CHECKPOINT_MINUTES,
    preemptions_per_hour: float | None = None,
    checkpoint_gb: float = 1.0,
    starts: int = 20,
    policies: Sequence[str] = (),
    spot_price: float | None = None,
    on_demand_price: float | None = None,
    progress: Progress | None = None,
    trace: AvailabilityTrace | None = None,
    optimum_states: int = MAX_STATES,
    home_optimum: bool = False,
    windows: Sequence[datetime | str] | None = None,
    optimum_step: int | str | None = None,
    egress_usd_per_gb: Mapping[tuple[str, str], float] | None = None,
    history: str = "full",
    blocks: Sequence[Block] = (),
) -> DeadlineBacktestResult:
    """Each setting (deadline x restart) runs every policy from `starts` start times spread
    evenly over the trace, once from each zone as its home zone, and the optimum from each
    start over all the zones. `trace`: use this one instead of reading the store.

    `checkpoint_minutes="auto"`: the interval costsched would choose for the job
    (`optimize.checkpoint_interval`) at `preemptions_per_hour` (default: the rate of the
    trace itself, pooled over its zones: known only in hindsight), and every checkpoint
    then costs its write time, in the policies' runs and the optimum alike.

    `optimum_states`: waste states of the optimum before it takes a coarser step (a lower
    bound, `backtest.deadline.default_step`); `optimum_step`: "exact", or the seconds of
    waste per state (a divisor of the tick), instead. `home_optimum`: also the optimum over
    each run's home zone alone (policy HOME_OPTIMUM), the reference of single-zone policies.
    `windows`: the start times of the runs (each in the tick that holds it) instead of
    `starts` spread over the trace. `egress_usd_per_gb`: USD/GB per (from, to) region
    instead of the clouds' rates. `history`: what the policies know of the market before
    each run's start: "full", the stored trace before it, or "none", nothing (each run
    sees only its own ticks, as a job meets a market its store has not watched).
    `blocks`: capacity blocks each run may buy at its start; every policy is replayed once
    more with each (policy "<name> + <block>"), the block's price in its cost."""
    positive("job_hours", job_hours)
    at_least("checkpoint_gb", checkpoint_gb, 0.0)
    for name, price in (("spot_price", spot_price), ("on_demand_price", on_demand_price)):
        if price is not None:
            positive(name, price, "a positive USD per hour")
    if history not in HISTORIES:
        raise InvalidInput(f"history {history!r}: expected one of {', '.join(HISTORIES)}")
    at_least("starts", starts, 1, "a whole number")
    deadlines = [positive("deadline_hours", float(d)) for d in deadline_hours]
    restarts = [at_least("restart_minutes", r if isinstance(r, float) else float(r), 0.0)
                for r in restart_minutes]  # (a float as it was typed stays so, to echo it)
    if not deadlines or not restarts:
        raise InvalidInput("deadline_hours and restart_minutes: expected at least one each")
    short = [d for d in deadlines if d < job_hours]
    if short:
        raise InvalidInput(f"deadline_hours {short[0]:g}: expected at least the job's "
                           f"{job_hours:g} hours")
    names = ([deadline_policy(p).name for p in policies] if policies
             else list(DEADLINE_POLICIES))
    if BASELINE not in names:
        names.insert(0, BASELINE)
    if trace is None:
        with using(store) as opened:
            trace = AvailabilityTrace.from_store(opened, zones=zones,
                                                 instance_type=instance_type,
                                                 spot_price=spot_price,
                                                 on_demand_price=on_demand_price)
    elif zones:
        trace = trace.subset(zones)
    if egress_usd_per_gb:
        trace = trace.with_egress(egress_usd_per_gb)
    minutes, write, basis = _checkpoints(checkpoint_minutes, checkpoint_gb, trace,
                                         preemptions_per_hour)
    span = max(math.ceil(d * 3600 / trace.tick) for d in deadlines)
    if trace.ticks < span:
        raise InvalidInput(f"deadline_hours {max(deadlines):g}: longer than the availability "
                           f"trace ({trace.ticks * trace.tick / 3600:.1f} h)")
    # Where zones' recordings cover different periods, runs start only where all cover
    # their deadline (the rest is unknown, not "no spot"); `info["coverage"]` says so.
    allowed = trace.start_ticks(span)
    if len(allowed) == 0:
        raise InvalidInput(f"deadline_hours {max(deadlines):g}: no period of that length is "
                           f"covered by every zone's recording ({trace.coverage()})")
    if windows:
        first = _window_ticks(trace, windows, allowed, max(deadlines))
    else:
        first = np.unique(allowed[np.linspace(0, len(allowed) - 1, int(starts)).round()
                                  .astype(np.int64)])
    zone_n = len(trace.zones)
    run_starts = np.repeat(first, zone_n)
    homes = np.tile(np.arange(zone_n), len(first))

    settings = list(product(deadlines, restarts))
    total, done = len(settings) * (len(names) + 1 + home_optimum), 0
    by_setting: dict[tuple[float, float], list[pd.DataFrame]] = {s: [] for s in settings}
    steps = {}
    n = len(run_starts)
    # Each policy replays every setting at once (one run per setting, start and home).
    job = DeadlineJob(job_hours, max(deadlines), max(restarts), minutes, checkpoint_gb, write)
    due = np.repeat([d for d, _ in settings], n)
    restart_of = np.repeat([r for _, r in settings], n)
    arms = [(name, trace, None) for name in names] + [
        (f"{name} + {b.label}", *booked_arm(trace, b, instance_type))
        for b in blocks for name in names if name != BASELINE]
    total += len(arms) - len(names)
    for label, replayed, booked in arms:
        name = label.split(" + ")[0]
        runs = simulate(replayed, deadline_policy(name), job,
                        np.tile(run_starts, len(settings)), np.tile(homes, len(settings)),
                        due, restart_of, history=history, booked=booked)
        for i, (deadline, restart) in enumerate(settings):
            part = runs.iloc[i * n:(i + 1) * n].reset_index(drop=True)
            by_setting[(deadline, restart)].append(_label(part, deadline, restart, label))
            done += 1
        if progress:
            progress(done, total)
    for restart in restarts:
        for deadline in deadlines:
            job = DeadlineJob(job_hours, deadline, restart, minutes, checkpoint_gb, write)
            frames = by_setting[(deadline, restart)]
            step = _step(optimum_step, trace.tick, job, optimum_states)
            steps[f"{deadline:g} h, {restart:g} min"] = exact_step(trace.tick, job) \
                if step is None else step
            best = np.repeat(optimum(trace, job, first, step=step), zone_n)
            frames.append(_label(_optimum_runs(run_starts, homes, best), deadline, restart,
                                 OPTIMUM))
            done += 1
            if progress:
                progress(done, total)
            if home_optimum:
                alone = np.stack([optimum(trace, job, first, zones=[z], step=step)
                                  for z in trace.zones], axis=1).ravel()  # start-major
                frames.append(_label(_optimum_runs(run_starts, homes, alone), deadline,
                                     restart, HOME_OPTIMUM))
                done += 1
                if progress:
                    progress(done, total)
    frames = [frame for setting in settings for frame in by_setting[setting]]
    steps = {f"{d:g} h, {r:g} min": steps[f"{d:g} h, {r:g} min"] for d, r in settings}
    results = pd.concat(frames, ignore_index=True)
    results["home"] = np.array(trace.zones, dtype=object)[results["home"].to_numpy()]
    results["start"] = trace.start + pd.to_timedelta(results["start_tick"] * trace.tick,
                                                     unit="s")
    info = {"zones": list(trace.zones), "regions": list(trace.regions),
            "start": trace.start, "ticks": trace.ticks, "tick_seconds": trace.tick,
            "prices": trace.price_source, "starts": len(first),
            "spot_usd_per_hour": float(np.mean(trace.spot_price)),
            "on_demand_usd_per_hour": float(np.mean(trace.on_demand_price)),
            "coverage": trace.coverage(), "checkpoint_minutes": minutes,
            "checkpoint_write_seconds": write, "checkpoint_basis": basis,
            "checkpoint_gb": checkpoint_gb, "egress_usd_per_gb": trace.egress_rates(),
            "egress_basis": "given" if egress_usd_per_gb else "the clouds' rates",
            "windows": bool(windows), "history": history,
            "blocks": [b.as_dict() for b in blocks]}
    return DeadlineBacktestResult(results, summarize(results), info, steps)


def _window_ticks(trace: AvailabilityTrace, windows: Sequence[datetime | str],
                  allowed: np.ndarray, deadline: float) -> np.ndarray:
    """The tick holding each window's start, in the order given (each once)."""
    ticks = []
    for value in windows:
        try:
            at = pd.Timestamp(value)
        except (TypeError, ValueError):
            raise InvalidInput(f"windows {value!r}: expected a start time such as "
                               "2023-02-23T10:00:00Z") from None
        at = at.tz_localize("UTC") if at.tzinfo is None else at.tz_convert("UTC")
        tick = int((at - trace.start).total_seconds() // trace.tick)
        if tick not in set(allowed.tolist()):
            last = trace.start + pd.Timedelta(seconds=int(allowed.max()) * trace.tick) \
                if len(allowed) else trace.start
            raise InvalidInput(f"windows {value}: expected a start from "
                               f"{trace.start:%Y-%m-%d %H:%M:%S} to {last:%Y-%m-%d %H:%M:%S} "
                               f"UTC, where the trace holds {deadline:g} hours of every zone")
        if tick not in ticks:
            ticks.append(tick)
    return np.array(ticks, dtype=np.int64)


def exact_step(tick: int, job: DeadlineJob) -> int:
    """Seconds of the optimum's exact waste step (`backtest.deadline.optimum`)."""
    return math.gcd(tick, *(round(v) for v in (job.restart, job.checkpoint, job.work,
                                               job.deadline)))


def _step(value: int | str | None, tick: int, job: DeadlineJob, states: int) -> int | None:
    """The optimum's step: None for exact, else seconds of waste per state."""
    if value is None:
        return default_step(tick, job, states)
    if isinstance(value, str) and value.strip().lower() == "exact":
        return None
    try:
        seconds = int(value)
    except (TypeError, ValueError):
        seconds = 0
    exact = exact_step(tick, job)
    if seconds <= 0 or tick % seconds or seconds % exact:
        divisors = [d for d in range(exact, tick + 1, exact) if tick % d == 0]
        raise InvalidInput(f"optimum_step {value!r}: expected exact or seconds dividing the "
                           f"{tick}-s tick that the exact {exact}-s step divides: "
                           f"{', '.join(map(str, divisors))}")
    return None if seconds == exact else seconds


def _optimum_runs(starts: np.ndarray, homes: np.ndarray, cost: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({
        "start_tick": starts, "home": homes, "cost_usd": cost, "finish_hours": np.nan,
        "met": np.isfinite(cost), "preemptions": 0, "restarts": 0, "region_moves": 0,
        "egress_usd": np.nan, "spot_hours": np.nan, "on_demand_hours": np.nan})


def _label(runs: pd.DataFrame, deadline: float, restart: float, policy: str) -> pd.DataFrame:
    return runs.assign(deadline_hours=deadline, restart_minutes=restart, policy=policy)


def trace_preemptions_per_hour(trace: AvailabilityTrace) -> float:
    """Spot spells that ended per hour of spot available, pooled over the trace's zones."""
    available = trace.available
    ended = int((available[:, :-1] & ~available[:, 1:]).sum())
    hours = float(available.sum()) * trace.tick / 3600
    return ended / hours if hours > 0 else 0.0


def _checkpoints(minutes: float | str, size_gb: float, trace: AvailabilityTrace,
                 rate: float | None) -> tuple[float, float, str]:
    """(interval minutes, write seconds, how the interval was chosen)."""
    try:
        parsed = checkpoint_interval.parse(minutes)
    except ValueError as exc:
        raise InvalidInput(f"checkpoint_minutes {exc}") from None
    if parsed != checkpoint_interval.AUTO:
        return float(parsed), 0.0, "given"
    source = "given rate"
    if rate is None:
        rate, source = trace_preemptions_per_hour(trace), "the trace's own rate (hindsight)"
    chosen = checkpoint_interval.interval_minutes(size_gb, rate)
    write = float(round(checkpoint_interval.write_seconds(size_gb)))
    return chosen, write, (f"auto: {chosen:g} min for {rate:.3f} preemptions/h ({source}) "
                           f"and {write:g} s writes")

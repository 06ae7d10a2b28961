"""Replay a price trace for jobs x start times x policies; one result row per run.

Prices come from one `PriceTrace` (the store read once); every decision and every charge is
an as-of lookup in its arrays. Runs are charged by `backtest.accounting.Run`, the same
rules the oracle optimizes, so costs are comparable across policies.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone
from functools import cache

import numpy as np
import pandas as pd

from costsched.backtest.accounting import Run
from costsched.backtest.jobs import BacktestJob
from costsched.backtest.oracle import Oracle
from costsched.backtest.trace import HOUR, PriceTrace
from costsched.decide.price import carried_out, choose
from costsched.model import InvalidInput
from costsched.optimize.decision import Overheads
from costsched.optimize.forecast import typical_prices
from costsched.policies import POLICIES, Policy, make_policy, policy_name
from costsched.policies import market as market_view
from costsched.policies.base import JobState
from costsched.policies.cheapest_hourly import AskedFor
from costsched.policies.history import with_typical
from costsched.store import to_epoch_seconds
from costsched.throughput import ThroughputTable

MAX_PERIODS = 10_000
RESULT_COLUMNS = ["job", "jobs", "model", "region", "start", "policy", "cost_usd", "hours",
                  "migrations", "preemptions", "migration_usd", "first_offering",
                  "last_offering", "hours_after_trace", "error", "first_gpu",
                  "expected_hours", "expected_usd"]


# The online policies and, for replays only, the hindsight oracle.
REPLAY_POLICIES: dict[str, type[Policy] | type[Oracle]] = {**POLICIES, Oracle.name: Oracle}


def replay_policy_name(name: str) -> str:
    """The registered name of a policy a backtest can replay (the online ones and oracle)."""
    key = name.strip().lower()
    return key if key == Oracle.name else policy_name(name)


def make_replay_policy(name: str, margin: float,
                       period_hours: float = 24.0) -> Policy | Oracle:
    key = replay_policy_name(name)
    if key == Oracle.name:
        return Oracle()
    return make_policy(key, margin=margin, period_hours=period_hours)


@dataclass(frozen=True)
class BacktestConfig:
    period_hours: float = 24.0
    overheads: Overheads = field(default_factory=Overheads)
    margin: float = 0.05  # dynamic-aware's hysteresis
    checkpoint_gb: float = 1.0  # the checkpoint size of jobs that do not state one


def check_regions(homes: set[str], known: set[str]) -> None:
    """InvalidInput naming the first home region with no price among the `known`."""
    unknown = sorted(homes - known)
    if unknown:
        raise InvalidInput(f"region {unknown[0]!r}: no prices stored for it; known: "
                           f"{', '.join(sorted(known))}")


def regular_starts(first: datetime, count: int, every_hours: float = 24.0) -> list[datetime]:
    if count < 1:
        raise InvalidInput(f"starts {count}: expected at least 1 start time")
    return [first + timedelta(hours=every_hours * i) for i in range(count)]


def throughputs(trace: PriceTrace, table: ThroughputTable, model: str) -> np.ndarray:
    """Steps/s of `model` on each offering of the trace; NaN where the table has no value."""
    return market_view.throughputs(trace.offerings, table, model)


def offering_labels(offerings: pd.DataFrame) -> list[str]:
    """'aws:us-east-1a:p3.2xlarge (1xV100)' per offering row."""
    return [f"{o.cloud}:{o.zone or o.region}:{o.instance_type} ({o.gpu_count}x{o.gpu_model})"
            for o in offerings.itertuples()]


def past_prices(trace: PriceTrace) -> Callable[[int, float], np.ndarray]:
    """(t, hours) -> each offering's typical price over the hours before t, read from the
    trace up to t only (cached: runs share their decision times)."""
    @cache
    def typical(t: int, hours: float) -> np.ndarray:
        return typical_prices(trace.times, trace.prices, t, hours)
    return typical


Step = Callable[[int, int, float, int], None]


def simulate(policy: Policy | Oracle, run: Run, state: JobState,
             labels: list[str] | None = None,
             typical: Callable[[int, float], np.ndarray] | None = None,
             on_step: Step | None = None, margin: float = BacktestConfig.margin) -> dict:
    """One job from one start under one policy: cost, hours, migrations. Each period is
    decided by a running job's decider (`costsched.decide.price.choose`, `margin` its
    hysteresis); a baseline policy that does not weigh its moves is replayed as
    published. `on_step(t, row before, steps left, row chosen)` is told each period's
    decision as it is made (rows of the trace's offerings; -1 before the first
    placement). A job placed already (`state.current`) runs the rest of its steps
    (`run.steps`) from there, the first move away charged."""
    trace = run.trace
    labels = labels or offering_labels(trace.offerings)
    plan = policy.plan(run, state) if isinstance(policy, Oracle) else None
    prev = -1 if state.current is None else trace.rows.get(tuple(state.current), -2)
    if prev == -2:
        raise InvalidInput(f"{state.job.name}: offering {state.current!r} is not in the trace")
    done, usd, migration_usd, migrations = 0.0, 0.0, 0.0, 0
    first = -1
    for k in range(MAX_PERIODS):
        if plan is not None:
            new = plan[k]
        else:
            view = trace.view(run.period_start(k), run.steps_per_second)
            if policy.history_hours:
                typical = typical or past_prices(trace)
                view = with_typical(view, typical(view.t, policy.history_hours))
            current = None if prev < 0 else trace.keys[prev]
            step_state = JobState(state.job, state.region, run.steps - done, current,
                                  run.overheads)
            # The running job's own decider. A policy that weighs its moves is carried out
            # as a running job's is; a baseline that does not is replayed as published
            # (live, `pays` judges its moves too).
            when = datetime.fromtimestamp(view.t, timezone.utc)
            decided = choose(view, step_state, policy, margin, when, lean=True,
                             judge=policy.weighs_moves)
            new = trace.rows[carried_out(decided)]
        left = run.steps - done  # summed as the oracle does, so plans replay exactly
        if on_step is not None:
            on_step(run.period_start(k), prev, left, new)
        out = run.advance_one(k, prev, new, left)
        usd += out.usd
        migration_usd += out.migration_usd
        migrations += out.migrated
        first = new if first < 0 else first
        done += out.steps
        prev = new
        if out.finished:
            end = out.end
            return {
                "cost_usd": usd, "hours": (end - run.start) / HOUR, "migrations": migrations,
                "migration_usd": migration_usd,
                "first_offering": labels[first], "last_offering": labels[prev],
                "hours_after_trace": max(0.0, end - max(trace.end, run.start)) / HOUR,
                "error": None, **_expected(run, first),
            }
    raise InvalidInput(f"{state.job.name}: not finished after {MAX_PERIODS} periods")


def _expected(run: Run, first: int) -> dict:
    """What a plan at the start predicts on the first offering chosen: the work at its
    speed, at its price then (the figures `calibration` sets beside the replay's)."""
    o = run.trace.offerings.iloc[first]
    hours = run.steps / float(run.steps_per_second[first]) / HOUR
    return {"first_gpu": f"{o['gpu_count']}x{o['gpu_model']}", "expected_hours": hours,
            "expected_usd": hours * float(run.trace.price_at(run.start, np.array([first]))[0])}


# How each baseline keeps what it rents, after the terms of its scope.
_KEEPS = {"static": "the lowest expected cost at the start, kept",
          "cheapest-hourly": "the lowest $/h, kept until it is gone"}


def baseline_terms(jobs: Sequence[BacktestJob],
                   baselines: Sequence[str]) -> dict[str, list[str]]:
    """Per baseline, what it rents for the jobs in their own terms ('1xT4 spot in us-east-1
    of aws, the lowest expected cost at the start, kept'), each distinct wording once."""
    out: dict[str, list[str]] = {}
    for name in baselines:
        scope = POLICIES[name].scope
        said = [f"{scope.terms(bj.region, bj.asked.constraints)}, {_KEEPS.get(name, '')}"
                .rstrip(", ") for bj in jobs]
        out[name] = list(dict.fromkeys(said))
    return out


def identical_groups(jobs: Sequence[BacktestJob],
                     table: ThroughputTable) -> list[tuple[BacktestJob, int]]:
    """The first of each set of jobs whose replays are identical, and the set's size."""
    groups: dict[tuple, list] = {}
    for bj in jobs:
        job = bj.job
        key = (job.model, job.steps, job.constraints, job.checkpoint_gb, job.checkpoint_hours,
               bj.region, id(bj.table or table), bj.starts, bj.measured)
        groups.setdefault(key, [bj, 0])[1] += 1
    return [(bj, count) for bj, count in groups.values()]


def run_backtest(
    trace: PriceTrace,
    jobs: Sequence[BacktestJob],
    starts: Sequence[datetime] | None,
    policies: Sequence[str | Policy | Oracle],
    config: BacktestConfig | None = None,
    table: ThroughputTable | None = None,
    progress: Callable[[int], None] | None = None,
) -> pd.DataFrame:
    """Every job from every start under every policy: a row each (see RESULT_COLUMNS).

    Jobs whose replays are identical (same model, steps, constraints, checkpoint, home
    region, throughputs and starts: e.g. a sweep's) are replayed once: their rows name the
    first such job and count them in `jobs` (1 otherwise); summaries weight by it.
    `preemptions` is 0: recorded traces hold prices, not evictions.
    A run no policy in scope can serve (e.g. no V100 in the region) gets NaN cost and the
    reason in `error`. A job with its own `starts` runs from those instead of `starts`.
    Throughputs: a job's own table, else `table`, else the user's (`ThroughputTable.load`).
    A job's checkpoint interval and size (else `config.checkpoint_gb`) price its moves.
    `progress(n)` is called after each (job, start) with n runs done (n counts the
    identical jobs a replay stands for).
    """
    config = config or BacktestConfig()
    table = table or ThroughputTable.load()
    chosen = [make_replay_policy(p, config.margin, config.period_hours)
              if isinstance(p, str) else p for p in policies]
    period_s = int(round(config.period_hours * HOUR))
    check_regions({bj.region for bj in jobs}, set(trace.offerings["region"]))
    rates: dict[tuple[int, str], np.ndarray] = {}  # by (throughput table, model)
    rows = []
    labels = offering_labels(trace.offerings)
    typical = past_prices(trace)
    for bj, count in identical_groups(jobs, table):
        job_starts = list(bj.starts or starts or [])
        if not job_starts:
            raise InvalidInput(f"{bj.name}: no start times")
        job = bj.job
        job_table = bj.table or table
        rate_key = (id(job_table), job.model)
        if rate_key not in rates:
            rates[rate_key] = throughputs(trace, job_table, job.model)
        asked = bj.asked
        if not job.checkpoint_gb > 0:
            job = replace(job, checkpoint_gb=config.checkpoint_gb)
            asked = replace(asked, checkpoint_gb=config.checkpoint_gb)
        for start, ts in zip(job_starts, to_epoch_seconds(job_starts), strict=True):
            run = Run(trace, rates[rate_key], job.steps, int(ts), period_s, config.overheads,
                      job.checkpoint_gb, job.checkpoint_hours)
            state = JobState(job, bj.region, job.steps, None, config.overheads)
            # A baseline rents what the job asked for (`BacktestJob.asked`).
            baseline_state = replace(state, job=asked)
            for policy in chosen:
                row = {"job": job.name, "jobs": count, "model": job.model,
                       "region": bj.region, "start": pd.Timestamp(start),
                       "policy": policy.name, "preemptions": 0}
                try:
                    row |= simulate(policy, run,
                                    baseline_state if isinstance(policy.scope, AskedFor)
                                    else state, labels, typical, margin=config.margin)
                except InvalidInput as exc:
                    row |= {"cost_usd": np.nan, "hours": np.nan, "migrations": 0,
                            "migration_usd": np.nan, "first_offering": None,
                            "last_offering": None, "hours_after_trace": np.nan,
                            "error": str(exc)}
                rows.append(row)
            if progress is not None:
                progress(len(chosen) * count)
    frame = pd.DataFrame(rows, columns=RESULT_COLUMNS)
    frame["start"] = pd.to_datetime(frame["start"], utc=True)
    return frame

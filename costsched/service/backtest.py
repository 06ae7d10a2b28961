"""Backtests: replay the stored price history for jobs x start times through the policies."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from costsched.service.stores import StoreLike, using
from costsched.service.values import as_time, at_least, positive
from costsched.throughput import ThroughputTable

if TYPE_CHECKING:
    from costsched.backtest import BacktestJob, PriceTrace
    from costsched.optimize.decision import Overheads

BASELINE_POLICY = "static"  # every comparison is against it
# The operating systems whose prices a replay reads (AWS spot histories name both).
REPLAY_OS = ("linux", "linux-vpc")
# Without a first start, the window ends this many job lengths (V100-days) before the
# trace's last observation: runs on cheaper, slower GPUs take up to ~3.3x as long.
FIT_LENGTHS = 3.5


@dataclass(frozen=True)
class BacktestResult:
    results: pd.DataFrame  # one row per (job, start, policy); see backtest.RESULT_COLUMNS
    summary: pd.DataFrame  # per (model, region, policy): the reduction against static
    window: dict  # first_start, last_start, starts, every_hours, trace_end, period_hours
    overheads: Overheads
    margin: float

    @property
    def trace_end(self) -> datetime:
        return self.window["trace_end"]

    @property
    def errors(self) -> pd.DataFrame:
        """The runs that had no usable offering, with the reason in `error`."""
        return self.results[self.results["error"].notna()]

    @property
    def runs_after_trace(self) -> int:
        """Runs that went on past the trace's end (prices held at their last value)."""
        return int((self.results["hours_after_trace"].fillna(0) > 0).sum())


def backtest(
    store: StoreLike,
    *,
    models: Sequence[str] = (),
    job_files: Sequence[str | Path] = (),
    days: float = 4.0,
    regions: Sequence[str] = ("us-east-1",),
    starts: int = 30,
    first_start: datetime | str | None = None,
    every_hours: float = 24.0,
    period_hours: float = 24.0,
    policies: Sequence[str] = (),
    margin: float = 0.05,
    overheads: Overheads | None = None,
    checkpoint_gb: float = 1.0,
    progress: Callable[[int, int], None] | None = None,
    table: ThroughputTable | None = None,
) -> BacktestResult:
    """Replay stored prices: the cost, hours and migrations of each policy from `starts`
    start times `every_hours` apart, relative to `static` (always replayed).

    Jobs: the specs in `job_files` (home regions from their constraints, else `regions`),
    else one per model of `models` (default the six of the published trace analysis) and
    region, `days` long on one V100. `first_start` defaults to the latest whole day that
    leaves the last start 3.5 job lengths before the end of the trace. `period_hours`:
    hours between decisions; `margin`: dynamic-aware's hysteresis; `overheads`: the cost
    of a move (default `Overheads()`); `checkpoint_gb`: the checkpoint size of jobs whose
    spec gives none. `progress(done, total)` follows the runs.
    """
    from costsched.backtest import (
        PUBLISHED_MODELS,
        REPLAY_POLICIES,
        BacktestConfig,
        PriceTrace,
        jobs_for_models,
        read_jobs,
        regular_starts,
        relative_costs,
        replay_policy_name,
        run_backtest,
    )
    from costsched.optimize.decision import Overheads

    names = [replay_policy_name(p) for p in policies] or list(REPLAY_POLICIES)
    if BASELINE_POLICY not in names:
        names.insert(0, BASELINE_POLICY)
    at_least("margin", margin, 0)
    at_least("checkpoint_gb", checkpoint_gb, 0)
    positive("period_hours", period_hours)
    positive("every_hours", every_hours)
    regions = list(regions)
    overheads = overheads if overheads is not None else Overheads()
    first = as_time(first_start, "first_start") if first_start is not None else None
    table = table if table is not None else ThroughputTable.load()  # with the user's measurements
    if job_files:
        # Specs resolve against a time only for absolute deadlines, which replays ignore.
        jobs = read_jobs([Path(p) for p in job_files], regions, table, first or as_time(None))
    else:
        positive("days", days, "a positive number of V100-days")
        jobs = jobs_for_models(list(models) or list(PUBLISHED_MODELS), days, regions, table)
    with using(store) as opened:
        trace = PriceTrace.from_store(opened, os=list(REPLAY_OS))
    if first is None:
        first = default_first_start(trace, starts, every_hours, _longest(jobs))
    times = regular_starts(first, starts, every_hours)
    config = BacktestConfig(period_hours=period_hours, overheads=overheads, margin=margin,
                            checkpoint_gb=checkpoint_gb)
    total = len(jobs) * len(times) * len(names)
    done = 0

    def advanced(n: int) -> None:
        nonlocal done
        done += n
        if progress:
            progress(done, total)

    results = run_backtest(trace, jobs, times, names, config, table, progress=advanced)
    window = {"first_start": times[0], "last_start": times[-1], "starts": len(times),
              "every_hours": every_hours, "trace_end": _utc(trace.end),
              "period_hours": period_hours}
    return BacktestResult(results, relative_costs(results), window, overheads, margin)


def default_first_start(trace: PriceTrace, starts: int, every_hours: float,
                        days: float) -> datetime:
    """The latest midnight (UTC) from which `starts` starts `every_hours` apart end
    FIT_LENGTHS x `days` before the trace's end; the trace's first whole day if none."""
    at_least("starts", starts, 1, "a whole number")
    end = _utc(trace.end)
    last = end - timedelta(days=FIT_LENGTHS * days)
    first = last - timedelta(hours=every_hours * (starts - 1))
    first = first.replace(hour=0, minute=0, second=0, microsecond=0)
    begin = _utc(trace.start)
    if first < begin:
        first = (begin + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return first


def _longest(jobs: Sequence[BacktestJob]) -> float:
    return max(j.v100_days for j in jobs)


def _utc(epoch_seconds: int) -> datetime:
    return datetime.fromtimestamp(epoch_seconds, timezone.utc)

"""The collection backtest: a sweep with deadlines replayed through the collection planner
re-run every period, against placing each job alone and against `cheapest-hourly`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

import pandas as pd

from costsched.backtest import PUBLISHED_MODELS, PriceTrace
from costsched.backtest.collection import (
    APPROACHES,
    CollectionConfig,
    run_collection_backtest,
    summarize,
)
from costsched.jobspec import ResolvedJob, resolve
from costsched.model import Constraints, InvalidInput, Job
from costsched.optimize.decision import DEFAULT_CHECKPOINT_HOURS, Overheads
from costsched.service.backtest import REPLAY_OS
from costsched.service.replay_window import more_prices, replay_starts
from costsched.service.stores import StoreLike, using
from costsched.service.values import as_time, at_least, choices, positive
from costsched.store import to_epoch_seconds
from costsched.taskfile import load
from costsched.throughput import ThroughputTable

# Jobs from model names get a deadline of this many times their length on one V100.
DEADLINE_FACTOR = 2.0


@dataclass(frozen=True)
class CollectionBacktestResult:
    runs: pd.DataFrame  # per (approach, start); see backtest.collection.RUN_COLUMNS
    instances: pd.DataFrame  # per instance rented in a period, with its jobs
    summary: pd.DataFrame  # per approach: total cost, saving against cheapest-hourly, ...
    jobs: list[str]
    window: dict  # first_start, last_start, starts, every_hours, replan_hours, trace_end
    config: CollectionConfig

    @property
    def errors(self) -> pd.DataFrame:
        return self.runs[self.runs["error"].notna()]


def collection_backtest(
    store: StoreLike,
    *,
    job_files: Sequence[str | Path] = (),
    models: Sequence[str] = (),
    n_jobs: int = 8,
    days: float = 1.0,
    regions: Sequence[str] = (),
    deadline_hours: float | None = None,
    starts: int = 30,
    first_start: datetime | str | None = None,
    every_hours: float = 24.0,
    replan_hours: float = 24.0,
    share_instances: bool = True,
    quota: int | None = None,
    overheads: Overheads | None = None,
    checkpoint_gb: float = 1.0,
    approaches: Sequence[str] = APPROACHES,
    progress: Callable[[int, int], None] | None = None,
    table: ThroughputTable | None = None,
) -> CollectionBacktestResult:
    """Replay a sweep from `starts` start times `every_hours` apart: the collection planner
    re-run every `replan_hours` (on shared instances with `share_instances`), each job
    alone (kept, and re-planned), and `cheapest-hourly`.

    Jobs: the specs in `job_files` (a sweep expands), else `n_jobs` jobs cycling through
    `models` (default the six of the published trace analysis), each `days` long on one
    V100, on spot instances in `regions` (default any), with a deadline of twice that.
    `deadline_hours` overrides every job's deadline. `quota`: instances at most per type
    and region for the collection planner. `progress(done, total)` follows the runs.
    """
    choices("approaches", approaches, APPROACHES)
    positive("replan_hours", replan_hours)
    positive("every_hours", every_hours)
    at_least("starts", starts, 1, "a whole number")
    at_least("checkpoint_gb", checkpoint_gb, 0)
    if deadline_hours is not None:
        positive("deadline_hours", deadline_hours)
    if quota is not None:
        at_least("quota", quota, 1, "a whole number")
    overheads = overheads if overheads is not None else Overheads()
    table = table if table is not None else ThroughputTable.load()
    first = as_time(first_start, "first_start") if first_start is not None else None
    if job_files:
        jobs = _from_files(job_files, table, first or as_time(None))
    else:
        at_least("n_jobs", n_jobs, 1, "a whole number")
        positive("days", days, "a positive number of V100-days")
        jobs = jobs_for_models(list(models) or list(PUBLISHED_MODELS), n_jobs, days, regions,
                               table, overheads, checkpoint_gb)
    if deadline_hours is not None:
        jobs = [_with_deadline(j, deadline_hours) for j in jobs]
    with using(store) as opened:
        if opened.span(os=list(REPLAY_OS)) is None:
            raise InvalidInput(f"the store holds no prices to replay: {more_prices()}")
        trace = PriceTrace.from_store(opened, os=list(REPLAY_OS))
    times = replay_starts(trace, first, starts, every_hours, _longest(jobs))
    config = CollectionConfig(replan_hours=replan_hours, share_instances=share_instances,
                              overheads=overheads, quota=quota, checkpoint_gb=checkpoint_gb)
    total, done = len(times) * len(approaches), 0

    def advanced(n: int) -> None:
        nonlocal done
        done += n
        if progress:
            progress(done, total)

    runs, instances = run_collection_backtest(trace, jobs, list(to_epoch_seconds(times)), config,
                                              approaches, advanced)
    window = {"first_start": times[0], "last_start": times[-1], "starts": len(times),
              "every_hours": every_hours, "replan_hours": replan_hours,
              "trace_end": pd.Timestamp(trace.end, unit="s", tz="UTC").to_pydatetime()}
    baseline = "cheapest-hourly" if "cheapest-hourly" in approaches else approaches[0]
    return CollectionBacktestResult(runs, instances, summarize(runs, baseline),
                                    [j.name for j in jobs], window, config)


def jobs_for_models(models: Sequence[str], n_jobs: int, days: float, regions: Sequence[str],
                    table: ThroughputTable, overheads: Overheads,
                    checkpoint_gb: float) -> list[ResolvedJob]:
    """`n_jobs` spot jobs cycling through `models`, each `days` long on one V100."""
    out = []
    for i in range(n_jobs):
        model = table.canonical(models[i % len(models)])
        steps = days * 86_400 * table.get(model, "V100", 1).steps_per_second
        constraints = Constraints(deadline_hours=DEADLINE_FACTOR * days * 24,
                                  regions=tuple(regions), markets=("spot",))
        name = f"{model} #{i // len(models) + 1}"
        job = Job(name, "", model, steps, checkpoint_gb=checkpoint_gb, constraints=constraints,
                  checkpoint_hours=DEFAULT_CHECKPOINT_HOURS)
        out.append(ResolvedJob(job, table, DEFAULT_CHECKPOINT_HOURS,
                               overheads.restart_hours(checkpoint_gb), {}, "models"))
    return out


def _from_files(paths: Sequence[str | Path], table: ThroughputTable,
                at: datetime) -> list[ResolvedJob]:
    jobs = [resolve(spec, table, at, source=str(path)) for path in paths
            for spec in load(path)]
    if not jobs:
        raise InvalidInput("job_files: expected at least one job spec")
    return jobs


def _with_deadline(job: ResolvedJob, hours: float) -> ResolvedJob:
    c = replace(job.job.constraints, deadline_hours=hours)
    return replace(job, job=replace(job.job, constraints=c))


def _longest(jobs: Sequence[ResolvedJob]) -> float:
    """The longest job in days on one V100, at least one."""
    out = 1.0
    for j in jobs:
        try:
            v100 = j.table.get(j.job.model, "V100", 1).steps_per_second
        except InvalidInput:
            continue
        out = max(out, j.job.steps / v100 / 86_400)
    return out

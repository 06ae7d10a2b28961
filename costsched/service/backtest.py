"""Backtests: replay the stored price history for jobs x start times through the policies."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from costsched import clouds
from costsched.model import InvalidInput
from costsched.service.replay_window import (  # noqa: F401 (default_first_start: theirs)
    FIT_LENGTHS,
    Span,
    default_first_start,
    more_prices,
    replay_starts,
)
from costsched.service.stores import StoreLike, using
from costsched.service.values import as_time, at_least, positive
from costsched.throughput import ThroughputTable

if TYPE_CHECKING:
    from costsched.backtest import BacktestJob
    from costsched.optimize.decision import Overheads

BASELINE_POLICY = "static"  # the first of the baselines every comparison is against
# `costsched backtest --json`: bump the version when a key changes meaning or goes away.
JSON_SCHEMA_VERSION = 1
JSON_SCHEMA = """The backtest's JSON (`costsched backtest --json`, `json_payload`), version 1.

Top level:
  schema_version   1; changes only when a key below changes meaning or goes away
  window           first_start, last_start (ISO 8601 UTC), starts, every_hours,
                   period_hours (hours between decisions), trace_end (the last price)
  migration_costs  what a move costs: restart/warm-up/lost-work/overlap minutes,
                   transfer_gbps, egress (bool), checkpoint_gb, egress_usd_per_gb per cloud
  margin           dynamic-aware's hysteresis
  share_instances  whether one GPU of a multi-GPU instance could be taken alone
  baselines        ["static", "cheapest-hourly"]: what each policy is compared with
  summary          one object per (model, region, policy), keys SUMMARY_KEYS
  runs             one object per (job, start, policy), keys RUN_KEYS

summary: model, region, policy; cost_usd (summed over its replayed runs), runs (its
  replayed runs, jobs x starts counted), failed (its runs without a usable offering),
  hours and migrations (mean per replayed run); reduction and saving_pct (static's summed
  cost over the policy's, and the percentage saved, over the runs both replayed; null
  where none did), reduction_vs_cheapest_hourly and saving_pct_vs_cheapest_hourly (the
  same against cheapest-hourly).
runs: job (the first of `jobs` identical jobs replayed once), jobs, model, region, start,
  policy, cost_usd, hours, migrations, preemptions (0: recorded prices hold no
  evictions), migration_usd, first_offering, last_offering, hours_after_trace (hours run
  on the last prices after the trace ends), error (why no offering could serve the run,
  else null), reduction and reduction_vs_cheapest_hourly (the baselines' cost of the same
  job and start over this run's). A run without a usable offering has null costs.
"""
TOP_KEYS = ("schema_version", "window", "migration_costs", "margin", "share_instances",
            "baselines", "summary", "runs")
SUMMARY_KEYS = ("model", "region", "policy", "reduction", "saving_pct", "runs", "migrations",
                "reduction_vs_cheapest_hourly", "saving_pct_vs_cheapest_hourly", "cost_usd",
                "failed", "hours")
RUN_KEYS = ("job", "jobs", "model", "region", "start", "policy", "cost_usd", "hours",
            "migrations", "preemptions", "migration_usd", "first_offering", "last_offering",
            "hours_after_trace", "error", "reduction", "reduction_vs_cheapest_hourly")
# The operating systems whose prices a replay reads (AWS spot histories name both).
REPLAY_OS = ("linux", "linux-vpc")


@dataclass(frozen=True)
class BacktestResult:
    results: pd.DataFrame  # one row per (job, start, policy); see backtest.RESULT_COLUMNS
    summary: pd.DataFrame  # per (model, region, policy): reductions against the baselines
    window: dict  # first_start, last_start, starts, every_hours, trace_end, period_hours
    overheads: Overheads
    margin: float
    checkpoint_gb: float = 1.0  # of jobs whose spec gives none
    share_instances: bool = False
    # Per baseline, what it rents for the jobs in their terms (`baseline_terms`).
    baselines: dict[str, list[str]] = field(default_factory=dict)

    @property
    def trace_end(self) -> datetime:
        return self.window["trace_end"]

    @property
    def errors(self) -> pd.DataFrame:
        """The runs that had no usable offering, with the reason in `error`."""
        return self.results[self.results["error"].notna()]

    @property
    def runs(self) -> int:
        """Runs, each identical job counted (a sweep's jobs are replayed once)."""
        return int(self.results["jobs"].sum())

    @property
    def runs_after_trace(self) -> int:
        """Runs that went on past the trace's end (prices held at their last value)."""
        late = self.results["hours_after_trace"].fillna(0) > 0
        return int(self.results.loc[late, "jobs"].sum())


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
    share_instances: bool = False,
    progress: Callable[[int, int], None] | None = None,
    table: ThroughputTable | None = None,
) -> BacktestResult:
    """Replay stored prices: the cost, hours and migrations of each policy from `starts`
    start times `every_hours` apart, relative to the baselines `static` and
    `cheapest-hourly` (always replayed).

    Jobs: the specs in `job_files` (home regions from their constraints, else `regions`),
    else one per model of `models` (default the six of the published trace analysis) and
    region, `days` long on one V100. `first_start` defaults to the latest whole day that
    leaves the last start 3.5 job lengths before the newest price (or now), else the
    earliest whole day the prices hold every start in; starts the stored prices do not
    cover are refused (`replay_window`). `period_hours`:
    hours between decisions; `margin`: dynamic-aware's hysteresis; `overheads`: the cost
    of a move (default `Overheads()`); `checkpoint_gb`: the checkpoint size of jobs whose
    spec gives none. `share_instances`: a 1-GPU job may also take one GPU of a multi-GPU
    instance at its price / GPU count, with one GPU's throughput (other jobs assumed to fill
    the rest), for every policy that considers multi-GPU instances (not static,
    gpu-type, cheapest-hourly). Identical jobs (a sweep's) are replayed once and counted.
    `progress(done, total)` follows the runs.
    """
    from costsched.backtest import (
        BASELINES,
        PUBLISHED_MODELS,
        REPLAY_POLICIES,
        BacktestConfig,
        PriceTrace,
        baseline_terms,
        check_regions,
        jobs_for_models,
        read_jobs,
        replay_policy_name,
        run_backtest,
        summarize,
    )
    from costsched.optimize.decision import Overheads

    names = [replay_policy_name(p) for p in policies] or list(REPLAY_POLICIES)
    names = [b for b in BASELINES if b not in names] + names
    for name, value in (("margin", margin), ("checkpoint_gb", checkpoint_gb),
                        ("period_hours", period_hours), ("every_hours", every_hours),
                        ("days", days)):
        finite(name, value)
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
    if not jobs:
        where = ", ".join(map(str, job_files)) or "models"
        raise InvalidInput(f"{where}: no jobs to replay (an empty sweep?): expected at least "
                           "one job")
    with using(store) as opened:
        span = opened.span(os=list(REPLAY_OS))
        if span is None:
            raise InvalidInput(f"the store holds no prices to replay: {more_prices()}")
        # A home region never priced is the first thing wrong, whatever the window.
        check_regions({j.region for j in jobs},
                      set(opened.offerings(os=list(REPLAY_OS))["region"]))
        times = replay_starts(Span(*span), first, starts, every_hours, _longest(jobs))
        first = times[0]
        # Only the prices a replay can read: from the first start less the longest history
        # a policy reads before a decision (dynamic-aware's week), in effect then or later.
        history = max(getattr(REPLAY_POLICIES[n], "history_hours", 0.0) for n in names)
        trace = PriceTrace.from_store(opened, since=first - timedelta(hours=history),
                                      os=list(REPLAY_OS))
    if share_instances:
        trace = trace.shared()
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
    return BacktestResult(results, summarize(results), window, overheads, margin,
                          checkpoint_gb, share_instances, baseline_terms(jobs, BASELINES))


def json_payload(result: BacktestResult) -> dict:
    """The backtest as JSON-ready data, in the documented schema (`JSON_SCHEMA`); times
    stay datetimes for the caller's encoder."""
    from costsched.backtest import BASELINES, per_run

    costs = {k: (None if isinstance(v, float) and math.isinf(v) else v)
             for k, v in asdict(result.overheads).items()}
    costs["checkpoint_gb"] = result.checkpoint_gb if result.overheads.egress else 0.0
    costs["egress_usd_per_gb"] = {
        name: {"internet": c.egress.internet_usd_per_gb,
               "inter_region": c.egress.inter_region_usd_per_gb, "source": c.egress.source}
        for name, c in clouds.CLOUDS.items()}
    return {"schema_version": JSON_SCHEMA_VERSION, "window": result.window,
            "migration_costs": costs, "margin": result.margin,
            "share_instances": result.share_instances, "baselines": list(BASELINES),
            "summary": _records(result.summary[list(SUMMARY_KEYS)]),
            "runs": _records(per_run(result.results)[list(RUN_KEYS)])}


def _records(frame: pd.DataFrame) -> list[dict]:
    """Rows as dicts, NaN as None."""
    return frame.astype(object).where(frame.notna(), None).to_dict("records")


def finite(name: str, value: float) -> float:
    if not math.isfinite(value):
        raise InvalidInput(f"{name} {value}: expected a finite number")
    return value


def _longest(jobs: Sequence[BacktestJob]) -> float:
    return max(j.v100_days for j in jobs)


def _utc(epoch_seconds: int) -> datetime:
    return datetime.fromtimestamp(epoch_seconds, timezone.utc)

"""Backtests: replay stored price history for jobs x start times through the policies.

    trace = PriceTrace.from_store(store, os=["linux", "linux-vpc"])
    jobs = jobs_for_models(PUBLISHED_MODELS, days=4, regions=["us-east-1"], table=table)
    results = run_backtest(trace, jobs, regular_starts(first, 30), list(POLICIES))
    summary = summarize(results)  # against static and cheapest-hourly
"""

from __future__ import annotations

from costsched.backtest.engine import (
    REPLAY_POLICIES,
    RESULT_COLUMNS,
    BacktestConfig,
    baseline_terms,
    check_regions,
    make_replay_policy,
    regular_starts,
    replay_policy_name,
    run_backtest,
    simulate,
    throughputs,
)
from costsched.backtest.jobs import PUBLISHED_MODELS, BacktestJob, jobs_for_models, read_jobs
from costsched.backtest.oracle import Oracle
from costsched.backtest.report import (
    BASELINES,
    per_run,
    plot,
    reduction_table,
    relative_costs,
    summarize,
    to_markdown,
)
from costsched.backtest.trace import PriceTrace

__all__ = ["BASELINES", "PUBLISHED_MODELS", "REPLAY_POLICIES", "RESULT_COLUMNS",
           "BacktestConfig", "BacktestJob", "Oracle", "PriceTrace", "baseline_terms",
           "check_regions",
           "jobs_for_models",
           "make_replay_policy", "per_run", "plot", "read_jobs", "reduction_table",
           "regular_starts", "relative_costs", "replay_policy_name", "run_backtest", "simulate",
           "summarize", "throughputs", "to_markdown"]

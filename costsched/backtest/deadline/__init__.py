"""Deadline backtests: jobs with a deadline replayed over spot availability traces through
the deadline policies, against the hindsight optimum.

    trace = AvailabilityTrace.from_store(store, zones=[...])
    job = DeadlineJob(work_hours=48, deadline_hours=52, restart_minutes=3,
                      checkpoint_minutes=30)
    runs = simulate(trace, SpotAnywhere(), job, starts, homes)
    best = optimum(trace, job, starts)
"""

from __future__ import annotations

from costsched.backtest.deadline.engine import RUN_COLUMNS, DeadlineJob, simulate
from costsched.backtest.deadline.oracle import default_step, optimum
from costsched.backtest.deadline.report import per_window, plot, summarize, to_markdown
from costsched.backtest.deadline.trace import (
    REFERENCE_SOURCE,
    REFERENCE_SPOT_SHARE,
    AvailabilityTrace,
)

__all__ = ["REFERENCE_SOURCE", "REFERENCE_SPOT_SHARE", "RUN_COLUMNS", "AvailabilityTrace",
           "DeadlineJob", "default_step", "optimum", "per_window", "plot", "simulate",
           "summarize", "to_markdown"]

"""Throughputs costsched measures itself: the steps a job's progress record reports, a
placement's steps per second from them, and the table rows they make (the median of the
newest runs), which `ThroughputTable` lays over the bundled table."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from costsched.lazy import pandas as pd
from costsched.throughput import COLUMNS, MEASURED_BY_COSTSCHED, RECENT_RUNS, model_key


def learned_rows(measurements: pd.DataFrame, precision: str = "fp32",
                 runs: int = RECENT_RUNS) -> pd.DataFrame:
    """Table rows (COLUMNS) from costsched's measurements (columns model, gpu_model,
    gpu_count, precision, steps_per_second, measured_at): per (model, GPU model, count) of
    `precision`, the median of its `runs` newest measurements."""
    if measurements.empty:
        return pd.DataFrame(columns=COLUMNS)
    rows = measurements[measurements["precision"] == precision]
    rows = rows.sort_values("measured_at", ascending=False, kind="stable")
    rows = rows.assign(key=rows["model"].map(model_key))
    newest = rows.groupby(["key", "gpu_model", "gpu_count"], sort=True).head(runs)
    out = []
    for (_, gpu, count), group in newest.groupby(["key", "gpu_model", "gpu_count"],
                                                 sort=True):
        n = len(group)
        last = group["measured_at"].iloc[0]
        out.append((group["model"].iloc[0], gpu, int(count),
                    float(group["steps_per_second"].median()),
                    f"{MEASURED_BY_COSTSCHED}: median of {n} run{'s' if n > 1 else ''}, "
                    f"last {last:%Y-%m-%d}"))
    return pd.DataFrame(out, columns=COLUMNS)


def progress_record_words(detail: str) -> str:
    """A progress record as a user reads it ('step 400; checkpoint at step 400;
    checkpoints in s3://b/ck'); the record itself when it is not in NAME=VALUE form."""
    found = dict(re.findall(r"(?:^|\s)(\w+)=(\S+)", detail))
    said = []
    for name, words in (("step", "step"), ("steps_done", "step"),
                        ("checkpoint_step", "checkpoint at step")):
        try:
            said += [f"{words} {float(found[name]):,.0f}"] if name in found else []
        except ValueError:
            return detail
    if "checkpoint_location" in found:
        said.append(f"checkpoints in {found['checkpoint_location']}")
    return "; ".join(dict.fromkeys(said)) or detail


def progress_steps(detail: str) -> float | None:
    """The step a job's progress record reports: the agent's `step`, else `steps_done`,
    else the newest checkpoint's `checkpoint_step`; None when it names none."""
    found = dict(re.findall(r"(?:^|\s)(step|steps_done|checkpoint_step)=([-+0-9.eE]+)",
                            detail))
    for name in ("step", "steps_done", "checkpoint_step"):
        if name in found:
            try:
                return float(found[name])
            except ValueError:
                return None
    return None


def placement_rates(progress: Sequence[tuple[datetime, float | None]], start: datetime,
                    end: datetime | None, min_seconds: float = 60.0
                    ) -> tuple[float, float, float] | None:
    """(steps/s, steps, seconds) on one placement from progress records ((at, steps)
    pairs; steps None where a record names none) within [start, end]: from its first
    record to its last, so that the start-up before the first step is not counted; None
    with fewer than two records, under `min_seconds` apart, or no steps made."""
    within = sorted(((at, steps) for at, steps in progress
                     if at >= start and (end is None or at <= end)
                     and steps is not None and steps == steps),
                    key=lambda record: record[0])  # stable: records of one time keep order
    if len(within) < 2:
        return None
    seconds = (within[-1][0] - within[0][0]).total_seconds()
    steps = float(within[-1][1] - within[0][1])
    if seconds < min_seconds or steps <= 0:
        return None
    return steps / seconds, steps, seconds

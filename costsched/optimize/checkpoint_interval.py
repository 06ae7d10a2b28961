"""The checkpoint interval as a decision, for jobs that let costsched choose it
(`checkpoint.interval_minutes: auto` in the job spec).

Checkpointing every tau seconds of work costs a write of W seconds per checkpoint, and a
preemption loses tau / 2 of work on average: per second of work, W / tau + tau / (2 M)
with M the mean time between preemptions, least at the first-order optimum
tau = sqrt(2 W M) (Young's interval). It is clamped to [MIN_MINUTES, MAX_MINUTES]: a
checkpoint every few seconds floods the store, and without preemptions an interval of
hours still bounds what a crash loses.

The job learns its interval from the job contract: COSTSCHED_CHECKPOINT_MINUTES in its
environment (`launch_env`). The decision model, the deadline replay and the live deadline
decisions take it from here (`interval_minutes`), so that all three price the same job.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol

AUTO = "auto"
ENV = "COSTSCHED_CHECKPOINT_MINUTES"
MIN_MINUTES = 2.0
MAX_MINUTES = 120.0
# Checkpoint write rate, GB/s: the decision model's 1 Gbit/s checkpoint copy.
WRITE_GB_PER_SECOND = 1.0 / 8
MIN_WRITE_SECONDS = 1.0  # a checkpoint of (almost) nothing still takes a moment


def write_seconds(size_gb: float) -> float:
    """Seconds the job spends writing one checkpoint of `size_gb`."""
    return max(float(size_gb) / WRITE_GB_PER_SECOND, MIN_WRITE_SECONDS)


def interval_minutes(size_gb: float, preemptions_per_hour: float) -> float:
    """The checkpoint interval (minutes of work) for a checkpoint of `size_gb` on capacity
    preempted `preemptions_per_hour` times an hour on average (0: never): sqrt(2 W M),
    clamped, rounded to whole seconds."""
    if not (math.isfinite(preemptions_per_hour) and preemptions_per_hour > 0):
        return MAX_MINUTES
    between = 3600.0 / preemptions_per_hour
    seconds = math.sqrt(2 * write_seconds(size_gb) * between)
    return min(max(round(seconds) / 60, MIN_MINUTES), MAX_MINUTES)


class CheckpointFields(Protocol):
    size_gb: float
    interval_minutes: float | str


def parse(value: Any) -> float | str:
    """A job spec's `checkpoint.interval_minutes`: minutes > 0, or "auto"."""
    if isinstance(value, str) and value.strip().lower() == AUTO:
        return AUTO
    try:
        minutes = float(value)
    except (TypeError, ValueError):
        minutes = math.nan
    if isinstance(value, bool) or not (math.isfinite(minutes) and minutes > 0):
        raise ValueError(f"{value!r}: expected minutes > 0 or {AUTO!r}")
    return minutes


def job_minutes(checkpoint: CheckpointFields, clouds: Sequence[str] = (),
                regions: Sequence[str] = ()) -> float:
    """The job's checkpoint interval: as given, or for "auto" the interval for the highest
    default spot preemption rate of the clouds it may run on (named, else those of its
    regions, else all): the interval it is launched with and planned with wherever it
    runs."""
    if checkpoint.interval_minutes != AUTO:
        return float(checkpoint.interval_minutes)
    from costsched import clouds as known

    names = (list(clouds) or sorted({c for r in regions for c in known.owners_of_region(r)})
             or list(known.NAMES))
    rate = max(known.default_preemption(c).per_hour for c in names)
    return interval_minutes(checkpoint.size_gb, rate)


def launch_env(interval: float, auto: bool) -> dict[str, str]:
    """The job contract's variable telling the job how often to checkpoint (set where
    costsched chose the interval; a job with its own interval keeps it)."""
    return {ENV: f"{interval:g}"} if auto else {}

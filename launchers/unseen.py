"""One rule for a file of the job contract that a running job has not written yet: its
checkpoints under $CHECKPOINT_DIR (`launchers.nothing_published`), its step in
$COSTSCHED_PROGRESS_FILE (`launchers.agent`). Each is said once its command, past its
setup, has run `wait` seconds without it (a minute, or less where the job's own settings
say it writes sooner: `wait_seconds`), in the same words for how long: 'in 1 min of its
run'."""

from __future__ import annotations

import math
import os
import time
from collections.abc import Mapping

AFTER_SECONDS = 60.0  # the longest a job runs without a file of the contract before it is said
INTERVALS = 3  # ...or this many of its checkpoint intervals, when they are shorter
INTERVAL_ENV = "COSTSCHED_CHECKPOINT_MINUTES"  # `optimize.checkpoint_interval.ENV`


def wait_seconds(environ: Mapping[str, str] = os.environ) -> float:
    """How long the command runs without a file of the contract before it is said:
    AFTER_SECONDS, or INTERVALS checkpoint intervals when the job was given a shorter one
    (a job that saves that often writes its step at least as often)."""
    try:
        minutes = float(environ.get(INTERVAL_ENV, ""))
    except ValueError:
        return AFTER_SECONDS
    if not math.isfinite(minutes) or minutes <= 0:
        return AFTER_SECONDS
    return min(AFTER_SECONDS, round(INTERVALS * minutes * 60, 3))  # 0.1 min: 18 s, not 18.00...4


def overdue(began: float | None, seen: bool, wait: float = AFTER_SECONDS,
            now: float | None = None) -> bool:
    """Whether the command, begun at `began` (monotonic seconds; None: not begun, its
    setup still runs), has run `wait` s without the file (`seen`: it was written)."""
    if seen or began is None:
        return False
    return (time.monotonic() if now is None else now) - began >= wait


def took(seconds: float) -> str:
    """How long it ran without the file, as every such line says it: '1 min', '9 s'."""
    return f"{seconds / 60:g} min" if seconds % 60 == 0 else f"{seconds:.0f} s"

"""One rule for a file of the job contract that a running job has not written yet: its
checkpoints under $CHECKPOINT_DIR (`launchers.nothing_published`), its step in
$COSTSCHED_PROGRESS_FILE (`launchers.agent`). Each is said once its command, past its
setup, has run `wait` seconds without it (a minute, or less where the job's own settings
say it writes sooner), in the same words for how long: 'in 1 min of its run'."""

from __future__ import annotations

import time

AFTER_SECONDS = 60.0  # the longest a job runs without a file of the contract before it is said


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

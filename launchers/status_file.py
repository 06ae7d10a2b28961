"""An instance's status file, WORKDIR/status.json: what its agent (or its boot, when the
agent never started) says of the job, written atomically for the launcher to read."""

from __future__ import annotations

import json
import math
import os
from pathlib import Path

STATUS = "status.json"


def write_status(workdir: Path, status: dict) -> None:
    """WORKDIR/status.json, atomically (temp file, fsync, rename)."""
    temp = workdir / (STATUS + ".tmp")
    with temp.open("w") as handle:
        json.dump(status, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temp, workdir / STATUS)


def setup_seconds(status: dict) -> float | None:
    """A status file's "setup_seconds", how long the instance's setup took (0 without
    one); None where it says none (in setup, before it, an older agent's) or nothing that
    is a duration."""
    return _duration(status.get("setup_seconds"))


# Seconds the job's command ran past its setup without writing its step to its progress
# file, once that long (`launchers.unseen`); absent before, and once it writes one.
NO_STEP = "no_step_after"


def no_step_after(status: dict) -> float | None:
    """A status file's "no_step_after" (`NO_STEP`): how long its command has run without
    reporting a step, once that is said; None where it says nothing of the kind."""
    after = _duration(status.get(NO_STEP))
    return None if after is None or after <= 0 else after


def _duration(value: object) -> float | None:
    """`value` as seconds where it is a finite number, 0 or more (never a bool); None
    otherwise."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or value < 0:
        return None
    return float(value)

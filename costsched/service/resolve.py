"""A job file's spec resolved as the launcher that runs it will have it: the one
resolution that `plan`, `launch`, a launch's budget check and the running jobs' decisions
share, so that they count one start and one restart model."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from costsched.jobspec import JobSpec, ResolvedJob
    from costsched.optimize.overheads import Overheads
    from costsched.throughput import ThroughputTable


def resolve(spec: JobSpec, table: ThroughputTable, at: datetime, source: str = "<spec>",
            launcher: str = "") -> ResolvedJob:
    """`costsched.jobspec.resolve` as `launcher` runs the job: the configured restart model
    (`[migration]`) under the job's own, and its start and the instance boot of its
    restarts left out where that launcher boots no instance (`launchers.start_left_out`:
    `ResolvedJob.overheads`). The one resolution that `plan`, `launch`, a
    launch's budget check and the running jobs' decisions share, so that they count one
    start."""
    from costsched.jobspec import resolve as resolved
    from launchers import start_left_out

    job = resolved(spec, table, at, source=source, overheads=configured_restarts())
    left_out = start_left_out(launcher) if launcher else ""
    # Its restarts (a recovery's, a move's) as its start: no instance booted there.
    return job.launched_by(left_out) if left_out else job


def configured_restarts() -> Overheads:
    """The configuration's restart model (`[migration]`)."""
    from costsched.config import effective

    return effective().migration.overheads()

"""A job file's spec resolved as the launcher that runs it will have it: the one
resolution that `plan`, `launch`, a launch's budget check and the running jobs' decisions
share, so that they count one start and one restart model."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from costsched.jobspec import JobSpec, ResolvedJob
    from costsched.optimize.job import Workload
    from costsched.optimize.overheads import Overheads
    from costsched.throughput import ThroughputTable

W = TypeVar("W", bound="Workload")


def resolve(spec: JobSpec, table: ThroughputTable, at: datetime, source: str = "<spec>",
            launcher: str = "") -> ResolvedJob:
    """`costsched.jobspec.resolve` as `launcher` runs the job: the configured restart model
    (`[migration]`) under the job's own, and its start and the instance boot of its
    restarts left out where that launcher boots no instance (`launchers.start_left_out`:
    `ResolvedJob.overheads`). The one resolution that `plan`, `launch`, a
    launch's budget check and the running jobs' decisions share, so that they count one
    start."""
    from costsched.jobspec import resolve as resolved

    job = resolved(spec, table, at, source=source, overheads=configured_restarts())
    return launched_by(job, launcher)


def launched_by(job: W, launcher: str) -> W:
    """`job` (resolved for any launcher) as `launcher` runs it ('': one that boots an
    instance): its start, and the instance boot of its restarts (a recovery's, a move's),
    left out where that launcher boots none (`launchers.start_left_out`), counted where it
    boots one; `job` itself where that is how it is counted already."""
    from launchers import start_left_out

    left_out = start_left_out(launcher) if launcher else ""
    return job if job.start_left_out == left_out else job.launched_by(left_out)


def configured_restarts() -> Overheads:
    """The configuration's restart model (`[migration]`)."""
    from costsched.config import effective

    return effective().migration.overheads()

"""A job as the optimizer reads it: what the planner ranks and the collection's problem packs.

The job spec's `ResolvedJob` is one, with what only the launchers and the views read (its
environment, its file, its notes) added; the optimizer never reads those.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from costsched.model import Job
from costsched.optimize.decision import Overheads
from costsched.throughput import ThroughputTable


@dataclass(frozen=True)
class Workload:
    """One job to place: the core `Job` (model, steps to go, checkpoint size, constraints:
    deadline, budget, allowed clouds, regions, zones, markets, GPU models and counts,
    instance types, price cap), the steps per second it runs at (`table`; CPU work is a
    `CpuWork`), how long its checkpoints and restarts take, a gang's `nodes` (priced N
    times, stopped by the first of its N instances preempted) and a task's `ordered:`
    alternatives (`order`, first preferred: clouds, regions, markets, instance types)."""

    job: Job
    table: ThroughputTable
    checkpoint_hours: float
    restart_hours: float
    order: tuple[dict[str, list[str]], ...] = field(default=(), kw_only=True)
    nodes: int = field(default=1, kw_only=True)
    # Placed again from its checkpoint (a recovery, a start after a stop): its start is a
    # restart, the checkpoint's copy included (`start_hours`).
    resumes: bool = field(default=False, kw_only=True)
    # Running already (a re-plan of the rest of it, as a backtest's): no start to pay, as
    # the decision model has it for the rest of a running job; a move's restart is charged
    # apart, by whoever weighs the move.
    running: bool = field(default=False, kw_only=True)
    # Why its start costs nothing where it is launched ('' where it is an instance's boot,
    # set-up and warm-up): the launcher's (`launchers.start_left_out`), as its budget
    # check and its plan then count it.
    start_left_out: str = field(default="", kw_only=True)

    @property
    def name(self) -> str:
        return self.job.name

    def launched_by(self, left_out: str) -> Workload:
        """The job as a launcher whose start costs nothing for `left_out` runs it ('': one
        that boots an instance): `start_left_out` (its `restart_hours` as given: a workload
        without a restart model has no boot of its own to leave out)."""
        return replace(self, start_left_out=left_out)

    def overheads(self, configured: Overheads | None = None) -> Overheads | None:
        """Its restart model, item by item, where it has one (the job spec's `ResolvedJob`
        has); None: only its `restart_hours` are known."""
        return None

    @property
    def work_assumed(self) -> bool:
        """Whether its work is costsched's assumed hour (`Work.assumed`: a task that says
        none): its plan's figures are then rates per hour of work."""
        work = getattr(self, "work", None)  # a job spec's ResolvedJob says its work
        return bool(work is not None and work.assumed)

    @property
    def start_hours(self) -> float:
        """Hours from its launch to its first step, paid on the instance and counted once by
        its plan's expected hours and cost (`planner.start_hours`): its restart (boot and
        set-up, warm-up, a gang's rendezvous) without the checkpoint's copy (a launched
        job's checkpoint store is its own, empty); placed again from its checkpoint
        (`resumes`), or without a restart model to take the copy out of, its restart."""
        if self.start_left_out:  # the launcher boots no instance
            return 0.0
        own = self.overheads()
        if self.resumes or own is None:
            return self.restart_hours
        return self.restart_hours - own.restart_parts(self.job.checkpoint_gb)["copy"]

    def restart_said(self, shown: str | None = None, first: bool = False) -> str:
        """Its restart's hours in words ('restart 0.25 h'; `first`: its first start's, 'first
        start 0.25 h'); the job spec's `ResolvedJob` says where each part comes from."""
        hours = shown or f"{self.start_hours if first else self.restart_hours:.4g}"
        return f"{'first start' if first else 'restart'} {hours} h"

    def start_said(self, shown: str | None = None) -> str:
        """Where `start_hours` come from (`restart_said`): 'first start 0.25 h: 10 min boot
        and set-up ([migration] restart_minutes) + 5 min warm-up (...)', or the restart of a
        job placed again from its checkpoint (`resumes`); 'start left out: ...' where the
        launcher boots no instance (`start_left_out`)."""
        if self.start_left_out:
            return f"start left out: {self.start_left_out}"
        return self.restart_said(shown, first=not self.resumes)

"""A job as the optimizer reads it: what the planner ranks and the collection's problem packs.

The job spec's `ResolvedJob` is one, with what only the launchers and the views read (its
environment, its file, its notes) added; the optimizer never reads those.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from costsched.model import Job
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

    @property
    def name(self) -> str:
        return self.job.name

"""One budget now, as the cap check, the Budgets table and a move at a cap read it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from costsched.rest_cost import RestCost


@dataclass(frozen=True)
class BudgetState:
    """One budget now: `spent` in its period, `committed` (its running jobs' next watch
    interval at their stored prices), `forecast` (spent plus each running job's cost to its
    end at the speed the rest of it runs at, its measured speed where one is trusted, or
    to the end of the period when that comes first), its jobs and those a stop at the cap
    ended."""

    name: str  # "job 3 (train)" for a job's own budget, else the configured name
    kind: str  # "job" or "named"
    usd: float
    period: str  # "total", "day" or "month"
    spent_usd: float
    committed_usd: float
    forecast_usd: float  # NaN when a running job's rest cannot be priced (`short_work`)
    jobs: tuple[int, ...] = ()
    running: tuple[int, ...] = ()
    stopped: tuple[int, ...] = ()
    next_usd: Mapping[int, float] = field(default_factory=dict, repr=False)
    spent_by_job: Mapping[int, float] = field(default_factory=dict, repr=False)
    to_end_usd: Mapping[int, float] = field(default_factory=dict, repr=False)
    # The seconds each running job is charged ahead (`own_budget.ahead_seconds`).
    ahead_seconds: Mapping[int, float] = field(default_factory=dict, repr=False)
    # `to_end_usd` itemised where its hours are known: each job's work left at its pace
    # and its open placement's price (`rest_cost.RestCost`).
    to_end: Mapping[int, RestCost] = field(default_factory=dict, repr=False)

    @property
    def used(self) -> float:
        return self.spent_usd / self.usd

    @property
    def left_usd(self) -> float:
        return self.usd - self.spent_usd

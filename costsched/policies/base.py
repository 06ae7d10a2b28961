"""The policy interface: a market view as of t and the job's state in, an offering key out.

A policy sees only a `MarketView` (prices as of the decision time, live from the store or
from a replayed trace) and the `JobState`; it compares offerings by the decision model's
risk-adjusted expected cost of the job's remaining steps (`costsched.optimize.decision`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import ClassVar

from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.model import Constraints, InvalidInput, Job
from costsched.optimize import decision
from costsched.optimize.decision import Overheads
from costsched.optimize.rank import allowed_offerings, best_of
from costsched.policies.market import MarketView, OfferingKey


@dataclass(frozen=True)
class JobState:
    job: Job
    region: str  # the job's home region
    steps_left: float
    current: OfferingKey | None  # the offering the job runs on; None before it is placed
    overheads: Overheads = field(default_factory=Overheads)
    # The hours of work a move made now loses, as measured for a running job (none when it
    # checkpoints when stopped, else the work since its newest checkpoint); None: the
    # decision model's assumption (`Overheads.lost_work_hours`), as every replay prices it.
    lost_work_hours: float | None = None

    @property
    def restart_hours(self) -> float:
        return self.overheads.restart_hours(self.job.checkpoint_gb)


@dataclass(frozen=True)
class Scope:
    """Which offerings a policy may choose from (always within the job's constraints)."""

    gpu_model: str | None = None  # only this GPU model
    single_gpu: bool = True  # only 1-GPU instances (no shares of multi-GPU ones)
    other_clouds: bool = False  # besides the home region, every region of other clouds
    market: str | None = "spot"  # None: the markets the job allows
    every_region: bool = False  # every region and zone the job allows (no home region)

    def mask(self, offerings: pd.DataFrame, region: str, constraints: Constraints) -> np.ndarray:
        if self.every_region:
            where = pd.Series(True, index=offerings.index)
        else:
            home = offerings["region"] == region
            if not home.any():
                known = ", ".join(sorted(set(offerings["region"])))
                raise InvalidInput(f"region {region!r}: no prices stored for it; known: {known}")
            home_cloud = offerings.loc[home, "cloud"].iloc[0]
            where = home | (self.other_clouds & (offerings["cloud"] != home_cloud))
        ok = where if self.market is None else where & (offerings["market"] == self.market)
        if self.gpu_model:
            ok &= offerings["gpu_model"] == self.gpu_model
        if self.single_gpu:
            ok &= offerings["gpu_count"] == 1
            if "shared" in offerings.columns:  # a share belongs to a multi-GPU instance
                ok &= ~offerings["shared"].astype(bool)
        # The job's offering filters, as the optimizer applies them. Prices move, so
        # max_price_per_hour is not a filter on offerings here (replays don't apply it).
        filters = replace(constraints, max_price_per_hour=None)
        ok &= allowed_offerings(offerings, filters) == ""
        return ok.to_numpy(dtype=bool)

    def terms(self, region: str, constraints: Constraints) -> str:
        """What the scope holds for this job, in the job's terms ('' : the description
        says it)."""
        return ""


# Scope masks by (scope, region, constraints), each with the frame it was computed over:
# it holds that frame, so an identity check is safe.
_MASKS: dict[tuple, tuple[pd.DataFrame, np.ndarray]] = {}
_MASKS_KEPT = 256


def scope_mask(scope: Scope, offerings: pd.DataFrame, region: str,
               constraints: Constraints) -> np.ndarray:
    """`scope.mask`, cached per offerings frame (a replay asks it for every run of every
    start over the same trace). Read-only."""
    key = (scope, region, constraints)
    cached = _MASKS.get(key)
    if cached is None or cached[0] is not offerings:
        mask = scope.mask(offerings, region, constraints)
        mask.flags.writeable = False
        cached = (offerings, mask)
        while len(_MASKS) >= _MASKS_KEPT:  # (another thread may have dropped the oldest)
            _MASKS.pop(next(iter(_MASKS)), None)
        _MASKS[key] = cached
    return cached[1]


class Policy(ABC):
    name: ClassVar[str]
    description: ClassVar[str]
    scope: ClassVar[Scope]
    # Hours of price history before t the policy reads, as a `history.HistoryView`'s
    # typical prices; 0: the view as of t is all it needs.
    history_hours: ClassVar[float] = 0.0
    # True when the policy weighs a move itself by the decision model (its price, a margin):
    # a running job's decider then carries its moves out as they are, not judged twice.
    weighs_moves: ClassVar[bool] = False

    def in_scope(self, offerings: pd.DataFrame, state: JobState) -> np.ndarray:
        """The scope's mask over `offerings` for this job (cached, read-only)."""
        return scope_mask(self.scope, offerings, state.region, state.job.constraints)

    def candidates(self, view: MarketView, state: JobState) -> np.ndarray:
        """Rows the policy may choose now: in scope, offered at t, able to run the model."""
        return (self.in_scope(view.offerings, state) & ~np.isnan(view.prices)
                & ~np.isnan(view.steps_per_second))

    @abstractmethod
    def decide(self, view: MarketView, state: JobState) -> OfferingKey:
        """The key of the offering to run the next period on."""

    def no_candidate(self, view: MarketView, state: JobState) -> InvalidInput:
        when = datetime.fromtimestamp(view.t, timezone.utc)
        terms = self.scope.terms(state.region, state.job.constraints)
        scope = ("the job's constraints" if self.scope.every_region and not terms
                 else f"its scope ({terms or self.description})")
        return InvalidInput(
            f"policy {self.name}: no offering in {scope} can run "
            f"{state.job.model!r} from {state.region} at {when:%Y-%m-%d %H:%M} UTC"
        )


# A running job's scope: every offering its constraints allow (clouds, regions, zones,
# markets, GPU models and counts). Launch, recovery, migration and the daemon's re-plan
# choose within it; the backtest's named policies keep their own scopes.
JOB_SCOPE = Scope(single_gpu=False, other_clouds=True, market=None, every_region=True)


def expected_cost(view: MarketView, state: JobState, rows: np.ndarray) -> np.ndarray:
    """The decision model's expected USD of the job's remaining steps on offering `rows`,
    at the prices as of t."""
    return decision.outcomes(state.steps_left, view.steps_per_second[rows], view.prices[rows],
                             view.preemptions_per_hour[rows], state.job.checkpoint_hours,
                             state.restart_hours).cost


def cheapest(view: MarketView, state: JobState, usable: np.ndarray) -> tuple[int, float] | None:
    """The usable row of the lowest expected cost (ties by the tie rule,
    `optimize.rank.tie_order`) and that cost; None if none is usable."""
    rows = np.flatnonzero(usable)
    if len(rows) == 0:
        return None
    cost = expected_cost(view, state, rows)
    i = best_of(cost, view.tie_order[rows])
    return int(rows[i]), float(cost[i])


class ChooseOnce(Policy):
    """Choose at the start by the expected cost of the whole job and stay to the end."""

    def decide(self, view: MarketView, state: JobState) -> OfferingKey:
        if state.current is not None:
            return state.current
        found = cheapest(view, state, self.candidates(view, state))
        if found is None:
            raise self.no_candidate(view, state)
        return view.key(found[0])

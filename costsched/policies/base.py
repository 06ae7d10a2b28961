"""The policy interface: prices as of t, throughputs and the job's state in, a placement out.

An online policy sees only a `MarketView` (the as-of prices at the decision time) and the
`JobState`; it returns the row of the offering the job should run on for the next period.
A hindsight policy (the oracle) instead gets the whole `Run` and returns a plan.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import ClassVar

import numpy as np
import pandas as pd

from costsched.backtest.accounting import Run
from costsched.backtest.trace import HOUR
from costsched.migration_costs import MigrationCosts
from costsched.model import Constraints, InvalidInput, Job, Offering, Placement
from costsched.optimize.rank import allowed_offerings


@dataclass(frozen=True)
class MarketView:
    """What can be known at decision time t."""

    t: int  # epoch seconds
    offerings: pd.DataFrame  # positional rows, as in the price trace
    prices: np.ndarray  # USD/hour as of t; NaN = not offered (yet)
    steps_per_second: np.ndarray  # of the job's model per offering; NaN = cannot run it
    egress: np.ndarray  # [from, to] USD to copy the job's checkpoint

    @property
    def usd_per_step(self) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return self.prices / (self.steps_per_second * HOUR)


@dataclass(frozen=True)
class JobState:
    job: Job
    region: str  # the job's home region
    steps_left: float
    current: int | None  # offering row the job runs on; None before the first placement
    period: int  # decision number, 0 at the start
    costs: MigrationCosts = field(default_factory=MigrationCosts)


@dataclass(frozen=True)
class Scope:
    """Which offerings a policy may choose from (always within the job's constraints)."""

    gpu_model: str | None = None  # only this GPU model
    single_gpu: bool = True  # only 1-GPU instances
    other_clouds: bool = False  # besides the home region, every region of other clouds
    market: str = "spot"

    def mask(self, offerings: pd.DataFrame, region: str, constraints: Constraints) -> np.ndarray:
        home = offerings["region"] == region
        if not home.any():
            known = ", ".join(sorted(set(offerings["region"])))
            raise InvalidInput(f"region {region!r}: no prices stored for it; known: {known}")
        home_cloud = offerings.loc[home, "cloud"].iloc[0]
        where = home | (self.other_clouds & (offerings["cloud"] != home_cloud))
        ok = where & (offerings["market"] == self.market)
        if self.gpu_model:
            ok &= offerings["gpu_model"] == self.gpu_model
        if self.single_gpu:
            ok &= offerings["gpu_count"] == 1
        # The job's offering filters, as the optimizer applies them. A trace's prices move,
        # so max_price_per_hour is not a filter on offerings here (replays don't apply it).
        filters = replace(constraints, max_price_per_hour=None)
        ok &= allowed_offerings(offerings, filters) == ""
        return ok.to_numpy(dtype=bool)


class Policy(ABC):
    name: ClassVar[str]
    description: ClassVar[str]
    scope: ClassVar[Scope]
    hindsight: ClassVar[bool] = False

    def __init__(self) -> None:
        self._masks: dict[tuple, tuple[pd.DataFrame, np.ndarray]] = {}

    def in_scope(self, offerings: pd.DataFrame, state: JobState) -> np.ndarray:
        """The scope's mask over `offerings` for this job (cached per offerings frame)."""
        key = (state.region, state.job.constraints)
        cached = self._masks.get(key)
        if cached is None or cached[0] is not offerings:
            cached = (offerings, self.scope.mask(offerings, state.region, state.job.constraints))
            self._masks[key] = cached
        return cached[1]

    def candidates(self, view: MarketView, state: JobState) -> np.ndarray:
        """Rows the policy may choose now: in scope, offered at t, able to run the model."""
        return (self.in_scope(view.offerings, state) & ~np.isnan(view.prices)
                & ~np.isnan(view.steps_per_second))

    @abstractmethod
    def decide(self, view: MarketView, state: JobState) -> int:
        """The offering row to run the next period on."""

    def plan(self, run: Run, state: JobState) -> list[int]:  # pragma: no cover - hindsight only
        raise NotImplementedError(f"{self.name} decides online; call decide()")

    def place(self, view: MarketView, state: JobState) -> Placement:
        """`decide` as a Placement of the model (for callers outside the backtest)."""
        row = view.offerings.iloc[self.decide(view, state)]
        offering = Offering(
            cloud=row["cloud"], region=row["region"], zone=row["zone"],
            instance_type=row["instance_type"], market=row["market"],
            gpu_model=row["gpu_model"], gpu_count=int(row["gpu_count"]),
            vcpus=int(row.get("vcpus", 0) or 0), memory_gb=float(row.get("memory_gb", 0) or 0),
            os=row.get("os", "linux"),
        )
        return Placement(state.job.name, offering, datetime.fromtimestamp(view.t, timezone.utc))

    def no_candidate(self, view: MarketView, state: JobState) -> InvalidInput:
        when = datetime.fromtimestamp(view.t, timezone.utc)
        return InvalidInput(
            f"policy {self.name}: no offering in its scope ({self.description}) can run "
            f"{state.job.model!r} from {state.region} at {when:%Y-%m-%d %H:%M} UTC"
        )


def best(score: np.ndarray, usable: np.ndarray) -> int | None:
    """The usable row with the lowest score (the first on ties); None if none is usable."""
    if not usable.any():
        return None
    return int(np.argmin(np.where(usable, score, np.inf)))


class ChooseOnce(Policy):
    """Choose at the start by `score` (lower is better) and stay there to the end."""

    def score(self, view: MarketView) -> np.ndarray:
        return view.usd_per_step

    def decide(self, view: MarketView, state: JobState) -> int:
        if state.current is not None:
            return state.current
        choice = best(self.score(view), self.candidates(view, state))
        if choice is None:
            raise self.no_candidate(view, state)
        return choice

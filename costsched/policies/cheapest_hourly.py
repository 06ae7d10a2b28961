"""cheapest-hourly: what a price-only launcher does (SkyPilot's optimizer and managed jobs).

The user's accelerator and count (the job's `gpu_models` and `gpu_counts`, default one
V100) on the spot market (or the job's markets), at the lowest USD/hour across every cloud
and region the job allows, whatever its throughput. Chosen at launch and kept; when the
offering becomes unusable (gone from the market, or the job was preempted and is asked
again with no current offering) it picks the then-cheapest one.
"""

from __future__ import annotations

from dataclasses import dataclass

from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.model import Constraints
from costsched.optimize.rank import allowed_offerings
from costsched.policies.base import JobState, Policy, Scope
from costsched.policies.market import MarketView, OfferingKey

DEFAULT_GPU = "V100"
DEFAULT_COUNT = 1


@dataclass(frozen=True)
class AskedFor(Scope):
    """The accelerator and count the job asked for, in any cloud and region it allows."""

    def mask(self, offerings: pd.DataFrame, region: str, constraints: Constraints) -> np.ndarray:
        ok = allowed_offerings(offerings, Constraints(
            clouds=constraints.clouds, regions=constraints.regions,
            markets=constraints.markets or (self.market,),
            gpu_models=constraints.gpu_models or (DEFAULT_GPU,),
            gpu_counts=constraints.gpu_counts or (DEFAULT_COUNT,))) == ""
        if "shared" in offerings.columns:  # whole instances only, as such launchers rent
            ok &= ~offerings["shared"].astype(bool)
        return ok.to_numpy(dtype=bool)


class CheapestHourly(Policy):
    name = "cheapest-hourly"
    description = ("the job's accelerator and count (default 1xV100 spot) at the lowest "
                   "USD/hour in any cloud and region it allows, kept until it is gone")
    scope = AskedFor()

    def decide(self, view: MarketView, state: JobState) -> OfferingKey:
        usable = self.candidates(view, state)
        cur = view.row(state.current)
        if cur is not None and usable[cur]:
            return state.current  # type: ignore[return-value]
        rows = np.flatnonzero(usable)
        if len(rows) == 0:
            raise self.no_candidate(view, state)
        return view.key(int(rows[np.argmin(view.prices[rows])]))

"""cheapest-hourly: what a price-only launcher does (SkyPilot's optimizer and managed jobs).

The user's accelerator and count (the job's `gpu_models` and `gpu_counts`, default one
V100) on the spot market (or the job's markets), at the lowest USD/hour across every cloud
and region the job allows, whatever its throughput. Chosen at launch and kept; when the
offering becomes unusable (gone from the market, or the job was preempted and is asked
again with no current offering) it picks the then-cheapest one.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.model import Constraints
from costsched.optimize.rank import allowed_offerings
from costsched.policies.base import JobState, Policy, Scope
from costsched.policies.market import MarketView, OfferingKey

DEFAULT_GPU = "V100"
DEFAULT_COUNT = 1


def asked_for(constraints: Constraints, market: str | None = "spot") -> Constraints:
    """The job's constraints with the accelerator, count and market it asked for filled in
    where it names none (1xV100 spot); prices move, so no price cap."""
    return replace(constraints, markets=constraints.markets or ((market,) if market else ()),
                   gpu_models=constraints.gpu_models or (DEFAULT_GPU,),
                   gpu_counts=constraints.gpu_counts or (DEFAULT_COUNT,),
                   max_price_per_hour=None)


def asked_terms(constraints: Constraints, market: str | None = "spot") -> str:
    """What the job asked for, in its terms: '1xT4 spot', '1 or 8xV100 spot or on-demand'."""
    asked = asked_for(constraints, market)
    counts = " or ".join(map(str, asked.gpu_counts))
    return (f"{counts}x{'/'.join(asked.gpu_models)} {' or '.join(asked.markets)}")


@dataclass(frozen=True)
class AskedFor(Scope):
    """The accelerator and count the job asked for, in every cloud, region and zone it
    allows (`home_only`: in its home region only)."""

    home_only: bool = False

    def mask(self, offerings: pd.DataFrame, region: str, constraints: Constraints) -> np.ndarray:
        ok = allowed_offerings(offerings, asked_for(constraints, self.market)) == ""
        if self.home_only:
            ok &= offerings["region"] == region
        if "shared" in offerings.columns:  # whole instances only, as such launchers rent
            ok &= ~offerings["shared"].astype(bool)
        return ok.to_numpy(dtype=bool)

    def terms(self, region: str, constraints: Constraints) -> str:
        where = (f"in {region}" if self.home_only else
                 f"in {', '.join(constraints.regions)}" if constraints.regions else
                 "in any region")
        if constraints.clouds:
            where += f" of {', '.join(constraints.clouds)}"
        return f"{asked_terms(constraints, self.market)} {where}"


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

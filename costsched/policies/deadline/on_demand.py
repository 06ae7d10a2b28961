"""on-demand: the cost ceiling. On-demand in the home zone from the start to the end."""

from __future__ import annotations

from costsched.lazy import numpy as np
from costsched.policies.deadline.base import DeadlinePolicy, DeadlineState, MarketNow


class OnDemand(DeadlinePolicy):
    name = "on-demand"
    description = "on-demand in the home zone throughout"

    def choose(self, state: DeadlineState, market: MarketNow) -> np.ndarray:
        return market.on_demand(state.home)

    def on_demand_why(self, state: DeadlineState, market: MarketNow) -> str:
        return (f"{self.name} runs a job on on-demand from its start to its end and never "
                "on spot (the cost ceiling)")

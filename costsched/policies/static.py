"""static: the cheapest 1xV100 spot instance in the job's region at the start, kept."""

from __future__ import annotations

import numpy as np

from costsched.policies.base import ChooseOnce, MarketView, Scope


class Static(ChooseOnce):
    name = "static"
    description = "cheapest 1xV100 spot instance in the home region, chosen at the start"
    scope = Scope(gpu_model="V100", single_gpu=True)

    def score(self, view: MarketView) -> np.ndarray:
        return view.prices  # one GPU model: the cheapest instance is the cheapest per step

"""dynamic-aware: every period, migrate only when the expected saving over the job's
remaining steps exceeds what the move costs plus a hysteresis margin.

Expected costs assume today's prices hold for the rest of the job. Staying costs
steps_left x USD/step here. Moving to offering j costs steps_left x USD/step there, plus
the migration: the idle hours billed on j, the old instance's overlap, and the checkpoint's
egress. The policy moves to the j with the largest saving, if that saving exceeds
`margin` x the cost of staying.
"""

from __future__ import annotations

import numpy as np

from costsched.policies.base import JobState, MarketView, Policy, best
from costsched.policies.multi_cloud import MULTI_CLOUD

DEFAULT_MARGIN = 0.05


class DynamicAware(Policy):
    name = "dynamic-aware"
    description = ("re-decide every period among the multi-cloud choices; migrate when the "
                   "expected saving exceeds the migration cost plus a margin")
    scope = MULTI_CLOUD

    def __init__(self, margin: float = DEFAULT_MARGIN) -> None:
        super().__init__()
        self.margin = margin

    def decide(self, view: MarketView, state: JobState) -> int:
        usable = self.candidates(view, state)
        score = view.usd_per_step
        if state.current is None:
            choice = best(score, usable)
            if choice is None:
                raise self.no_candidate(view, state)
            return choice
        cur = state.current
        stay = state.steps_left * score[cur]
        move = (state.steps_left * score
                + view.prices * state.costs.idle_hours
                + view.prices[cur] * state.costs.overlap_hours
                + view.egress[cur])
        saving = np.where(usable, stay - move, -np.inf)
        saving[cur] = -np.inf
        choice = int(np.argmax(saving))
        if saving[choice] > self.margin * stay:
            return choice
        return cur

"""dynamic: every period, move to the offering that is cheapest per step at current prices
(the multi-cloud choice set), whatever the move costs."""

from __future__ import annotations

from costsched.policies.base import JobState, MarketView, Policy, best
from costsched.policies.multi_cloud import MULTI_CLOUD


class Dynamic(Policy):
    name = "dynamic"
    description = "re-decide every period among the multi-cloud choices and migrate"
    scope = MULTI_CLOUD

    def decide(self, view: MarketView, state: JobState) -> int:
        score = view.usd_per_step
        choice = best(score, self.candidates(view, state))
        if choice is None:
            raise self.no_candidate(view, state)
        # Stay on a tie: a move that saves nothing is not made.
        if state.current is not None and score[state.current] <= score[choice]:
            return state.current
        return choice

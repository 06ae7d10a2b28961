"""dynamic: every period, move to the offering with the lowest expected cost of the job's
remaining steps at current prices (the multi-cloud choice set), whatever the move costs."""

from __future__ import annotations

from costsched.policies.base import JobState, Policy, cheapest, expected_cost
from costsched.policies.market import MarketView, OfferingKey
from costsched.policies.multi_cloud import MULTI_CLOUD


class Dynamic(Policy):
    name = "dynamic"
    description = "re-decide every period among the multi-cloud choices and migrate"
    scope = MULTI_CLOUD

    def decide(self, view: MarketView, state: JobState) -> OfferingKey:
        usable = self.candidates(view, state)
        found = cheapest(view, state, usable)
        if found is None:
            raise self.no_candidate(view, state)
        choice, cost = found
        # Stay on a tie: a move that saves nothing is not made.
        cur = view.row(state.current)
        if cur is not None and usable[cur]:
            stay = float(expected_cost(view, state, [cur])[0])
            if stay <= cost:
                return state.current  # type: ignore[return-value]
        return view.key(choice)

"""dynamic-aware: every period, migrate only when the expected saving over the job's
remaining steps exceeds what the move costs plus a hysteresis margin.

Expected costs (the decision model's: price, throughput, preemption risk, the job's
checkpoint interval, restart) assume today's prices hold for the rest of the job. Moving
to offering j costs its expected cost there plus the move (`decision.move_cost`: idle hours
billed on j, the old instance's overlap, the checkpoint's egress). The policy moves to the
j with the largest saving, if that saving exceeds `margin` x the cost of staying.
"""

from __future__ import annotations

import numpy as np

from costsched.optimize.decision import move_cost
from costsched.policies.base import JobState, Policy, cheapest, expected_cost
from costsched.policies.market import MarketView, OfferingKey
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

    def decide(self, view: MarketView, state: JobState) -> OfferingKey:
        usable = self.candidates(view, state)
        cur = view.row(state.current)
        if cur is None or not usable[cur]:  # not placed yet, or its offering is gone
            found = cheapest(view, state, usable)
            if found is None:
                raise self.no_candidate(view, state)
            return view.key(found[0])
        rows = np.flatnonzero(usable)
        here = int(np.searchsorted(rows, cur))  # the current offering among `rows`
        cost = expected_cost(view, state, rows)
        stay = float(cost[here])
        job = state.job
        move = cost + move_cost(state.overheads, view.prices[rows], here,
                                view.egress_from(cur)[rows], job.checkpoint_gb,
                                job.checkpoint_hours)
        saving = stay - move
        saving[here] = -np.inf
        i = int(np.argmax(saving))
        if saving[i] > self.margin * stay:
            return view.key(int(rows[i]))
        return state.current  # type: ignore[return-value]

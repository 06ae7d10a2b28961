"""Deadline policies, one per module, behind one interface (`base.DeadlinePolicy`): where a
job with a deadline runs next (spot in a zone, on-demand, or nowhere), never later than
on-demand could still finish it. The hindsight optimum belongs to the backtest."""

from __future__ import annotations

from costsched.model import InvalidInput
from costsched.policies.deadline.base import (
    NONE,
    DeadlinePolicy,
    DeadlineState,
    MarketNow,
    keeps_deadline,
)
from costsched.policies.deadline.greedy import Greedy
from costsched.policies.deadline.hedge import SpotHedge
from costsched.policies.deadline.multi_zone import SpotAnywhere
from costsched.policies.deadline.on_demand import OnDemand
from costsched.policies.deadline.spot_risk import SpotRisk
from costsched.policies.deadline.uniform_progress import UniformProgress

DEADLINE_POLICIES: dict[str, type[DeadlinePolicy]] = {
    cls.name: cls for cls in (OnDemand, Greedy, UniformProgress, SpotAnywhere, SpotRisk,
                              SpotHedge)
}


def deadline_policy(name: str) -> DeadlinePolicy:
    """A deadline policy by its registered name."""
    key = name.strip().lower().replace("_", "-")
    if key not in DEADLINE_POLICIES:
        raise InvalidInput(f"deadline policy {name!r}: expected one of "
                           f"{', '.join(DEADLINE_POLICIES)}")
    return DEADLINE_POLICIES[key]()


__all__ = ["DEADLINE_POLICIES", "NONE", "DeadlinePolicy", "DeadlineState", "Greedy",
           "MarketNow", "OnDemand", "SpotAnywhere", "SpotHedge", "SpotRisk", "UniformProgress",
           "deadline_policy", "keeps_deadline"]

"""Placement policies, one per module, behind one interface (`base.Policy`).

A policy sees only a market view as of the decision time (`market.view_from_prices` live
from the store, or a replayed trace's) and returns an offering key; it compares offerings
by the decision model's risk-adjusted expected cost. The ladder: static < +gpu-type <
+multi-gpu < +multi-cloud (each adds choices, all chosen once at the start), then dynamic
and dynamic-aware (re-decide every period). Beside it, cheapest-hourly: a price-only
launcher's choice, the peer baseline. The hindsight oracle belongs to the backtest.
"""

from __future__ import annotations

from costsched.model import InvalidInput
from costsched.policies.base import JOB_SCOPE, ChooseOnce, JobState, Policy, Scope
from costsched.policies.cheapest_hourly import CheapestHourly
from costsched.policies.dynamic import Dynamic
from costsched.policies.dynamic_aware import DynamicAware
from costsched.policies.gpu_type import GpuType
from costsched.policies.market import MarketView, OfferingKey, view_from_prices
from costsched.policies.multi_cloud import MultiCloud
from costsched.policies.multi_gpu import MultiGpu
from costsched.policies.static import Static

POLICIES: dict[str, type[Policy]] = {
    cls.name: cls for cls in (Static, CheapestHourly, GpuType, MultiGpu, MultiCloud, Dynamic,
                              DynamicAware)
}
ALIASES = {"+gpu-type": "gpu-type", "+multi-gpu": "multi-gpu", "+multi-cloud": "multi-cloud",
           "gpu_type": "gpu-type", "multi_gpu": "multi-gpu", "multi_cloud": "multi-cloud",
           "dynamic_aware": "dynamic-aware", "cheapest_hourly": "cheapest-hourly"}


def policy_name(name: str) -> str:
    """The registered name of a policy ('+gpu-type', 'gpu_type' -> 'gpu-type')."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    if key not in POLICIES:
        raise InvalidInput(f"unknown policy {name!r}: expected one of {', '.join(POLICIES)}")
    return key


def make_policy(name: str, scope: Scope | None = None, **options: float) -> Policy:
    """A policy by name; `margin` and `period_hours` (how often it is asked) apply to
    dynamic-aware only. `scope`: the offerings it chooses from instead of its own (live,
    `JOB_SCOPE`: every offering the job's constraints allow)."""
    cls = POLICIES[policy_name(name)]
    if cls is DynamicAware:
        policy: Policy = DynamicAware(**{k: float(v) for k, v in options.items()
                                         if k in ("margin", "period_hours")})
    else:
        policy = cls()
    if scope is not None:
        policy.scope = scope  # type: ignore[misc]  # this instance's, not the class's
    return policy


__all__ = ["JOB_SCOPE", "POLICIES", "CheapestHourly", "ChooseOnce", "Dynamic", "DynamicAware",
           "GpuType",
           "JobState", "MarketView", "MultiCloud", "MultiGpu", "OfferingKey", "Policy", "Scope",
           "Static", "make_policy", "policy_name", "view_from_prices"]

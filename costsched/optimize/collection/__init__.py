"""Placing a collection of jobs at once: one policy per module, shared constraints in
`problem` (Gavel's layout), solved with cvxpy and HiGHS."""

from __future__ import annotations

from costsched.optimize.collection import (
    max_throughput_per_dollar,
    min_cost,
    min_makespan,
    packing,
)
from costsched.optimize.collection.packing import PackingProblem, plan_collection_shared
from costsched.optimize.collection.problem import CollectionPlan, CollectionProblem, diagnose

POLICIES = {
    "cost": min_cost.solve,
    "time": min_makespan.solve,
    "throughput-per-dollar": max_throughput_per_dollar.solve,
}

__all__ = ["POLICIES", "CollectionPlan", "CollectionProblem", "PackingProblem", "diagnose",
           "max_throughput_per_dollar", "min_cost", "min_makespan", "packing",
           "plan_collection_shared"]

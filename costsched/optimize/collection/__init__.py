"""Placing a collection of jobs at once: one policy per module, shared constraints in
`problem` (Gavel's layout), solved with cvxpy and HiGHS."""

from __future__ import annotations

from costsched.optimize import objectives
from costsched.optimize.collection import (
    max_throughput_per_dollar,
    min_cost,
    min_makespan,
    packing,
)
from costsched.optimize.collection.packing import PackingProblem, plan_collection_shared
from costsched.optimize.collection.problem import CollectionPlan, CollectionProblem, diagnose

POLICIES = dict(zip(objectives.COLLECTION, (min_cost.solve, min_makespan.solve,
                                             max_throughput_per_dollar.solve), strict=True))

__all__ = ["POLICIES", "CollectionPlan", "CollectionProblem", "PackingProblem", "diagnose",
           "max_throughput_per_dollar", "min_cost", "min_makespan", "packing",
           "plan_collection_shared"]

"""Rendering a plan on shared instances: which jobs share which instance."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from costsched.amounts import decimals, hours_all, total_as_written, usd
from costsched.cli.common import table

if TYPE_CHECKING:
    from costsched.optimize.collection import CollectionPlan


def instances_table(plan: CollectionPlan) -> Table:
    """One row per instance to rent: its offering, GPUs used and idle, hours, cost, jobs."""
    found = plan.instances
    places = decimals([*found["cost"], plan.total_cost])
    costs = [usd(v, places) for v in found["cost"]]
    total = usd(total_as_written(found["cost"], places), places)  # its rows as they read
    *spans, makespan = hours_all(*found["hours"], plan.makespan_hours)
    rows = [[r.instance, r.offering, f"{r.gpus_used}/{r.gpu_count}", str(r.gpus_idle),
             span, cost, r.jobs]
            for r, span, cost in zip(found.itertuples(), spans, costs, strict=True)]
    shared = int((found["jobs"].str.count(", ") > 0).sum())
    title = (f"Instances ({plan.policy}): {len(rows)} to rent, {shared} shared, total "
             f"{total}, makespan {makespan} h")
    return table(title, ["instance", "offering", "GPUs used", "idle", "hours", "total $",
                         "jobs"], rows)


def instances_json(plan: CollectionPlan) -> list[dict]:
    """The instances as records, each with its jobs as a list."""
    records = plan.instances.drop(columns="offering_index").to_dict("records")
    for r in records:
        r["jobs"] = r["jobs"].split(", ")
    return records

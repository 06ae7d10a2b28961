"""Rendering a plan on shared instances: which jobs share which instance."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.table import Table

from costsched.cli.common import money, table

if TYPE_CHECKING:
    from costsched.optimize.collection import CollectionPlan


def instances_table(plan: CollectionPlan) -> Table:
    """One row per instance to rent: its offering, GPUs used and idle, hours, cost, jobs."""
    rows = [[r.instance, r.offering, f"{r.gpus_used}/{r.gpu_count}", str(r.gpus_idle),
             f"{r.hours:,.2f}", money(r.cost, 2), r.jobs]
            for r in plan.instances.itertuples()]
    shared = int((plan.instances["jobs"].str.count(", ") > 0).sum())
    title = (f"Instances ({plan.policy}): {len(rows)} to rent, {shared} shared, total "
             f"{money(plan.total_cost, 2)}, makespan {plan.makespan_hours:,.2f} h")
    return table(title, ["instance", "offering", "GPUs used", "idle", "hours", "total $",
                         "jobs"], rows)


def instances_json(plan: CollectionPlan) -> list[dict]:
    """The instances as records, each with its jobs as a list."""
    records = plan.instances.drop(columns="offering_index").to_dict("records")
    for r in records:
        r["jobs"] = r["jobs"].split(", ")
    return records

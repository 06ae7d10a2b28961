"""What a job's plan predicted when it was launched, kept so that `costsched report` can
set it beside what the job then did (`costsched.report.estimates`)."""

from __future__ import annotations

from datetime import datetime

import pandas as pd

from costsched.jobspec import ResolvedJob
from costsched.model import InvalidInput
from costsched.optimize.hazard import Evidence
from costsched.optimize.planner import plan_job, prepare
from costsched.passes import memo
from costsched.prices import prices_at
from costsched.store import PriceStore

_MATCH = ["cloud", "region", "instance_type", "market"]


def record_launch(store: PriceStore, job_id: int, resolved: ResolvedJob, at: datetime,
                  rates: Evidence | pd.DataFrame | None = None) -> bool:
    """Keep what the decision model predicts for job `job_id` (just launched) on the
    offering it was placed on at `at`: its hours, cost and preemptions, and the
    throughput it counted on. False when the job has no placement yet, its offering has no
    price now, or a prediction was kept already: a launch never fails for want of one."""
    try:
        return _record(store, job_id, resolved, at, rates)
    except InvalidInput:
        return False


def _record(store: PriceStore, job_id: int, resolved: ResolvedJob, at: datetime,
            rates: Evidence | pd.DataFrame | None) -> bool:
    placed = store.jobs.placements(job_id)
    if placed.empty:
        return False
    first = placed.iloc[0]
    # The offerings a launch ranks (shared with its ranking inside one pass).
    offerings = memo(("prepared", store.url, at),
                     lambda: prepare(prices_at(store, at), rates), shared=True)
    if offerings.empty:
        return False
    ranked = plan_job(resolved, offerings).ranked
    same = (ranked[_MATCH] == first[_MATCH].to_numpy()).all(axis=1)
    same &= ranked["zone"].isin([first["zone"], ""])
    found = ranked[same & ranked["expected_hours"].notna()]
    if found.empty:
        return False
    row = found.sort_values("zone", ascending=False, kind="stable").iloc[0]  # zonal first
    hours = float(row["expected_hours"])
    return store.jobs.predict(job_id, {
        "model": resolved.job.model, "cloud": first["cloud"], "region": first["region"],
        "zone": first["zone"], "instance_type": first["instance_type"],
        "market": first["market"], "gpu_model": first["gpu_model"],
        "gpu_count": int(first["gpu_count"]), "usd_per_hour": float(row["usd_per_hour"]),
        "steps": float(resolved.job.steps),
        "steps_per_second": float(row["steps_per_second"]),
        "throughput_source": str(row.get("throughput_source", "")),
        "expected_hours": hours, "expected_usd": float(row["expected_cost"]),
        "expected_preemptions": float(row["preemptions_per_hour"]) * hours,
    }, at=at)

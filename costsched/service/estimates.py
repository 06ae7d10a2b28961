"""What a job's plan predicted when it was launched, kept so that `costsched report` can
set it beside what the job then did (`costsched.report.estimates`)."""

from __future__ import annotations

from datetime import datetime

from costsched.jobspec import ResolvedJob
from costsched.lazy import pandas as pd
from costsched.model import InvalidInput
from costsched.optimize.hazard import Evidence
from costsched.optimize.planner import plan_job, prepare
from costsched.passes import memo
from costsched.prices import prices_at
from costsched.store import PriceStore

_MATCH = ["cloud", "region", "instance_type", "market"]


def record_launch(store: PriceStore, job_id: int, resolved: ResolvedJob, at: datetime,
                  rates: Evidence | pd.DataFrame | None = None, *,
                  instance: str | None = None, ranked: pd.DataFrame | None = None) -> bool:
    """Keep what the decision model predicts for job `job_id` (just launched) on the
    offering it was placed on at `at` (the placement of `instance`; None: its first): its
    hours, cost and preemptions, and the throughput it counted on. False when the job has
    no such placement, its offering has no price now, or a prediction was kept already: a
    launch never fails for want of one. `ranked`: the job's plan's ranking as of `at`
    where the launch has it (its placement's), else ranked here."""
    try:
        return _record(store, job_id, resolved, at, rates, instance, ranked)
    except InvalidInput:
        return False


def record_landed(store: PriceStore, job_id: int, at: datetime | None,
                  kind: str = "launch") -> bool:
    """Keep the prediction of a job whose move of `kind` landed without one being kept: a
    launch that a costsched resumed after another stopped mid-way ("launch"), or a stopped
    job started again ("start"). The offering is the one the move actually launched,
    the prediction is made as at `at` (None: now) from the job's stored spec. False when
    the job has a prediction already (the first is kept), or its move has not launched."""
    if not store.jobs.predictions([job_id]).empty:
        return False  # read first: the common case plans nothing
    moves = store.moves.of_job(job_id)
    if not moves or moves[-1].kind != kind or not moves[-1].target_instance:
        return False  # its newest move is not that one, or launched nothing yet
    from costsched.service.jobs.decider import market_at
    from costsched.service.jobs.runs import _running
    from costsched.service.values import as_time

    when = as_time(at)
    try:
        resolved = _running(store, job_id).resolved
        rates = market_at(store, when).rates
    except InvalidInput:
        return False
    return record_launch(store, job_id, resolved, when, rates,
                         instance=moves[-1].target_instance)


def _record(store: PriceStore, job_id: int, resolved: ResolvedJob, at: datetime,
            rates: Evidence | pd.DataFrame | None, instance: str | None = None,
            ranked: pd.DataFrame | None = None) -> bool:
    placed = store.jobs.placements(job_id)
    if instance is not None:
        placed = placed[placed["instance"] == instance]
    if placed.empty:
        return False
    first = placed.iloc[0]
    if ranked is None:
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
    # Its training hours (the report's, which leave setup out); its dollars the plan's,
    # its first start included (paid once: `report.estimates` reads it back as the dollars
    # beyond the hours at the price).
    hours = float(row["expected_hours"]) - float(row["start_hours"])
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

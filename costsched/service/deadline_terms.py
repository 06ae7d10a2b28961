"""Which jobs a deadline policy places, which policy by default, and when a job is due: read
by every launch, without the deadline policies' machinery (`service.deadline_jobs`), which
loads only for a job one of them places."""

from __future__ import annotations

from datetime import datetime, timedelta

from costsched.jobspec import ResolvedJob

DEFAULT_DEADLINE_POLICY = "spot-hedge"


def deadline_at(resolved: ResolvedJob, created_at: datetime) -> datetime | None:
    """The job's deadline as a time (relative deadlines count from the job's creation)."""
    if resolved.deadline_at is not None:
        return resolved.deadline_at
    hours = resolved.job.constraints.deadline_hours
    return None if hours is None else created_at + timedelta(hours=float(hours))


def uses_deadline_policy(resolved: ResolvedJob) -> bool:
    """Jobs with a deadline that may use on-demand capacity: the deadline policy places
    them. (A spot-only job cannot fall back to on-demand, so the cost policy places it.)"""
    c = resolved.job.constraints
    return c.deadline_hours is not None and (not c.markets or "on_demand" in c.markets)

"""Budget alarms: jobs that spent most or all of their budget."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from costsched.costs import job_costs
from costsched.service.jobs.runs import _runs
from costsched.service.values import as_time
from costsched.store import PriceStore


@dataclass(frozen=True)
class BudgetAlarm:
    job_id: int
    name: str
    level: str  # "near" (80% or more of the budget spent) or "over"
    spent_usd: float
    budget_usd: float


BUDGET_NEAR = 0.8


def budget_alarms(store: PriceStore, *, at: datetime | str | None = None) -> list[BudgetAlarm]:
    """Jobs that have spent 80% of their budget, or all of it, since they were last alarmed
    at that level: each alarm is raised once per job and level (and logged in its events)."""
    when = as_time(at)
    alarms = []
    frame = store.jobs.list()
    # Only the jobs with a budget are resolved and charged (the stored spec names it).
    budgeted = [] if frame.empty else [
        int(job_id) for job_id, stored in zip(frame["id"], frame["spec"], strict=True)
        if ((stored.get("spec") or {}).get("constraints") or {}).get("budget") is not None]
    runs = _runs(store, budgeted)
    costs = job_costs(store, budgeted, now=when, checkpoint_gb={
        job_id: run.resolved.job.checkpoint_gb for job_id, run in runs.items()},
        nodes={job_id: run.resolved.nodes for job_id, run in runs.items()})
    for job_id, run in runs.items():
        budget = run.resolved.job.constraints.budget_usd
        if budget is None:
            continue
        spent = costs[job_id].total_usd
        level = "over" if spent > budget else "near" if spent >= BUDGET_NEAR * budget else ""
        if not level:
            continue
        raised = store.jobs.events(job_id)
        if ((raised["kind"] == "budget") & raised["detail"].str.startswith(level)).any():
            continue
        store.jobs.note(job_id, "budget", f"{level}: ${spent:,.2f} of ${budget:,.2f}",
                        at=when)
        alarms.append(BudgetAlarm(job_id, run.record.name, level, spent, budget))
    return alarms

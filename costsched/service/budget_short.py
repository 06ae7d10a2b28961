"""A plan refused for its own budget says the budget that launches it, as `launch` reckons
it: 'raise constraints.budget in job.yaml to 0.10' (`own_budget.LaunchFit.enough`: its
pessimistic cost and the watch's charge ahead for its first interval, rounded up), on the
offering the refusal prices (`planner.budget_short`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TypeVar

from costsched import own_budget
from costsched.jobspec import ResolvedJob
from costsched.optimize.no_plan_keys import in_file, key
from costsched.optimize.planner import JobPlan, budget_short, budget_short_said

W = TypeVar("W", bound=ResolvedJob)


def with_budget_raised(plan: JobPlan[W], interval_seconds: float | None = None) -> JobPlan[W]:
    """`plan` with its budget refusal ending in the amount to raise its budget to, by the
    rule and the figures a launch checks it by (`plan.with_budget_risk`: the configured
    watch interval when `interval_seconds` is None); as it was for any other reason."""
    from costsched.service.plan import with_budget_risk

    job, budget = plan.job, plan.job.job.constraints.budget_usd
    row = budget_short(job, plan.ranked) if plan.reason and budget is not None else None
    if row is None or row["excluded"] != "over budget":
        return plan
    said = budget_short_said(job, row)
    if said not in plan.reason:  # refused for something else
        return plan
    risk = with_budget_risk(job, plan.ranked.loc[[row.name]], interval_seconds).iloc[0]
    fit = own_budget.LaunchFit(job.name, own_budget.OWN, float(risk["expected_cost"]),
                               float(risk["pessimistic_cost"]), float(budget),
                               ahead_usd=float(risk["ahead_cost"]))
    amount, digits = fit.enough()
    return replace(plan, reason=plan.reason.replace(
        said, budget_short_said(job, row, f"{amount:.{digits}f}"), 1))


def with_options_said(plan: JobPlan[W], given: Iterable[str]) -> JobPlan[W]:
    """`plan` with the keys its reason names that a command's option gave (`given`: the
    `Constraints` fields `plan --budget` and `--deadline` set) said as that option: 'raise
    --budget to 0.10', not a key of its file, which the option overrides."""
    reason = plan.reason
    for field in given:
        reason = reason.replace(f"{key(plan.job, field)}{in_file(plan.job)}", f"--{field}")
    return plan if reason == plan.reason else replace(plan, reason=reason)

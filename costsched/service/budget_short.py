"""A ranking's budget figures (`with_budget_risk`), and a plan refused for its own budget
saying the budget that launches it, as `launch` reckons it: 'raise constraints.budget in
job.yaml to 0.10' (`own_budget.LaunchFit.enough`: its pessimistic cost and the watch's
charge ahead for its first interval, rounded up), on the offering the refusal prices
(`planner.budget_short`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import TypeVar

from costsched import own_budget
from costsched.config import effective
from costsched.jobspec import ResolvedJob
from costsched.lazy import pandas as pd
from costsched.optimize.no_plan_keys import change, in_file, key
from costsched.optimize.planner import JobPlan, budget_short, budget_short_said

W = TypeVar("W", bound=ResolvedJob)


def with_budget_raised(plan: JobPlan[W], interval_seconds: float | None = None) -> JobPlan[W]:
    """`plan` with its budget refusal ending in the amount to raise its budget to, by the
    rule and the figures a launch checks it by (`with_budget_risk`: the configured
    watch interval when `interval_seconds` is None); as it was for any other reason."""
    job, budget = plan.job, plan.job.job.constraints.budget_usd
    row = budget_short(job, plan.ranked) if plan.reason and budget is not None else None
    if row is None or row["excluded"] != "over budget":
        return plan
    said = budget_short_said(job, row)
    if said not in plan.reason:  # refused for something else
        return plan
    risk = with_budget_risk(job, plan.ranked.loc[[row.name]], interval_seconds).iloc[0]
    fit = launch_fit(job, risk)
    if fit is None:
        return plan
    # The amount is the launch's, not the cost's plus the gap: the figures it holds said
    # before it, in the launch's words ('launch checks a budget by the pessimistic cost ...').
    fix = change(job, ["budget"], "raise")
    checked = f"launch checks a budget by the pessimistic cost {fit.worst_said()}: {fix}"
    return replace(plan, reason=plan.reason.replace(
        said, budget_short_said(job, row, raise_to(fit)).replace(fix, checked, 1), 1))


def launch_fit(job: ResolvedJob, risk: Mapping) -> own_budget.LaunchFit | None:
    """Job `job` on a row of its ranking (`with_budget_risk`'s figures) against its own
    budget, as `launch` checks it (`own_budget.LaunchFit`: its expected and pessimistic
    cost, the watch's charge ahead, and the key that gives it more, as the file writes
    it); None without a budget."""
    budget = job.job.constraints.budget_usd
    if budget is None:
        return None
    return own_budget.LaunchFit(job.name, own_budget.OWN, float(risk["expected_cost"]),
                                float(risk["pessimistic_cost"]), float(budget),
                                fix=f"raise {key(job, 'budget')}{in_file(job)}",
                                ahead_usd=float(risk["ahead_cost"]),
                                ahead_said=str(risk.get("ahead_said", "") or ""))


def raise_to(fit: own_budget.LaunchFit) -> str:
    """The budget that launches `fit`'s job, as its refusal writes it ('0.07':
    `LaunchFit.enough`)."""
    amount, digits = fit.enough()
    return f"{amount:.{digits}f}"


def with_options_said(plan: JobPlan[W], given: Iterable[str]) -> JobPlan[W]:
    """`plan` with the keys its reason names that a command's option gave (`given`: the
    `Constraints` fields `plan --budget` and `--deadline` set) said as that option: 'raise
    --budget to 0.10', not a key of its file, which the option overrides."""
    reason = plan.reason
    for field in given:
        reason = reason.replace(f"{key(plan.job, field)}{in_file(plan.job)}", f"--{field}")
    return plan if reason == plan.reason else replace(plan, reason=reason)


def with_budget_risk(job: ResolvedJob, shown: pd.DataFrame,
                     interval_seconds: float | None = None) -> pd.DataFrame:
    """`shown` (rows of job `job`'s ranking) with each row's pessimistic cost, the figure a
    launch checks its budgets by (`own_budget.pessimistic_usd`), the watch's charge ahead
    for its first interval there (`ahead_cost`, `ahead_said`: `own_budget.charged_ahead`,
    at the row's price over `interval_seconds`, the configured `daemon.watch_seconds` when
    not given, or over its work there where that is shorter) and whether it may not fit
    the job's own budget by the launch's rule
    (`budget_may_not_fit`, `own_budget.LaunchFit.safe`: a launch there asks for --yes, or
    is refused) and whether it does not fit (`budget_does_not_fit`,
    `own_budget.LaunchFit.fits`: a launch there is refused); False without a budget."""
    if interval_seconds is None:
        interval_seconds = effective().daemon.watch_seconds
    worst = [own_budget.pessimistic_usd(job, row) for _, row in shown.iterrows()]
    prices = [float(p) for p in shown["usd_per_hour"]]
    # At most its work there at its speed, as the watch charges it (`charged_ahead`).
    charged = [own_budget.charged_ahead(p, interval_seconds, float(w) * 3600)
               for p, w in zip(prices, shown["work_hours"], strict=True)]
    ahead = [usd for usd, _ in charged]
    fits = [launch_fit(job, {"expected_cost": cost, "pessimistic_cost": pessimistic,
                             "ahead_cost": charge})
            for cost, pessimistic, charge in zip(shown["expected_cost"], worst, ahead, strict=True)]
    risky = [f is not None and not f.safe for f in fits]
    refused = [f is not None and not f.fits for f in fits]
    return shown.assign(pessimistic_cost=pd.Series(worst, index=shown.index, dtype=float),
                        ahead_cost=pd.Series(ahead, index=shown.index, dtype=float),
                        ahead_said=pd.Series([said for _, said in charged],
                                             index=shown.index, dtype=object),
                        budget_may_not_fit=pd.Series(risky, index=shown.index, dtype=bool),
                        budget_does_not_fit=pd.Series(refused, index=shown.index, dtype=bool))

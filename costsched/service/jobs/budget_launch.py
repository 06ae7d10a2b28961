"""At launch: each job's expected cost and a pessimistic one against what is left of each
budget it joins (its own `constraints.budget`, the named budgets of the config).

The expected cost is the decision model's for the offering the job would be placed on:
the figure `plan` shows and checks the budget by, its first start included once
(`own_budget.start_usd`: boot and set-up, warm-up, at that offering's price), which the
line states and itemises as a `start` after a stop states its restart. The pessimistic one
counts preemptions at the 95th percentile (`own_budget.pessimistic_usd`, by which `plan`
flags the offerings whose pessimistic cost may not fit the job's own budget); a budget the
pessimistic cost may overrun asks for --yes (`own_budget.LaunchFit`). Both are checked with
the watch's charge ahead for its first interval added (`own_budget.ahead_usd`: at most the
job's work at its speed there and a second), as the watch's cap, a start's check and a
move's count it: a launch that fits is not stopped at once.
"""
from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import datetime

from costsched import own_budget
from costsched.amounts import stored_price
from costsched.config import BudgetsConfig
from costsched.jobspec import JobSpec, ResolvedJob
from costsched.lazy import pandas as pd
from costsched.migration.launcher import Launcher
from costsched.model import InvalidInput
from costsched.optimize.planner import JobPlan
from costsched.optimize.unmatched_estimates import ESTIMATED_MARK, estimate_said
from costsched.own_budget import LaunchFit
from costsched.policies import OfferingKey
from costsched.rest_cost import RestCost, of_row
from costsched.service.deadline_terms import uses_deadline_policy
from costsched.service.decide import Decision
from costsched.service.jobs.caps import BudgetState, budget_states, joins, named_fix
from costsched.service.jobs.decider import market_at, planned
from costsched.service.jobs.market import pass_table
from costsched.service.jobs.named_offering import picked
from costsched.service.jobs.reasons import label
from costsched.service.jobs.runs import refuse_live_name
from costsched.service.jobs.tried_last import (
    capacity_passed,
    launch_first,
    placed_past,
    tried_last,
)
from costsched.service.jobs.watch_span import watch_span
from costsched.spec_errors import as_written
from costsched.spec_notes import unknown_budget
from costsched.store import PriceStore
from costsched.taskfile import Jobs
from costsched.taskfile import read_jobs as job_specs
from costsched.throughput import ThroughputTable


def left_now(state: BudgetState) -> float:
    """What is left of a budget for a new job: its cap less what was spent and what its
    running jobs are committed to for the next watch interval."""
    return state.usd - state.spent_usd - state.committed_usd


def launch_fits(store: PriceStore, jobs: Jobs, config: BudgetsConfig, at: datetime, *,
                envs: Mapping[str, str] | None = None, interval_seconds: float = 30.0,
                offering: str | None = None, launcher: Launcher | None = None,
                checkpoint_root: str | None = None) -> list[LaunchFit]:
    """Each budgeted job of `jobs` against each budget it joins, with the offering it would
    be placed on now (the plan the launch places it by, `decider.planned`: its first
    choice, or the `offering` the user named; for a job with a deadline, the deadline
    policy's pick as the launch asks it, `first_place.first_placement`, given the
    `launcher`). `launcher` and `checkpoint_root`: the launch's, which keep the job to the
    clouds that can read its checkpoints, as the launch does."""
    # The next interval charged as the watch will charge it (its passes' span when slow).
    configured, interval_seconds = interval_seconds, watch_span(store, interval_seconds, at)
    states = {s.name: s for s in budget_states(store, config, at, interval_seconds)}
    table = None  # read for the first budgeted job: most launches have none
    market = market_at(store, at)
    out = []
    specs = job_specs(jobs, envs=envs)
    for _, spec in specs:  # a launch refused for its name says nothing of its budgets
        if launcher is not None:  # a job of it over, not yet seen so, is closed first
            from costsched.service.jobs.watch import close_ended_named

            close_ended_named(store, launcher, spec.name, at)
        refuse_live_name(store, spec.name)
    for source, spec in specs:
        _check_budget_name(source, spec.name, spec.constraints.budget_name, config)
        stored = {"spec": spec.model_dump(mode="json")}
        wanted = [(f"budget {n}", left_now(states[n]) if n in states else b.usd,
                   named_fix(n, b.period))
                  for n, b in config.named.items() if joins(stored, n, b)]
        if spec.constraints.budget is not None:
            key = as_written("constraints.budget", spec.task.sky)  # costsched.budget in a task
            wanted.insert(0, ("its own budget", spec.constraints.budget,
                              f"raise {key} in {source}"))
        if not wanted:
            continue
        table = table if table is not None else pass_table(store)
        resolved = _as_launched(spec, source, table, at, launcher, checkpoint_root)
        plan = planned(resolved, market, at)
        last = {} if launcher is None else tried_last(market, launcher.name)
        row = _priced_row(plan, offering, last)
        if row is None:
            continue  # the launch itself says why nothing fits
        placed, parts = "", of_row(row)
        if offering is None and launcher is not None:
            row, placed, parts = _placed_row(store, launcher, resolved, plan, row, at, last)
        expected = float(row["expected_cost"])  # the plan's: its first start counted once
        start = own_budget.start_usd(resolved, float(row["usd_per_hour"]))  # (all its nodes)
        pessimistic = own_budget.pessimistic_usd(resolved, row)
        said = own_budget.start_said(resolved)
        # What the watch charges it ahead once it runs, as the watch charges it: at most
        # its rest, its work there at its speed (`own_budget.ahead_seconds`).
        ahead, span = own_budget.charged_ahead(float(row["usd_per_hour"]), interval_seconds,
                                               float(row["work_hours"]) * 3600, configured)
        for name, left, fix in wanted:
            out.append(LaunchFit(spec.name, name, expected, pessimistic, left, fix, start, said,
                                 placed, rests_on(resolved, row), ahead, span, parts))
    return out


def _as_launched(spec: JobSpec, source: str, table: ThroughputTable, at: datetime,
                 launcher: Launcher | None, checkpoint_root: str | None) -> ResolvedJob:
    """The job as the launch places it (`launches.launch_resolved`: the one resolved job of
    the pass), kept to the clouds that can read its checkpoints; without a `launcher`,
    resolved alone, as the configured launcher runs it."""
    if launcher is not None:
        from costsched.service.jobs.launches import launch_resolved

        return launch_resolved(spec, source, table, at, launcher, checkpoint_root)
    from costsched.config import effective
    from costsched.service.resolve import resolve

    return resolve(spec, table, at, source=source, launcher=effective().launch.launcher)


def _placed_row(store: PriceStore, launcher: Launcher, resolved: ResolvedJob,
                plan: JobPlan, first: pd.Series, at: datetime,
                last: Mapping[OfferingKey, str]) -> tuple[pd.Series, str, RestCost | None]:
    """The plan's row of the offering the launch places the job on (the first it tries,
    `first_place.first_placement`: its deadline policy's pick, or past one where a launch
    met no capacity lately, `last`), the line that says so when it is not the plan's first
    (`first`), and the parts of its cost (`rest_cost.of_row`; None for the deadline
    policy's own figure); the plan's own when the launch's decision cannot be asked (the
    launch says why)."""
    from costsched.service.jobs.first_place import first_placement

    try:
        _, decision, candidates = first_placement(store, launcher, resolved, at)
    except InvalidInput:
        return first, "", of_row(first)
    key = tuple(candidates[0]["key"])
    passed = capacity_passed(plan.ranked, tuple(decision.choice), key, last)
    if passed is not None:
        row, choice, why = passed
        return row, f"job {resolved.name}: {placed_past(row, choice, why)}", of_row(row)
    if key[:5] == _key(first)[:5] or not uses_deadline_policy(resolved):
        return first, "", of_row(first)
    rows = plan.ranked[[_key(r)[:5] == key[:5] for _, r in plan.ranked.iterrows()]]
    if rows.empty:  # a list price the plan does not rank: the policy's own expected cost
        cost = float(candidates[0].get("expected_usd", decision.choice_usd))
        price = float(candidates[0]["usd_per_hour"]) * resolved.nodes
        row = first.copy()
        row["usd_per_hour"], row["expected_cost"] = price, cost
        row["work_hours"] = row["expected_hours"] = (cost / price if price > 0 else 0.0)
        row["preemptions_per_hour"] = 0.0 if key[4] == "on_demand" else row.get(
            "preemptions_per_hour", 0.0)
    else:
        row = rows.iloc[0]
    return row, pick_note(resolved.name, label(key), float(row["usd_per_hour"]),
                          str(first["offering"]), float(first["usd_per_hour"]),
                          _why(decision)), (None if rows.empty else of_row(row))


def _why(decision: Decision) -> str:
    """Why the deadline policy is off the plan's spot choice: its decision's own words
    (`DeadlineDecision.why`: a preemption or a capacity error there lately, its rule and
    figures), else its reason."""
    return getattr(decision, "why", "") or decision.reason


def rests_on(resolved: ResolvedJob, row: pd.Series) -> tuple[str, str]:
    """(mark, words) for a launch's figures of `row`: ('', '') where they rest on given
    speeds and work; else the plan's mark and ' (* from an estimated speed on 1xL4: ...)'
    or ' (* for 1 h of work on 1xL4, assumed: ...)', the key that gives the real figure
    named (`unmatched_estimates.estimate_said`, `Work.key`)."""
    mark, words = estimate_said(resolved, row)
    work = resolved.work
    if work is None or not work.assumed:
        return mark, words
    assumed = (f"for {work.hours:g} h of work on {work.on()}, assumed: the work is not "
               f"given; {work.key()} gives it")
    if words:  # ' (* from ...)': one parenthesis, both said
        speed = words.removeprefix(f" ({ESTIMATED_MARK} ").removesuffix(")")
        return mark, f" ({ESTIMATED_MARK} {assumed}; {speed})"
    return ESTIMATED_MARK, f" ({ESTIMATED_MARK} {assumed})"


def pick_note(job: str, placed: str, placed_usd: float, planned_: str, planned_usd: float,
              reason: str) -> str:
    """'job NAME: placed on X at $a/h, not on Y at $b/h (the plan's first choice): why'."""
    return (f"job {job}: placed on {placed} at {stored_price(placed_usd)}/h, not on "
            f"{planned_} at {stored_price(planned_usd)}/h (the plan's first choice): {reason}")


def _key(row: pd.Series) -> tuple[str, ...]:
    return tuple(str(row[k]) for k in ("cloud", "region", "zone", "instance_type", "market"))


def _priced_row(plan: JobPlan, offering: str | None,
                last: Collection[OfferingKey] = ()) -> pd.Series | None:
    """The offering a launch places the job on, as its plan prices it (the `offering`
    named, else the plan's choice); when its own budget leaves it none, the one the plan's
    refusal prices (`budget_short`), past those a launch tries last (`last`, where it
    met no capacity lately: `tried_last.launch_first`): one figure for the line and the
    refusal. None when something else keeps it from running (the launch says what)."""
    if offering is not None:
        return picked(plan.choices, plan.ranked, offering).iloc[0]
    if not plan.choices.empty:
        return plan.choices.iloc[0]
    return launch_first(plan.job, plan.ranked, last)


def _check_budget_name(source: str, job: str, name: str | None,
                       config: BudgetsConfig) -> None:
    """A job that names a budget the configuration does not have would run capped by
    nothing: refused in one line, with the budgets there are and the close one (`plan`
    says the same as a note)."""
    refused = unknown_budget(name, config.named)
    if refused is not None:
        raise InvalidInput(f"{source}: job {job!r}: {refused}")


def refused_fit(fits: list[LaunchFit], yes: bool) -> LaunchFit | None:
    """The first job of a launch its budgets refuse: its expected cost does not fit what
    is left of one, or its pessimistic one may not and the launch was not told `yes`."""
    return next((f for f in fits if not f.fits or (not f.safe and not yes)), None)

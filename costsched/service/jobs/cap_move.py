"""A move at a budget's cap (`at_cap = "move"`): the job moved, under its lease, to the
offering the budget's decider finds to finish it within what is left
(`costsched.service.jobs.caps.enforce` stops it when none does, its stop saying why:
`own_budget.NOT_MOVED`). Such a move is weighed, the same way, from the watch at which its
budget's forecast first passes the cap (`move_ahead`): at the cap itself what is left is
about one watch interval's charge, which no move with its start fits."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from costsched import amounts, launch_secrets, own_budget
from costsched.migration.launcher import Launcher
from costsched.model import InvalidInput
from costsched.optimize.decision import Overheads
from costsched.own_budget import MOVED_AT as MOVED_AT  # (watch's, from here)
from costsched.service.jobs.runs import (
    STEP_LEASE_SECONDS,
    JobEvent,
    RunningJob,
    _open_placement,
)
from costsched.store import PriceStore

if TYPE_CHECKING:
    from costsched.policies import OfferingKey
    from costsched.service.jobs.budget_state import BudgetState
    from costsched.service.jobs.decider import JobNow


def moved_at_cap(detail: str) -> str:
    """The words of a move a budget's cap made (its `MoveRecord.detail`: 'to OFFERING;
    moved at its own budget: ...'), '' for any other move."""
    said = (detail or "").partition("; ")[2]
    return said if said.startswith(MOVED_AT) else ""


def move_ahead(store: PriceStore, launcher: Launcher, state: BudgetState,
               runs: Sequence[RunningJob], at: datetime,
               overheads: Overheads | None = None) -> list[JobEvent]:
    """Of `runs` (running jobs of budget `state` that its cap moves, not stopped at it
    this pass), each whose budget's forecast passes the cap and whose cost to its end here
    does not fit what is left of it (less the other running jobs' claims to their end),
    moved where the budget's decider finds its rest, the move included, fits
    (`move_at_cap`); one no move fits is left running, for its cap to stop it."""
    from costsched.service.jobs.reasons import finish_here
    from costsched.service.jobs.runs import trouble

    if not state.forecast_usd > state.usd:  # (NaN: its forecast cannot be priced)
        return []
    out: list[JobEvent] = []
    for run in runs:
        job_id = run.record.id
        others = [j for j in state.running if j != job_id]
        left = state.usd - state.spent_usd - sum(
            usd for j in others if (usd := state.to_end_usd.get(j, 0.0)) == usd)
        stay = state.to_end_usd.get(job_id, float("nan"))
        if not stay > left or store.jobs.get(job_id).state != "running":
            continue  # staying fits (or its rest is not priced)
        # (What is left is said by the move's own line, at its figures' precision.)
        places = amounts.decimals_kept([state.forecast_usd, stay, state.usd])
        forecast = amounts.usd(state.forecast_usd, places)
        work = state.to_end.get(job_id)  # its rest itemised, where its hours are known
        here = amounts.usd(stay, places) if work is None else work.said(places)
        why = (f"its forecast {forecast} passes the budget of "
               f"{amounts.given(state.usd, places)}: {finish_here(here)}")
        called = own_budget.called(None if state.kind == "job" else state.name)
        try:
            moved = move_at_cap(store, launcher, run, called, why, left, at, overheads)
        except Exception as exc:  # noqa: BLE001 - this job's: the others go on
            out.append(trouble(job_id, exc))
            continue
        if isinstance(moved, JobEvent):
            out.append(moved)
    return out


def move_at_cap(store: PriceStore, launcher: Launcher, run: RunningJob, called: str,
                why: str, left_usd: float, at: datetime,
                overheads: Overheads | None = None) -> JobEvent | str:
    """Under the job's lease, move it where the budget (`called`: 'its own budget',
    'budget NAME') has its decider say it finishes within `left_usd`; else why it is not
    moved, in words its stop says (`not_moved`): no offering fits (the least a move would
    cost, in dollars), or the move cannot start."""
    from costsched.decide.price import per_instance
    from costsched.service.jobs.checkpoint_seen import reported_steps
    from costsched.service.jobs.decider import BudgetDecider, JobNow, label, market_at
    from costsched.service.jobs.steps import (
        _start_migration,
        secret_names,
        steps_left_seen,
    )

    job_id = run.record.id
    with store.leases.holding(f"steps:{job_id}", STEP_LEASE_SECONDS) as mine:
        placement = _open_placement(store, job_id)
        if not mine or placement is None:
            return "it could not be moved now: another pass holds it"
        if any(not m.ended for m in store.moves.of_job(job_id)):
            return "a move of it is under way"
        current: OfferingKey = tuple(placement[k] for k in (  # type: ignore[assignment]
            "cloud", "region", "zone", "instance_type", "market", "os"))
        instance = str(placement["instance"])  # what a move now loses, as it reports it
        seen = reported_steps(launcher, [instance]).get(instance)
        job = paced_so_far(store, run, JobNow.of(run, current,
                                                 steps_left_seen(store, run, seen, at),
                                                 reported=seen))
        try:
            decision = BudgetDecider(left_usd, overheads).decide(job, market_at(store, at),
                                                                 at)
            decision = per_instance(decision, run.nodes)  # as its move records it
        except InvalidInput as exc:
            return f"no move could be priced: {exc}"
        if not decision.moves:
            return decision.reason
        if not launcher.can_launch(decision.offering):
            return (f"the {launcher.name} launcher cannot start {label(decision.choice)}, "
                    f"where a move would finish it within what is left")
        lacking = launch_secrets.missing(job_id, secret_names(run))
        if lacking:  # none here to move it
            return (f"a move to {label(decision.choice)} needs secret "
                    f"{', '.join(lacking)}, which this process's environment lacks")
        detail = f"moved at {called}: {why}; {decision.reason}"
        store.jobs.note(job_id, "budget", detail, at=at)
        _start_migration(store, launcher, run, decision, placement, None, fallbacks=False,
                         why=detail)
    return JobEvent(job_id, "budget", detail, level="warning", notify="budget")


def paced_so_far(store: PriceStore, run: RunningJob, job: JobNow) -> JobNow:
    """`job` (a running job at its cap) with its rest priced as the hint that gives it
    enough once stopped prices it (`start_check.start_places`): while its speed is still being
    measured, at the pace it ran so far where that is slower than its plan's
    (`rest_pace.slower_table`), so that a move's 'to finish there' and that hint's
    'expected for its steps left' on the same offering are one figure; as it is
    otherwise (its measured pace, or its plan's)."""
    from costsched.measured import measuring
    from costsched.service.jobs.rest_pace import slower_table, so_far
    from costsched.service.speeds import job_paces

    record, resolved = run.record, job.resolved
    model = resolved.job.model
    measured = job_paces(store, [record], {record.id: (model, resolved.table)}).get(
        record.id, [])
    if not measuring(measured):
        return job
    table = slower_table(resolved.table, model, measured, so_far(store, record.id))
    return job if table is None else replace(job, resolved=replace(resolved, table=table))

"""A start after a stop, checked against the job's budgets as the watch's cap will hold them
(`caps.enforce`): the offerings it tries when they let it run, else one line that says
which budget refuses it, by how much, and what gives it enough (for its own budget, the
amount, its parts itemised: `stop_line.enough`, its rest in `rest_cost`'s words)."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from costsched import amounts, own_budget
from costsched.amounts import NOISE
from costsched.config import BudgetsConfig
from costsched.measured import measuring
from costsched.migration.launcher import Launcher
from costsched.rest_cost import RestCost
from costsched.service.jobs.caps import BudgetState, _claims, budget_states, named_fix
from costsched.service.jobs.rest_pace import (
    Slower,
    rest_pace,
    slower_pace,
    slower_table,
    so_far,
)
from costsched.service.jobs.runs import nodes_of
from costsched.service.jobs.stop_line import enough, line_places, short_places, spent_places
from costsched.service.jobs.watch_span import watch_span
from costsched.service.speeds import job_paces
from costsched.store import PriceStore
from costsched.vocabulary import offering_label
from costsched.work import own_total

if TYPE_CHECKING:
    from costsched.service.jobs.decider import JobNow


def start_places(store: PriceStore, launcher: Launcher, job: JobNow, at: datetime,
                 config: BudgetsConfig, interval_seconds: float,
                 budget_usd: float | None = None) -> list[dict]:
    """The offerings a start of stopped `job` tries (`decider.place`), its own budget as
    `start --budget` gives it (`budget_usd`) or as it stands. InvalidInput, in one line,
    when a budget would not let it run: its own is less than what it spent, its start
    (`own_budget.start_usd`), its steps left and the watch's charge ahead for its next
    interval together, or a cap would stop it at the first watch (`start_refusal`); for its
    own budget the line names the amount that is enough."""
    from costsched.service.jobs.decider import BudgetShort, placement

    # The next interval charged as the watch will charge it (its passes' span when slow).
    interval_seconds = watch_span(store, interval_seconds, at)
    record = store.jobs.get(int(job.job_id))  # type: ignore[arg-type]
    nodes = nodes_of(record.spec)
    if budget_usd is not None:
        job = replace(job, budget=own_budget.of_job(store, record, at, nodes, usd=budget_usd))
    # Its start is a restart (`JobNow.rest`), which the placement's expected cost counts:
    # its steps left are that cost less it.
    again = job.rest()
    # Its spend at no fewer decimals than its stop's line read it at (`status` joins the
    # hint to that line).
    least = spent_places(store.jobs.last_details([record.id], "state").get(record.id, ""))
    # Its rest at the pace it made (its record's steps and hours) where it made one: a
    # plan's figure the job has disproved would give too little to finish.
    # (Where its speed is measured from its step readings, its plan of the rest is priced
    # at that already: `rest_table`.)
    measured = job_paces(store, [record], {record.id: (job.resolved.job.model,
                                                       job.resolved.table)}).get(record.id, [])
    known = [s.measured_sps for s in measured if s.measured_sps == s.measured_sps]
    # A speed counts by the one rule of a measured speed (`measured.MEASURING`): while it
    # is still being measured (a few steps in a second or two), its rest is priced at its
    # plan's speed, never at a pace of seconds that setup weighs on.
    judging = measuring(measured)
    pace = (own_budget.logged_pace(store, record, at)
            if own_total(record.spec, record.steps_total) is not None and not known
            and not judging else None)
    # How its rest is priced, in words: None at its plan's speed (marked `*`); measured,
    # at the speed the decider priced it with on the offering it would start on.
    logged = pace.said() if pace is not None else None
    # Still being measured, it is priced at the pace its step readings show so far where
    # that is slower than its plan's (a hint errs toward enough), else at its plan's.
    early = (so_far(store, record.id)
             if judging and own_total(record.spec, record.steps_total) is not None else None)
    # Placed at that pace, as a move at its cap weighed it (`cap_move.paced_so_far`): one
    # figure to finish on an offering, the decision model's at that pace.
    planned, slowed = job.resolved.table, slower_table(job.resolved.table,
                                                       job.resolved.job.model, measured, early)
    if slowed is not None:
        job = replace(job, resolved=replace(job.resolved, table=slowed))
        again = job.rest()

    def slower(gpu: tuple[str, int], where: str) -> Slower | None:
        return slower_pace(planned, job.resolved.job.model, measured, early, *gpu, where)

    def paced(gpu: tuple[str, int], where: str) -> str | None:
        if not known:
            late = slower(gpu, where)
            return logged if late is None else late.said
        return rest_pace(job.resolved.table, job.resolved.job.model, record.spec, measured,
                         *gpu, where) or f"its measured {known[0]:,.3g} steps/s"

    def rest_of(planned_usd: float, planned_rest: RestCost | None, per_hour: float,
                steps_left: float, start: float) -> tuple[float, RestCost | None]:
        """Its steps left expected to cost, and that figure's parts where known: at the
        pace it made, its work alone; else as its plan priced them (`planned_usd`, its
        start in it, and its parts, `planned_rest`), less its `start`."""
        if pace is not None:  # (else at its plan's speed, its measured or its slower pace)
            work = RestCost(per_hour, steps_left / (pace.per_second * 3600))
            return work.usd, work
        rest = _less_start(planned_rest, start)
        return (planned_usd - start if rest is None else rest.usd), rest

    try:
        decision, cands = placement(store, job, launcher, at)
    except BudgetShort as short:
        per_hour = short.usd_per_hour  # (all its nodes)
        start = own_budget.start_usd(again, per_hour)
        rest, parts = rest_of(short.expected_usd, short.rest, per_hour, short.steps_left,
                              start)
        # At the pace it made, slower than planned: its refusal says that cost.
        repriced = pace is not None and rest > short.expected_usd - start
        if repriced:
            short = BudgetShort(record.name, short.budget, short.steps_left, short.offering,
                                rest + start, per_hour, gpu=short.gpu,
                                started=short.started)
        # Its cost itemised once in the line: by the hint, where the hint's steps left and
        # start are that cost (its plan's less its start, or repriced at its pace).
        hinted = parts is not None and (pace is None or repriced)
        seconds = own_budget.ahead_seconds(interval_seconds,
                                           own_budget.rest_seconds(rest, per_hour))
        ahead = own_budget.ahead_usd(per_hour, interval_seconds,
                                     own_budget.rest_seconds(rest, per_hour))
        places = short_places(short, rest, start, ahead, least)
        raise own_budget.StartShort(own_budget.Refusal(
            f"job {record.id} ({record.name}) is at its budget: "
            f"{short.said(places, itemised=not hinted)}",
            enough(record.name, short.budget.spent_usd, rest, short.steps_left,
                   start, ahead, own_budget.start_said(again),
                   paced(short.gpu, short.offering), judging, places,
                   seconds, interval_seconds, parts))) from None
    per_hour = float(cands[0]["usd_per_hour"]) * nodes
    start = own_budget.start_usd(again, per_hour)
    gpu = (str(cands[0]["gpu_model"]), int(cands[0]["gpu_count"]))
    where = offering_label(*cands[0]["key"][:5])
    expected = float(cands[0].get("expected_usd", float("nan")))  # (the decision's, there)
    rest, parts = rest_of(expected, decision.rest if expected == expected else None,
                          per_hour, job.steps_left, start)
    why = start_refusal(store, record.id, float(cands[0]["usd_per_hour"]), at, config,
                        interval_seconds, budget_usd=budget_usd, rest_usd=rest, rest=parts,
                        steps_left=job.steps_left, start_usd=start,
                        start_said=own_budget.start_said(again),
                        paced=paced(gpu, where), judging=judging, least=least)
    if why:
        raise own_budget.StartShort(why)
    return cands


def _less_start(planned: RestCost | None, start_usd: float) -> RestCost | None:
    """The parts of a plan's cost (`planned`, its start in it) of its steps left alone,
    where the start it counts is the one a start states (`start_usd`); else None."""
    if planned is None or abs(planned.start_hours * planned.usd_per_hour - start_usd) > NOISE:
        return None
    return planned.without_start()


def start_refusal(store: PriceStore, job_id: int, usd_per_hour: float, at: datetime,
                  config: BudgetsConfig, interval_seconds: float, *,
                  budget_usd: float | None = None, rest_usd: float = float("nan"),
                  steps_left: float = float("nan"), start_usd: float = 0.0,
                  start_said: str = "", paced: str | None = None,
                  judging: bool = False, least: int = 2,
                  rest: RestCost | None = None) -> own_budget.Refusal | None:
    """Why starting stopped job `job_id` again at `usd_per_hour` (each of its nodes) is
    refused: its own budget, as it stands or as `start --budget` gives it (`budget_usd`),
    is less than `enough_usd` (what it spent, its start `start_usd`, its `steps_left`
    expected to cost `rest_usd`, its parts `rest` where known, and the watch's charge ahead
    for its next interval), or a
    named budget's cap would stop it at once (the watch's own check, `enforce`, the job its
    newest); and what gives it enough, its own budget's two halves at one precision
    (`line_places`, no fewer decimals than `least`: those its stop's line read its spend
    at). None when its budgets leave it room."""
    from costsched.service.jobs.decider import budget_verdict

    record = store.jobs.get(job_id)
    nodes = nodes_of(record.spec)
    # Charged ahead as the watch will charge it: at most its rest (`ahead_seconds`).
    rest_seconds = own_budget.rest_seconds(rest_usd, usd_per_hour * nodes)
    seconds = own_budget.ahead_seconds(interval_seconds, rest_seconds)
    ahead = own_budget.ahead_usd(usd_per_hour * nodes, interval_seconds, rest_seconds)
    states = budget_states(store, config, at, interval_seconds)
    if budget_usd is not None:  # its own, as given: it replaces the one it had, if any
        own = own_budget.of_job(store, record, at, nodes, usd=budget_usd)
        assert own is not None  # noqa: S101 - given
        states = [BudgetState(f"job {job_id} ({record.name})", "job", own.usd, "total",
                              own.spent_usd, 0.0, own.spent_usd, (job_id,)),
                  *(s for s in states if not (s.kind == "job" and job_id in s.jobs))]
    for state in states:
        if job_id not in state.jobs:
            continue
        if state.kind == "job":
            charged = state.committed_usd + ahead
            # One precision for the refusal's two halves, from all their amounts.
            places = line_places(state.spent_usd, charged, 0.0, state.usd, rest_usd,
                                 start_usd, charged, least)
            why = _own_short(state.spent_usd, rest_usd, start_usd, charged, state.usd,
                             places)
            if why is None:
                continue
            return own_budget.Refusal(
                f"job {job_id} ({record.name}) is at its budget: {why}",
                enough(record.name, state.spent_usd, rest_usd, steps_left, start_usd,
                       charged, start_said, paced, judging, places,
                       seconds if rest_usd == rest_usd else math.nan, interval_seconds,
                       rest))
        claims = _claims(state, [j for j in state.running if j != job_id])
        why = budget_verdict(state.name, state.spent_usd, state.committed_usd + ahead,
                             state.usd, claims)
        if why is not None:
            return own_budget.Refusal(f"job {job_id} ({record.name}) is at budget "
                                      f"{state.name}: {why}", named_fix(state.name, state.period))
    return None


def _own_short(spent_usd: float, rest_usd: float, start_usd: float, ahead_usd: float,
               cap_usd: float, places: int | None = None) -> str | None:
    """Why a job's own budget `cap_usd` does not let it start again: it is less than
    `enough_usd` (its rest not priced, NaN: than what it spent, its start and the next
    interval), in the watch's words when the watch would stop it at once (at `places`,
    its line's precision); or None."""
    from costsched.service.jobs.decider import budget_verdict

    known = rest_usd == rest_usd
    if not own_budget.passes([spent_usd, rest_usd if known else 0.0, start_usd, ahead_usd],
                             cap_usd):
        return None
    return budget_verdict("", spent_usd, ahead_usd, cap_usd, places=places) or (
        f"its budget of {amounts.given(cap_usd)} is less than it needs to start"
        + (" and finish" if known else ""))

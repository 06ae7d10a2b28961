"""What the views show of the service's results, in one place for the CLI's `--json` and
the dashboard's JSON API: the documents of `status`, `migrate`, `stop` and `report`, the
JSON encoding of their values, and the launcher that answers for a store's jobs.

Light on import (pandas, the store and the launchers load when a function needs them):
the CLI's quick commands import this module.
"""

from __future__ import annotations

import json
import math
import sys
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from costsched.amounts import exact_money
from costsched.step_share import percent_down
from costsched.work import share_key

if TYPE_CHECKING:
    from collections.abc import Mapping

    import pandas as pd

    from costsched.report import Report
    from costsched.service.jobs import JobStatus, MigrationAdvice
    from costsched.service.jobs.caps import BudgetState
    from costsched.store import PriceStore
    from costsched.store.decisions import StoredDecision
    from costsched.store.jobs import JobRecord
    from costsched.work import Work

PLACEMENT_FIELDS = ("cloud", "region", "zone", "instance_type", "market", "usd_per_hour",
                    "instance", "start_at")


def due_hours(due: datetime, now: datetime, final: bool, state: str = "",
              ended_at: datetime | None = None) -> float | None:
    """The hours `due_words` says: to the deadline (less than 0: since it passed), or how
    early a job that ended did (less than 0: how late); None for a job that ended at a
    time not known (a stopped job whose deadline is ahead: to it, as for a job that runs)."""
    if final and not _stopped_before(due, now, state):
        return None if ended_at is None else (due - ended_at).total_seconds() / 3600
    return (due - now).total_seconds() / 3600


def _stopped_before(due: datetime, now: datetime, state: str) -> bool:
    """Whether a job in `state` is stopped (`costsched start` starts it again) before its
    deadline: it is still due, not 'was due'."""
    return state == "stopped" and due > now


def due_words(due: datetime, now: datetime, final: bool, state: str = "",
              ended_at: datetime | None = None, places: int | None = None,
              short: bool = False) -> str:
    """When a job with a deadline is due, as `status` and the dashboard say it: 'due
    2026-12-01 10:00 UTC (in 5.20 h)', or how long ago it passed; a job that ended says
    when it was due ('due' while the deadline is ahead) and how it ended against it
    (`state`, at `ended_at`): one that succeeded whether it met the deadline, one that
    exited 0 short of its declared steps (`short`: `work.ended_short`) or failed or was
    stopped only when it ended, its work not done; a stopped job whose deadline is ahead
    is still due.
    `places`: the decimals of the hours read beside it (its own by default)."""
    from costsched.amounts import hours

    said = f"due {due:%Y-%m-%d %H:%M} UTC"
    span = due_hours(due, now, final, state, ended_at)
    ended = final and not _stopped_before(due, now, state)
    was = f"was {said}" if due <= now else said  # a deadline still ahead is due, not was
    # A job that ended with its work not done met no deadline: how it ended comes first,
    # then its deadline ('it failed with 2.00 h left before its deadline (...)', 'it
    # failed 1.00 h after its deadline'), in any tense.
    how = "ended" if state == "succeeded" else _ENDED.get(state, "ended")
    not_done = ended and (state != "succeeded" or short)
    if span is None:
        return (f"it {how} (deadline {due:%Y-%m-%d %H:%M} UTC)"
                f"{NOT_REACHED if short else ''}" if not_done and (
                    short or state in _ENDED) else was)
    shown = hours(abs(span), places)
    side = "before" if span >= 0 else "after"
    if ended and not not_done:
        return (f"{was}: met, it finished {shown} h before" if span >= 0 else
                f"{was}: missed, it finished {shown} h after")
    if not_done:
        when = f"with {shown} h left before" if side == "before" else f"{shown} h after"
        return (f"it {how} {when} its deadline ({due:%Y-%m-%d %H:%M} UTC)"
                f"{NOT_REACHED if state == 'succeeded' else ''}")
    return f"{said} (in {shown} h)" if span >= 0 else f"{said} (passed {shown} h ago)"


# What the deadline line of a job that exited 0 short of its declared steps ends with (a
# page that says the steps not reached beside it leaves it out: said once).
NOT_REACHED = ", its declared steps not reached"
# How a job that ended other than by succeeding ended, against its deadline.
_ENDED = {"failed": "failed", "stopped": "was stopped"}


def json_default(value: Any) -> Any:
    """How a value JSON has no type for is written: times as ISO 8601 in UTC ('Z'),
    numpy scalars as numbers."""
    if isinstance(value, datetime):  # pandas' Timestamp too
        return value.isoformat().replace("+00:00", "Z")
    if hasattr(value, "item"):  # numpy scalars
        return value.item()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


def dumps(data: Any) -> str:
    """`data` as compact JSON, encoded as `--json` encodes it."""
    return json.dumps(data, default=json_default, separators=(",", ":"))


def frame_records(frame: pd.DataFrame) -> list[dict]:
    """Records of a frame with NaN as null, for JSON."""
    return json_records(frame.to_dict("records"))


def json_records(records: list[dict]) -> list[dict]:
    """`records` with NaN as null, for JSON."""
    return [{k: (None if _is_missing(v) else v) for k, v in row.items()} for row in records]


def _is_missing(value: Any) -> bool:
    """NaN, NaT or None, but not lists and other containers."""
    if value is None or isinstance(value, (list, tuple, dict, str)):
        return value is None
    if "pandas" in sys.modules:  # its NaT and NA, numpy's NaN and NaT: none without it
        import pandas as pd

        return bool(pd.isna(value))
    return isinstance(value, float) and math.isnan(value)


def finite(value: Any) -> Any:
    """`value` with every NaN or infinite number made null: JSON has no such numbers."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value


def job_launcher(store: PriceStore, job: int | str | None) -> Any:
    """The launcher of `job` (or of the store's jobs: local unless they all say otherwise),
    with this machine's defaults (local instances under $COSTSCHED_INSTANCES, else the user
    data directory; cloud launchers with their SDK's credentials)."""
    from costsched.service.jobs import job_ids
    from launchers import make_launcher

    if job is None:
        names = {r.spec.get("launcher", "local") for r in store.jobs.records()}
        return make_launcher(names.pop() if len(names) == 1 else "local")
    job_id = job_ids(store, job, states=())[0]
    return make_launcher(store.jobs.get(job_id).spec.get("launcher", "local"))


def status_document(shown: list[JobStatus], scheduled: list[Any] | None = None,
                    budgets: list[BudgetState] | None = None,
                    held: list[Any] | None = None) -> list[dict] | dict:
    """`status --json`: the jobs, and with `scheduled` (costsched.daemon.status) the
    scheduled optimizer's tasks as {"jobs": [...], "daemon": [...]}, with `budgets` each
    budget now under "budgets" (`budgets_document`), with `held` the capacity paid for
    that no job shown uses under "held_bookings" (`costsched.service.booking.held_unused`)."""
    from costsched.costs import charged_records
    from costsched.service.jobs import over_cap
    from costsched.service.speeds import status_flags, status_rests

    flags = status_flags(shown)  # measured speed far from the plan's: {job id: words}
    rests = status_rests(shown)  # the speed the rest of each running job is priced at
    charged = charged_records(s.cost for s in shown)  # not a frame per job
    jobs = [finite(exact_money(_job(s, flags.get(s.record.id), charged[s.cost.job_id],
                                    rests.get(s.record.id)))) for s in shown]
    for s, job in zip(shown, jobs, strict=True):  # its budget's forecast past its cap
        job["over_cap"] = over_cap.of_status(s, budgets) or None
    if scheduled is None and budgets is None:
        return jobs
    out: dict = {"jobs": jobs}
    if scheduled is not None:
        out["daemon"] = [{
            "task": t.task, "next_run": t.next_run,
            "last": None if t.last is None else _run(t.last),
            "failures": [_run(f) for f in t.failures]} for t in scheduled]
    if budgets is not None:
        out["budgets"] = budgets_document(budgets)
    if held is not None:
        from costsched.service.booking import held_document

        out["held_bookings"] = held_document(held)
    out["costs_note"] = costs_note(shown)
    return exact_money(out)  # type: ignore[return-value]


def costs_note(shown: list[JobStatus], now: datetime | None = None) -> str:
    """What `status` notes under its jobs' costs where a price they are charged at is older
    than `prices.stale_after` (`staleness.charges_note`: estimates, the oldest price's
    age, and what brings newer ones); '' when none is."""
    from costsched.service.staleness import charges_note

    return charges_note([s.cost for s in shown], now or datetime.now(timezone.utc),
                        "the costs above")


def budgets_document(states: list[BudgetState]) -> list[dict]:
    """Each budget now (`caps.budgets_now`): its cap and period, what its jobs spent in the
    period, what its running jobs are charged ahead for the next watch interval
    (`committed_usd`), the forecast to the end of its running jobs, its jobs, those running
    and those a stop at its cap ended, and what each job spent."""
    return [finite({
        "name": s.name, "kind": s.kind, "period": s.period, "usd": s.usd,
        "spent_usd": s.spent_usd, "committed_usd": s.committed_usd,
        "forecast_usd": s.forecast_usd, "left_usd": s.left_usd, "used": s.used,
        "jobs": list(s.jobs), "running": list(s.running), "stopped": list(s.stopped),
        "spent_by_job": {str(j): usd for j, usd in s.spent_by_job.items()},
    }) for s in states]


def progress_words(progress: float | None, source: str | None, *,
                   live: bool = False, step: float | None = None, setup: bool = False) -> str:
    """A job's progress as every view writes it (`status`, the dashboard: `job_progress`):
    '42%' (the step it reported, or the one it resumed from after a recovery or a start:
    its newest checkpoint's, '0%' with none), 'step 1,595' (the step it reported, of work
    whose total is not known), 'in setup' (a live job whose instance reports its setup
    running: `setup`), 'no step yet' (a live job that has reported none: writing none, or
    on an instance that does not say it is in setup), '-' (not known). Never a percentage
    guessed from the hours it ran. Rounded down, never up to a step it has not reached:
    short of its end, past 99% it keeps a decimal ('99.6%' at 2,492 of 2,500 steps, never
    '100%')."""
    if progress is not None and source == "reported":
        return percent_down(progress)  # the report's share done reads so too
    if step:
        return f"step {step:,.0f}"
    if live and setup:
        from costsched.service.setup_phase import IN_SETUP

        return IN_SETUP
    return "no step yet" if live else "-"


def job_progress(job: Mapping[str, Any]) -> str:
    """`progress_words` of a job as `status --json` gives it (the dashboard's)."""
    from costsched.model import SHOWN_FINAL

    return progress_words(job.get("progress"), job.get("progress_source"),
                          live=job.get("state") not in SHOWN_FINAL, step=job.get("step"),
                          setup=bool(job.get("in_setup"))
                          or job.get("setup_since") is not None)


def _job(s: JobStatus, throughput_flag: str | None, charged: list[dict],
         rest: dict | None = None) -> dict:
    from costsched.service.jobs.recovered import resumed_of

    return {
        # One state beside its instance's: a running job whose instance ended reads what
        # the next pass makes of it (`vocabulary.job_state`).
        "id": s.record.id, "name": s.record.name,
        "state": s.shown_state,
        "instance_state": s.instance_state or None, "nodes": s.nodes,
        "placement": None if s.open_placement is None else {
            k: s.open_placement[k] for k in PLACEMENT_FIELDS},
        "deadline_at": None if s.due is None else s.due.isoformat(),
        "ended_at": s.record.updated_at.isoformat() if s.record.final else None,
        # Its total and steps left in its own steps (null where they are not: its work
        # not given, or given as hours on a reference GPU; `progress_note` says why).
        "steps_total": s.own_total,
        "steps_left": None if s.own_total is None else s.steps_left, "step": s.step,
        # The last step it reported: null where it reported none.
        "reported_step": s.shown_reported_step, "resumes": s.resumes or None,
        # A job that exited 0 short of its declared steps: that, in words (else null).
        "steps_not_reached": s.steps_not_reached or None,
        # One that exited 0 having reported no step: that its share done is not known.
        "steps_not_reported": s.steps_not_reported or None,
        # One that reported more steps than it declares: that, and the key declaring them.
        "steps_past": s.steps_past or None,
        # The steps each recovery lost, as its log keeps them (`steps.resume_from`), seen
        # `at`; `waiting`: its recovery waits to start (a secret), else it `began_at`.
        "recovered": [recovered_of(e, s) for e in s.recovered],
        # Its restarts after its own errors (max_restarts_on_errors), a line each.
        "restarted": [{"at": e.at.isoformat(), "said": e.detail} for e in s.restarted],
        # The step each migration resumed it from, once its source stopped (`moved`).
        "moved": [{"at": e.at.isoformat(), "said": e.detail} for e in _moved(s)],
        "progress": s.progress, "progress_source": s.progress_source,
        # Its measured speed (`measured.shown_speed`), or why it has none (else null).
        "steps_per_second": s.pace, "progress_note": share_key(s.record.spec) or None,
        # While its instance runs its setup (as the instance reports): when it began and
        # for how long it has run at this look (null for a job past setup).
        **_in_setup(s.setup_since),
        "in_setup": s.in_setup,  # its setup not ended (`setup_phase.in_setup`)
        "speed_note": None if s.speed is None or s.pace is not None else s.speed.words,
        "failure": None if s.failure is None else {
            "exit_code": s.failure.exit_code, "phase": s.failure.phase or None,
            "detail": s.failure.detail, "log_tail": s.failure.log_tail,
            # a gang's node whose failure ended it (`log_tail` is its output); null: rank 0's
            "node": s.failure.node,
            # the step `start` resumes it from (null: not known), read off the time its
            # checkpoint was saved or not
            "resumes_at": s.failure.resumes_at, "resumes_inferred": s.failure.resumes_inferred},
        "checkpoint_error": s.checkpoint_error or None,
        # Its command ran a minute past its setup with no step reported: the line saying
        # where to write it and what its figures assume meanwhile (else null).
        "no_step": s.no_step or None,
        "waits": s.waits or None, "trouble": s.trouble or None,
        "cost_usd": s.cost.total_usd,
        "compute_usd": s.cost.compute_usd, "egress_usd": s.cost.egress_usd,
        "placements": json_records(charged),
        # (`resumed`: where a start or a recovery resumed it from, as `status` says it)
        "moves": [{"id": m.id, "kind": m.kind, "state": m.state,
                   "resumed": resumed_of(m, s.recovered) or None} for m in s.moves],
        # Recoveries after a preemption: recovery moves, and a gang's nodes replaced in
        # place (each with when and what was done).
        "recoveries": s.recoveries,
        # (`stopped_first`: the job was stopped before its gang resumed: not counted)
        "node_recoveries": [{"at": e.at.isoformat().replace("+00:00", "Z"),
                             "detail": e.detail, "stopped_first": e.id in s.stopped_first}
                            for e in s.node_recoveries],
        # A gang's nodes its instance says are lost now (not training until replaced).
        "nodes_lost": list(s.nodes_out),
        "next": s.next or None, "decision": decision_document(s.decision),
        "throughput_flag": throughput_flag,
        # A running job's rest: the speed it is priced at ("measured" or "planned"), and
        # why it cannot be priced when it reported more steps than it declares.
        "rest": rest,
        "work_assumed": None if s.assumed_work is None else s.assumed_work.as_dict(),
        "booked_usd": s.booked_usd, "instance_detail": s.instance_detail or None,
        "bookings": [{"market": b.booked.offering.market, "state": b.state,
                      "offering_id": b.booked.offering_id,
                      "reservation_id": b.reservation_id or None,
                      "instance_type": b.booked.offering.instance_type,
                      "zone": b.booked.offering.zone, "start": b.booked.start,
                      "end": b.booked.end, "upfront_usd": b.booked.upfront_usd,
                      "detail": b.detail or None} for b in s.bookings],
    }


def _in_setup(since: datetime | None) -> dict:
    """"setup_since" and "setup_seconds" of a job in setup (`setup_phase`), else nulls."""
    if since is None:
        return {"setup_since": None, "setup_seconds": None}
    from costsched.service.setup_phase import setup_seconds

    return {"setup_since": since.isoformat().replace("+00:00", "Z"),
            "setup_seconds": round(setup_seconds(since), 1)}


def _moved(s: JobStatus) -> list[Any]:
    from costsched.service.jobs.moved import went_ahead

    return went_ahead(s.moved, s.moves)


def recovered_of(note: Any, s: JobStatus) -> dict:
    """One of `s.recovered` in --json: seen `at`, its words (`said`), whether its recovery
    waits to start (`waiting`) and, once under way, when it began (`began_at`)."""
    from costsched.service.jobs.recovered import began, gang_moved, said_of, waiting
    from costsched.service.jobs.resumed_words import inferred

    waits = waiting(note, s.moves)
    placed = [c.placement for c in s.cost.charged]
    start = None if waits else began(note, placed)
    return {"at": note.at.isoformat(),
            # a gang's: what ended it, its node not replaced where it ran, and where it went
            "said": said_of(note, gang_moved(note, s.gangs_ended, placed), s.moves, waits),
            "waiting": waits,
            "began_at": None if start is None else start.isoformat(),
            # the step it resumes from read off the time its checkpoint was saved: 'about'
            "step_inferred": inferred(str(note.detail))}


def decision_document(decision: StoredDecision | None) -> dict | None:
    """The decider's latest decision on a job where it runs now (`JobStatus.decision`):
    when, by whom, whether it moves and where, the dollars of the rest of the job staying
    and moving, the move it started, and why; None before one."""
    if decision is None:
        return None
    return {"decided_at": decision.decided_at, "decided_by": decision.decided_by,
            "moves": decision.moves, "choice": decision.choice or None,
            "stay_usd": decision.stay_usd, "move_usd": decision.move_usd,
            "move_id": decision.move_id, "reason": decision.reason}


def decided_words(decision: StoredDecision, now: datetime) -> str:
    """When and by whom a decision was made, as `status` says it: 'decided 09:30 UTC by
    the supervisor' (a date too when not today)."""
    at = decision.decided_at
    when = f"{at:%H:%M} UTC" if at.date() == now.date() else f"{at:%Y-%m-%d %H:%M} UTC"
    return f"decided {when} by {decision.decided_by}"


def _run(run: Any) -> dict:
    return {"status": run.status, "started_at": run.started_at,
            "finished_at": run.finished_at, "holder": run.holder, "detail": run.detail}


def assumed_works(store: PriceStore, advice: list[MigrationAdvice]) -> dict[int, Work]:
    """Per job of `advice` whose work is assumed (a task that gives none), that work: its
    dollars rest on it."""
    from costsched.work import assumed_work

    found = {a.job_id: assumed_work(store.jobs.get(a.job_id).spec) for a in advice}
    return {j: w for j, w in found.items() if w is not None}


def unreported_totals(store: PriceStore, advice: list[MigrationAdvice]) -> dict[int, float]:
    """Per running job of `advice` that has reported no step, 0 included, its rest priced
    as all of its own steps (`runs.all_steps_left`): those steps, which its figures assume
    none of done (`no_step.priced_unreported`)."""
    from costsched.service.jobs.runs import _runs, all_steps_left

    runs = _runs(store, [a.job_id for a in advice], states=["running"])
    said = {int(row[1]) for row in store.jobs.reading_rows(list(runs))} if runs else set()
    totals = {job_id: all_steps_left(run, run.record.steps_done, job_id in said)
              for job_id, run in runs.items()}
    return {job_id: total for job_id, total in totals.items() if total is not None}


def advice_document(advice: list[MigrationAdvice],
                    ages: dict[int, dict[str, float | None]],
                    works: dict[int, Work] | None = None,
                    unreported: dict[int, float] | None = None) -> list[dict]:
    """`migrate --json`: per job, what the policy decided, in dollars, the age in hours
    of the prices it compared (`price_ages`), the assumed work they rest on (`works`) and,
    for a job that has reported no step, that they assume none of its steps done
    (`unreported_totals`)."""
    from costsched.service.no_step import priced_unreported

    works, unreported = works or {}, unreported or {}
    return [exact_money({"job_id": a.job_id, "name": a.name, "moves": a.decision.moves,
             "current": list(a.decision.current or []), "choice": list(a.decision.choice),
             "stay_usd": finite(a.stay_usd), "move_usd": finite(a.move_usd),
             "started": a.started is not None, "held_back": a.held_back or None,
             "reason": a.reason,
             "move_price": (None if a.decision.move is None else
                            {k: finite(v) for k, v in a.decision.move.as_dict().items()}),
             "price_age_hours": ages.get(a.job_id), "left_out": list(a.left_out),
             "work_assumed": works[a.job_id].as_dict() if a.job_id in works else None,
             "no_step": priced_unreported(unreported[a.job_id])
             if a.job_id in unreported else None})
            for a in advice]


def price_ages(store: PriceStore, advice: list[MigrationAdvice]
               ) -> dict[int, dict[str, float | None]]:
    """Per job, the age in hours of the prices its decision compared (where it is and
    where the policy would put it)."""
    if not advice:
        return {}
    from costsched.service.staleness import OFFERING_COLUMNS, age_hours, offering_prices

    at = advice[0].decision.at
    keys = {k for a in advice for k in (a.decision.current, a.decision.choice) if k}
    frame = offering_prices(store, keys, at)
    hours = dict(zip(map(tuple, frame[OFFERING_COLUMNS].itertuples(index=False)),
                     age_hours(frame["effective_at"], at).round(1), strict=True))
    return {a.job_id: {"current": hours.get(tuple(a.decision.current or ())),
                       "choice": hours.get(tuple(a.decision.choice))} for a in advice}


def record_document(record: JobRecord) -> dict:
    """`stop --json`: the job and the state it is in now."""
    return {"id": record.id, "name": record.name, "state": record.state}


def report_document(built: Report, budgets: list[BudgetState] | None = None) -> dict:
    """`report --json`: the period, the totals and each of the report's tables (every one
    its text and HTML show, `report.tables.TABLES`, by name); with `budgets`, each budget
    now under "budgets_now" (`budgets_document`)."""
    out = built.document()  # from the report's rows: no frame is built for it
    if budgets is not None:
        out["budgets_now"] = budgets_document(budgets)
    return exact_money(out)  # type: ignore[return-value]

"""`costsched plan --json`: the plan as one JSON document, written piece by piece, with
every table, field, note and warning the text shows; and what the text and the JSON both
read of it (the jobs that share a ranking, a job's notes)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from costsched.cli import plan_figures as figures
from costsched.cli.common import frame_record_stream, frame_records
from costsched.cli.plan_placed import placement_json
from costsched.cli.said import Said, as_json
from costsched.optimize.quotas import quota_cost
from costsched.service.jobs.tried_last import rows_tried_last

if TYPE_CHECKING:
    import pandas as pd

    from costsched.optimize.planner import JobPlan
    from costsched.service import PlanResult
    from costsched.service.plan_interval import Interval


JSON_INDENTED_UP_TO = 100  # jobs; a larger plan's JSON is compact, one item per line


def plan_json(result: PlanResult, top: int, stale_after: float,
              messages: Iterable[Said] = ()) -> dict:
    """The plan as one JSON document whose lists are generators (stream_json writes them
    piece by piece). Jobs that share a ranking (a sweep's identical jobs) share one entry
    of "rankings", which lists them; each job names it by "ranking_index". `messages`:
    the warnings and notes the plan says on stderr (`cli.said`), under "messages"."""
    from costsched.optimize.left_out_words import counted_reasons
    from costsched.optimize.planner import superseded_offerings
    from costsched.service.budget_short import with_budget_risk
    from costsched.service.staleness import age_hours, stale

    columns = ["offering", "cloud", "region", "zone", "instance_type", "market", "gpu_model",
               "gpu_count", "nodes", "usd_per_hour", "steps_per_second", "throughput_estimated",
               "throughput_source", "preemptions_per_hour", "preemption_basis", "work_hours",
               "start_hours", "start_cost", "expected_hours", "expected_cost",
               "vs_on_demand_v100", "pessimistic_cost", "budget_may_not_fit",
               "budget_does_not_fit"]
    quota_columns = ["quota", "quota_code", "quota_name", "quota_scope", "quota_unit",
                     "quota_limit", "quota_used", "quota_instances", "quota_observed_at"]
    shared = groups(result)
    index_of = {m: g for g, members in enumerate(shared) for m in members}

    def rankings() -> Iterator[dict]:
        for members in shared:
            p = result.jobs[members[0]]
            shown = with_budget_risk(p.job, result.ranking(members[0]).head(top))
            old = stale(shown, result.at, stale_after)
            per_work_hour = figures.per_work_hour(shown, p.job.work)
            extra = {} if per_work_hour is None else {"usd_per_work_hour": per_work_hour}
            yield {
                "jobs": [result.jobs[m].job.name for m in members],
                "ranking": figures.json_rows(frame_records(shown[[*columns, *(
                    c for c in quota_columns if c in shown)]].assign(
                    price_effective_at=shown["effective_at"],
                    price_age_hours=age_hours(shown["effective_at"], result.at).round(1),
                    price_stale=figures.stale_rows(shown, result.at, stale_after),
                    preemption_rate_assumed=figures.rates_assumed(shown),
                    **extra)), p.job.work),
                "stale_prices": 0 if old is None else old.count,
                "excluded": counted_reasons(p.job, p.ranked["excluded"]),
                "superseded": superseded_offerings(p),
                "quota_cost": _quota_cost_json(p.ranked)}

    from costsched.own_budget import start_words

    def jobs() -> Iterator[dict]:
        for i, p in enumerate(result.jobs):
            b, assumed = p.baseline, p.job.work is not None and p.job.work.assumed
            work = None if p.job.work is None else p.job.work.as_dict()
            yield {  # assumed work: no steps, nor the baseline's figures of its hour
                "name": p.job.name, "model": p.job.model_name,
                "steps": None if assumed else p.job.job.steps,
                "source": p.job.source,
                "deadline_hours": p.job.job.constraints.deadline_hours,
                "budget_usd": p.job.job.constraints.budget_usd,
                "reason": p.reason or None,
                "work": work,
                # as status and migrate name it: the work when it is assumed, else null
                "work_assumed": work if assumed else None,
                "notes": job_notes(p), "passed_over": [o.as_dict() for o in p.passed_over],
                "start_hours": p.job.start_hours, "start": start_words(p.job),
                **_interval_json(result.interval(i)),
                "baseline": None if b is None else {
                    "basis": b.basis, "usd_per_hour": b.usd_per_hour,
                    "hours": None if assumed else b.hours,
                    "cost": None if assumed else b.cost, "estimated": b.estimated,
                    **({"usd_per_work_hour": b.cost / (p.job.work.hours or 1.0),
                        "assumed": {"hours": b.hours, "cost": b.cost}} if assumed else {})},
                "ranking_index": index_of[i],
                "booked": (result.booked[i].as_dict(result.at)
                           if result.booked and result.booked[i] is not None else None),
                "launch_placement": placement_json(result.launch_of(i)),
                # the offerings its launch tries after the others, and why (rank in the ranking)
                "tried_last": tried(i),
            }

    tried_of: dict[int, list[dict]] = {}  # by ranking: a sweep's identical jobs share one

    def tried(i: int) -> list[dict]:
        if not result.tried_last:
            return []
        at = index_of[i]
        if at not in tried_of:
            tried_of[at] = [{"rank": n, "offering": o, "why": why} for n, o, why
                            in rows_tried_last(result.ranking(i), result.tried_last)]
        return tried_of[at]

    out: dict = {"at": result.at, "objective": result.objective,
                 "stale_after_hours": stale_after, "quota_note": result.quota_note or None,
                 "messages": as_json(messages),
                 "rankings": rankings(), "jobs": jobs(), "collection": None}
    collection = result.collection
    if collection is not None:
        from costsched.cli.packing import instances_json

        out["collection"] = {
            "policy": collection.policy, "status": collection.status,
            "reasons": collection.reasons, "total_cost": _number(collection.total_cost),
            "makespan_hours": _number(collection.makespan_hours),
            "objective": _number(collection.objective),
            "solver": collection.solver, "solve_seconds": collection.solve_seconds,
            "assignment": frame_record_stream(
                collection.assignment.drop(columns="offering_index")),
            "instances": None if collection.instances is None else instances_json(collection),
        }
    return out


def _interval_json(interval: Interval | None) -> dict:
    """A job's checkpoint interval in --json, and whether it is costsched's default."""
    if interval is None:
        return {}
    return {"checkpoint_interval_hours": interval.hours,
            "checkpoint_interval_assumed": interval.assumed}


def _number(value: float) -> float | None:
    return None if value != value else float(value)


def groups(result: PlanResult) -> list[list[int]]:
    """Indices of the jobs that share one ranking (identical but for name and envs)."""
    groups: dict[int, list[int]] = {}
    for i, p in enumerate(result.jobs):
        groups.setdefault(id(p.ranked), []).append(i)
    return list(groups.values())


def job_notes(p: JobPlan) -> list[str]:
    """A job's notes, in the text and in --json alike: the task's, the plan's, its
    `ordered:` alternatives passed over (each said once) and what its order costs."""
    from costsched.optimize.planner import order_cost
    from costsched.optimize.unmatched_order import unsaid

    steps_estimated = figures.work_estimated(p.job)
    cost = order_cost(p, lambda row: figures.ESTIMATED_MARK
                      if steps_estimated or bool(row["throughput_estimated"]) else "")
    return [*map(_checkpoint_root_said, unsaid(p.job.notes, p.passed_over)), *p.notes,
            *(o.line() for o in p.passed_over), *filter(None, [cost])]


def _checkpoint_root_said(note: str) -> str:
    """A task's note with the checkpoint root (costsched.skypilot.CHECKPOINT_ROOT) said as
    the launch's configuration has it."""
    from costsched.skypilot import CHECKPOINT_ROOT

    if CHECKPOINT_ROOT not in note:
        return note
    from costsched.config import effective
    from costsched.service.jobs.carry import root_said

    return note.replace(CHECKPOINT_ROOT, root_said(effective().launch.checkpoint_root))


def _quota_cost_json(ranked: pd.DataFrame) -> dict | None:
    """`quota_cost` of a ranking for --json (None when the quotas cost it nothing)."""
    paid = quota_cost(ranked)
    if paid is None:
        return None
    return {"chosen": paid.chosen, "blocked": paid.blocked, "quota": paid.why,
            "usd": None if paid.usd != paid.usd else round(paid.usd, 2),
            "usd_per_hour": round(paid.usd_per_hour, 4)}

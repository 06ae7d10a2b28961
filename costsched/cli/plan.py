"""`costsched plan JOB.yaml...`: rank offerings per job and place a collection of jobs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from costsched.cli.common import (
    DbOption,
    JsonOption,
    console,
    err_console,
    frame_records,
    friendly_errors,
    money,
    options,
    print_json,
    table,
)
from costsched.optimize.collection import CollectionPlan
from costsched.service import PlanResult
from costsched.service import plan as plan_jobs


@friendly_errors
def plan(
    jobs: Annotated[list[Path], typer.Argument(help="Job spec YAML file(s).",
                                               show_default=False)],
    objective: Annotated[str, typer.Option(
        help="cost | time | tradeoff | throughput-per-dollar. Per job: the lowest cost, the "
             "earliest finish, or --weight between them. Collections: min total cost "
             "(tradeoff too), min makespan (time), or Gavel's throughput per dollar "
             "(per-job tables then rank by cost).")] = "cost",
    deadline: Annotated[str | None, typer.Option(
        help="Every job's deadline: hours (48, 36h, 2d) or an ISO time; overrides the specs.",
        show_default=False)] = None,
    budget: Annotated[float | None, typer.Option(
        help="USD. One job: its budget. Several: the collection's total budget.",
        show_default=False)] = None,
    weight: Annotated[float, typer.Option(
        help="tradeoff: weight of cost against time, in [0, 1].", min=0.0, max=1.0)] = 0.5,
    at: Annotated[str | None, typer.Option(help="Price as of this time (ISO 8601; default now).",
                                           show_default=False)] = None,
    top: Annotated[int, typer.Option(help="Offerings shown per job.", min=1)] = 10,
    quota: Annotated[int | None, typer.Option(
        help="Collections: at most this many instances of a type in a region.", min=1,
        show_default=False)] = None,
    availability: Annotated[list[Path] | None, typer.Option(
        help="Probe log(s) to measure preemption rates from (else per-cloud defaults).",
        show_default=False)] = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Rank offerings by expected cost and time for each job; for several jobs, also place
    them all at once (min cost under deadlines, min makespan under --budget, or
    throughput per dollar), within --quota."""
    with options(objective="--objective", deadline="--deadline", budget="--budget",
                 at="--at"):
        result = plan_jobs(db, jobs, at=at, objective=objective, deadline=deadline,
                           budget=budget, weight=weight, quota=quota, availability=availability)
    if json_out:
        print_json(_json(result, top))
    else:
        for i in range(len(result.jobs)):
            _print_job(result, i, top)
        if result.collection is not None:
            _print_collection(result.collection, budget)
    if not result.ok:
        raise typer.Exit(1)


def _print_job(result: PlanResult, index: int, top: int) -> None:
    p = result.jobs[index]
    job = p.job.job
    title = (f"{job.name}: {job.model}, {job.steps:,.0f} steps; by {result.per_job_objective}"
             + (f", deadline {job.constraints.deadline_hours:.4g} h"
                if job.constraints.deadline_hours else "")
             + (f", budget ${job.constraints.budget_usd:,.2f}" if job.constraints.budget_usd
                else ""))
    if p.reason:
        err_console.print(f"[red]no plan:[/red] {p.reason}", highlight=False, soft_wrap=True)
        return
    shown = result.ranking(index).head(top)
    rows = [
        [str(i), r.offering, f"{r.gpu_count}x{r.gpu_model}", money(r.usd_per_hour, 4),
         f"{r.steps_per_second:.4g}" + ("*" if r.throughput_estimated else ""),
         f"{r.preemptions_per_hour:.3f}", f"{r.expected_hours:,.2f}",
         money(r.expected_cost, 2),
         f"{r.vs_on_demand_v100:.2f}x" if r.vs_on_demand_v100 == r.vs_on_demand_v100 else "-"]
        for i, r in enumerate(shown.itertuples(), start=1)
    ]
    console.print(table(title, ["#", "offering", "GPUs", "$/h", "steps/s", "preempt/h",
                                "hours", "total $", "vs OD V100"], rows))
    notes = []
    if shown["throughput_estimated"].any():
        notes.append("* estimated throughput (`costsched throughput show --model "
                     f"'{job.model}'` gives the rule)")
    if p.baseline:
        b = p.baseline
        notes.append(f"baseline: {b.basis} at {money(b.usd_per_hour, 4)}/h, "
                     f"{b.hours:,.2f} h, {money(b.cost, 2)}")
    n_excluded = int((p.ranked["excluded"] != "").sum())
    if n_excluded:
        why = p.ranked.loc[p.ranked["excluded"] != "", "excluded"].value_counts()
        notes.append(f"{n_excluded} offerings left out: "
                     + ", ".join(f"{n} {reason}" for reason, n in why.items()))
    for note in notes:
        console.print(f"  {note}", highlight=False, soft_wrap=True)


def _print_collection(c: CollectionPlan, budget: float | None) -> None:
    if not c.feasible:
        for reason in c.reasons:
            err_console.print(f"[red]no collection plan ({c.policy}):[/red] {reason}",
                              highlight=False, soft_wrap=True)
        return
    rows = [[r.job, r.offering, f"{r.hours:,.2f}", money(r.cost, 2)]
            for r in c.assignment.itertuples()]
    title = (f"Collection plan ({c.policy}): {len(rows)} jobs, total {money(c.total_cost, 2)}, "
             f"makespan {c.makespan_hours:,.2f} h" + (f", budget {money(budget, 2)}"
                                                      if budget else ""))
    console.print(table(title, ["job", "offering", "hours", "total $"], rows))


def _json(result: PlanResult, top: int) -> dict:
    columns = ["offering", "cloud", "region", "zone", "instance_type", "market", "gpu_model",
               "gpu_count", "usd_per_hour", "steps_per_second", "throughput_estimated",
               "preemptions_per_hour", "preemption_basis", "work_hours", "expected_hours",
               "expected_cost", "vs_on_demand_v100"]
    jobs = []
    for i, p in enumerate(result.jobs):
        b = p.baseline
        jobs.append({
            "name": p.job.name, "model": p.job.job.model, "steps": p.job.job.steps,
            "source": p.job.source,
            "deadline_hours": p.job.job.constraints.deadline_hours,
            "budget_usd": p.job.job.constraints.budget_usd,
            "reason": p.reason or None,
            "baseline": None if b is None else {
                "basis": b.basis, "usd_per_hour": b.usd_per_hour, "hours": b.hours,
                "cost": b.cost},
            "ranking": frame_records(result.ranking(i).head(top)[columns]),
            "excluded": {str(k): int(v) for k, v in
                         p.ranked.loc[p.ranked["excluded"] != "", "excluded"]
                         .value_counts().items()},
        })
    out: dict = {"at": result.at, "objective": result.objective, "jobs": jobs,
                 "collection": None}
    collection = result.collection
    if collection is not None:
        out["collection"] = {
            "policy": collection.policy, "status": collection.status,
            "reasons": collection.reasons, "total_cost": _number(collection.total_cost),
            "makespan_hours": _number(collection.makespan_hours),
            "objective": _number(collection.objective),
            "solver": collection.solver, "solve_seconds": collection.solve_seconds,
            "assignment": frame_records(collection.assignment.drop(columns="offering_index")),
        }
    return out


def _number(value: float) -> float | None:
    return None if value != value else float(value)

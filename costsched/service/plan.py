"""Planning: rank offerings per job, and place a collection of jobs at once."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pandas as pd

from costsched.jobspec import JobSpec, ResolvedJob, load, parse_hours, resolve
from costsched.model import InvalidInput
from costsched.optimize.availability import lifetimes, preemption_rates
from costsched.optimize.collection import POLICIES, CollectionPlan
from costsched.optimize.planner import JobPlan, plan_collection, plan_job, prepare
from costsched.optimize.rank import OBJECTIVES
from costsched.prices import prices_at
from costsched.service.stores import StoreLike, using
from costsched.service.values import as_time, choices
from costsched.throughput import ThroughputTable

ALL_OBJECTIVES = (*OBJECTIVES, *(o for o in POLICIES if o not in OBJECTIVES))
# One row per job in PlanResult.table: the job, then its best offering's columns.
BEST_COLUMNS = ["offering", "cloud", "region", "zone", "instance_type", "market", "gpu_model",
                "gpu_count", "usd_per_hour", "steps_per_second", "throughput_estimated",
                "preemptions_per_hour", "expected_hours", "expected_cost"]

Jobs = str | Path | JobSpec | Sequence[str | Path | JobSpec]


@dataclass(frozen=True)
class PlanResult:
    at: datetime  # the prices' time
    objective: str
    jobs: list[JobPlan]  # per job: every offering ranked (`.ranked`), `.choices`, `.best`
    collection: CollectionPlan | None  # several jobs: their placement together

    @property
    def ok(self) -> bool:
        """Every job has a plan (one job), or the collection has one (several)."""
        if self.collection is not None:
            return self.collection.feasible
        return not any(p.reason for p in self.jobs)

    @property
    def per_job_objective(self) -> str:
        return self.objective if self.objective in OBJECTIVES else "cost"

    def ranking(self, job: str | int = 0) -> pd.DataFrame:
        """A job's choosable offerings, best first, with `vs_on_demand_v100`: the expected
        cost against running on one on-demand V100."""
        plan = self.jobs[job] if isinstance(job, int) else self._named(job)
        base = plan.baseline
        choices_ = plan.choices
        vs = (choices_["expected_cost"] / base.cost if base
              else pd.Series(float("nan"), choices_.index))
        return choices_.assign(vs_on_demand_v100=vs)

    @property
    def table(self) -> pd.DataFrame:
        """One row per job: its best offering, expected hours and cost, and the reason
        when it has none."""
        rows = []
        for i, p in enumerate(self.jobs):
            ranked = self.ranking(i)
            best = ranked.iloc[0] if not ranked.empty else None
            row = {"job": p.job.name, "model": p.job.job.model, "steps": p.job.job.steps}
            for column in (*BEST_COLUMNS, "vs_on_demand_v100"):
                row[column] = None if best is None else best[column]
            row["reason"] = p.reason
            rows.append(row)
        return pd.DataFrame(rows)

    def _named(self, name: str) -> JobPlan:
        for p in self.jobs:
            if p.job.name == name:
                return p
        raise InvalidInput(f"job {name!r}: expected one of "
                           f"{', '.join(p.job.name for p in self.jobs)}")


def job_specs(jobs: Jobs) -> list[tuple[str, JobSpec]]:
    """(source, spec) of every job in files and specs (a file may hold several)."""
    items = [jobs] if isinstance(jobs, (str, Path, JobSpec)) else list(jobs)
    out: list[tuple[str, JobSpec]] = []
    for item in items:
        if isinstance(item, JobSpec):
            out.append(("<spec>", item))
        else:
            out.extend((str(item), spec) for spec in load(item))
    return out


def plan(
    store: StoreLike,
    jobs: Jobs,
    *,
    at: datetime | str | None = None,
    objective: str = "cost",
    deadline: float | str | datetime | None = None,
    budget: float | None = None,
    weight: float = 0.5,
    quota: int | None = None,
    availability: Sequence[str | Path] | None = None,
    table: ThroughputTable | None = None,
) -> PlanResult:
    """Rank offerings by expected cost and time for each job, with the prices in `store`
    as of `at` (default now); for several jobs, also place them all at once. The job
    files are read before the store is opened.

    `objective`: cost | time | tradeoff (`weight` of cost against time) |
    throughput-per-dollar (collections; per-job rankings then rank by cost). `deadline`
    (hours, '36h', '2d' or a time) overrides every spec's. `budget`: one job's budget, or
    the collection's total. `quota`: at most this many instances of a type in a region.
    `availability`: probe logs to measure preemption rates from (else per-cloud
    defaults). `table`: the throughputs (default the bundled ones with the user's).
    """
    choices("objective", [objective], ALL_OBJECTIVES)
    if not 0 <= weight <= 1:
        raise InvalidInput(f"weight {weight}: expected a number in [0, 1]")
    if quota is not None and quota < 1:
        raise InvalidInput(f"quota {quota}: expected a whole number >= 1")
    when = as_time(at, "at")
    specs = job_specs(jobs)
    if not specs:
        raise InvalidInput("jobs: expected at least one job spec")
    overrides: dict = {}
    if deadline is not None:
        try:
            overrides["deadline"] = parse_hours(deadline)
        except ValueError as exc:
            raise InvalidInput(f"deadline: {exc}") from None
    several = len(specs) > 1
    if budget is not None and not several:
        if budget <= 0:
            raise InvalidInput(f"budget {budget}: expected a positive amount of USD")
        overrides["budget"] = budget
    table = table if table is not None else ThroughputTable.load()
    resolved = [resolve(_override(spec, overrides), table, when, source=source)
                for source, spec in specs]
    with using(store) as opened:
        frame = prices_at(opened, when, **price_filters(resolved))
    if isinstance(availability, (str, Path)):
        availability = [availability]
    rates = preemption_rates(lifetimes(availability)) if availability else None
    offerings = prepare(frame, rates)
    per_job = objective if objective in OBJECTIVES else "cost"
    plans = [plan_job(j, offerings, per_job, weight) for j in resolved]
    collection = None
    if several:
        collection_objective = objective if objective in POLICIES else "cost"
        collection = plan_collection(resolved, offerings, collection_objective, quota, budget)
    return PlanResult(when, objective, plans, collection)


def _override(spec: JobSpec, overrides: dict) -> JobSpec:
    if not overrides:
        return spec
    constraints = spec.constraints.model_copy(update=overrides)
    return spec.model_copy(update={"constraints": constraints})


def price_filters(jobs: list[ResolvedJob]) -> dict[str, list[str]]:
    """The union of the jobs' filters ('any' wins), so one query serves them all."""
    out: dict[str, list[str]] = {}
    for name, attr in (("clouds", "clouds"), ("regions", "regions"), ("markets", "markets"),
                       ("gpu_models", "gpu_models")):
        values = [getattr(j.job.constraints, attr) for j in jobs]
        if all(values):
            out[name] = sorted({v for vs in values for v in vs})
    if "markets" in out:  # keep on-demand prices: the baseline needs them
        out["markets"] = sorted({*out["markets"], "on_demand"})
    if "gpu_models" in out:
        out["gpu_models"] = sorted({*out["gpu_models"], "V100"})
    return out

"""The report's speed table: each job's measured speed (`costsched.measured.speed_rows`,
the one computation of it: training time between step readings, else its placements'
hours up to its reported step; a GPU it did not train on carried by its table's ratio;
NaN where nothing is known) beside its plan's figure, on plain rows."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from costsched.gang_stalls import trained_readings as trained_readings  # (`report.data`'s)
from costsched.measured import (
    JobRate,
    Rate,
    Speed,
    basis_words,
    checked,
    first_longest,
    shown_speed,
    spec_nodes,
    speed_rows,
    stored_readings,
    trained,
)
from costsched.model import FINAL_STATES
from costsched.report.sums import by
from costsched.store.job_rows import PlacementRow
from costsched.throughput import ASSUMED_WORDS, assumed_basis
from costsched.work import NOT_KNOWN, own_steps

# `nodes`: a gang's instances at once, each with `gpu_count` GPUs (1 for other jobs).
SPEED_COLUMNS = ["job_id", "name", "gpu_model", "gpu_count", "nodes", "planned_sps",
                 "measured_sps", "measured_vs_planned", "flagged", "planned_from", "flag"]


def speeds(placements: Sequence[PlacementRow], steps_done: Mapping[int, float],
           read_at: Mapping[int, datetime], rates: Mapping[int, Rate | None],
           readings: Sequence[tuple] | None = None) -> list[Speed]:
    """Per job and GPU it ran on, its speed (`costsched.measured.speed_rows`): from its
    step `readings` (`JobStore.reading_rows`) where it has any, else over its placements'
    hours up to the reading of its step (`read_at`)."""
    return speed_rows(placements, steps_done, read_at, rates,
                      stored_readings(readings or ()))


def speed_table(jobs: Mapping[int, object], measured: Sequence[Speed],
                rates: Mapping[int, JobRate | None], plans: Mapping[int, dict],
                factor: float) -> list[dict]:
    """SPEED_COLUMNS per job with a measured speed, by job id, and GPU it trained on
    (the longest first): its speed there beside the figure its plan used (the plan kept
    at launch, else its throughput table's), and whether it is off by more than `factor`.
    `jobs`: the job records by id; `plans`: the predictions kept at launch, by job id."""
    rows = []
    for job_id, found in sorted(by(measured, lambda s: s.job_id).items()):
        job = jobs[job_id]
        name = job.name  # type: ignore[attr-defined]
        rate = rates.get(int(job_id))
        # The one speed every view shows of it (`measured.shown_speed`).
        shown = shown_speed(found, job.spec, job.state in FINAL_STATES, job.steps_done)  # type: ignore[attr-defined]
        if shown is not None and shown.steps_per_second is None:  # not judged (yet)
            top = first_longest(found)
            # (A reference GPU's relative speed is not in the job's steps: no plan's.)
            planned = float(top.planned_sps) if own_steps(job.spec) else math.nan  # type: ignore[attr-defined]
            rows.append(_speed_row(int(job_id), name, top.gpu_model, int(top.gpu_count),
                                   shown.nodes, planned, math.nan, math.nan, False, "",
                                   f"job {job_id} ({name}): {shown.words}"))
            continue
        # Each GPU it trained on, longest first (the first is the speed every view shows).
        rows.extend(_gpu_row(job, int(job_id), top, rate, plans, factor)
                    for top in trained(found))
    return rows


def _gpu_row(job: object, job_id: int, top: Speed, rate: JobRate | None,
             plans: Mapping[int, dict], factor: float) -> dict:
    """The SPEED_COLUMNS row of one GPU a job trained on (`speed_table`)."""
    name = job.name  # type: ignore[attr-defined]
    # A gang's speed worded as `status` words it: 'on 2 nodes of 1xA100'.
    nodes = spec_nodes(job.spec)  # type: ignore[attr-defined]
    check = checked(top, name, "", "", factor, nodes)
    gpu, count = check.gpu_model, check.gpu_count
    basis = rate.basis(gpu, count) if rate is not None else ""
    planned = check.planned_sps
    plan = plans.get(int(job_id))
    if plan is not None and plan["gpu_model"] == gpu and int(plan["gpu_count"]) == count:
        planned, basis = float(plan["steps_per_second"]), str(plan["throughput_source"])
    words = basis_words(basis)
    if assumed_basis(basis) or not own_steps(job.spec):  # type: ignore[attr-defined]
        # An assumed hour's, or a reference GPU's, relative speed: not in the job's
        # steps, no plan to compare with.
        planned = math.nan
        words = ASSUMED_WORDS if job.steps_total is None else words  # type: ignore[attr-defined]
    check = replace(check, planned_sps=planned, basis=words)  # NaN: never flagged
    ratio = check.measured_sps / check.planned_sps if check.planned_sps else math.nan
    line = check.line() if check.flagged else ""
    if job.steps_total is None:  # type: ignore[attr-defined]
        line = (f"job {job_id} ({name}): {NOT_KNOWN}. Its steps/s are its own, with no "
                "plan's beside them, and its run has no estimate")
    return _speed_row(int(job_id), check.name, gpu, count, nodes, check.planned_sps,
                      check.measured_sps, ratio, check.flagged, check.basis, line)


def _speed_row(*values: object) -> dict:
    return dict(zip(SPEED_COLUMNS, values, strict=True))

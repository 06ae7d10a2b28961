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
    MEASURING,
    MIN_TRAINING_SECONDS,
    JobRate,
    Rate,
    Speed,
    basis_words,
    checked,
    first_longest,
    measuring,
    spec_nodes,
    speed_rows,
    stored_readings,
    too_short,
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


def _longest(rows: Sequence[Speed]) -> Speed | None:
    return first_longest(rows) if rows else None


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
        if measuring(found):  # reported steps, not trained long enough to judge (yet)
            top = _longest(found) or found[0]
            words = (too_short(job.spec, sum(s.hours for s in found), job.steps_done)  # type: ignore[attr-defined]
                     if job.state in FINAL_STATES else MEASURING)  # type: ignore[attr-defined]
            # (A reference GPU's relative speed is not in the job's steps: no plan's.)
            planned = float(top.planned_sps) if own_steps(job.spec) else math.nan  # type: ignore[attr-defined]
            rows.append(_speed_row(int(job_id), name, top.gpu_model, int(top.gpu_count),
                                   spec_nodes(job.spec), planned, math.nan, math.nan,  # type: ignore[attr-defined]
                                   False, "",
                                   f"job {job_id} ({name}): {words}"))
            continue
        # Each GPU it trained on, longest first (a GPU's speed carried from another by
        # the table's ratio is no measure of it: left out).
        ran = [s for s in found if s.measured_sps == s.measured_sps
               and s.planned_sps == s.planned_sps and s.hours > 0]
        tops = [top for top in sorted(ran, key=lambda s: -s.hours)
                if len(ran) < 2 or top.hours * 3600 >= MIN_TRAINING_SECONDS]
        rows.extend(_gpu_row(job, int(job_id), top, rate, plans, factor) for top in tops)
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

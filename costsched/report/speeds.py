"""The report's measured speeds, on plain rows: per job and GPU it ran on, the steps per
second it made (`costsched.measured` states the rules: training time between step
readings, else its placements' hours up to its reported step; a GPU it did not train on
carried by its table's ratio; NaN where nothing is known), and the speed table that sets
each job's speed beside its plan's figure.

`costsched.measured.speeds` computes the same on frames, for the service's views; this
module keeps the report free of pandas.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import NamedTuple

from costsched.measured import (
    MEASURING,
    MIN_TRAINING_SECONDS,
    SETUP_SECONDS,
    TOO_SHORT,
    JobRate,
    Rate,
    basis_words,
    checked,
    rate_or_nan,
)
from costsched.model import FINAL_STATES
from costsched.report.sums import array_total, by, group_sums, seconds
from costsched.store.job_rows import PlacementRow
from costsched.throughput import assumed_basis

SPEED_COLUMNS = ["job_id", "name", "gpu_model", "gpu_count", "planned_sps", "measured_sps",
                 "measured_vs_planned", "flagged", "planned_from", "flag"]


class Speed(NamedTuple):
    """A job's speed on one GPU (model, count): `hours` there, its table's `planned_sps`
    and the `measured_sps` (NaN: unknown), `measuring` while not trained long enough."""

    job_id: int
    gpu_model: str
    gpu_count: int
    hours: float
    planned_sps: float
    measured_sps: float
    measuring: bool


Reading = tuple  # (placement id, job id, first step, its epoch s, last step, its epoch s)


def speeds(placements: Sequence[PlacementRow], steps_done: Mapping[int, float],
           read_at: Mapping[int, datetime], rates: Mapping[int, Rate | None],
           readings: Sequence[Reading] | None = None) -> list[Speed]:
    """Per job and GPU it ran on, its speed (`costsched.measured.speeds` on rows): from
    its step `readings` (`JobStore.reading_rows`) where it has any, else over its
    placements' hours up to the reading of its step (`read_at`)."""
    if not placements:
        return []
    read = {int(r[1]) for r in readings} if readings else set()
    if read:
        trained = _trained([p for p in placements if p.job_id in read], readings or [], rates)
        live = {p.job_id for p in placements if p.end_at is None}
        short = {s.job_id for s in trained if s.measuring} - live
        trained = [s for s in trained if s.job_id not in short]
        judged = read - short
        rest = [p for p in placements if p.job_id not in judged]
        if not rest:
            return trained
        return trained + _bounded(speeds(rest, steps_done, read_at, rates), short)
    keys, hours = [], []
    for p in placements:
        reading = read_at.get(p.job_id)
        end = p.end_at if p.end_at is not None else reading
        if end is None or reading is None:
            ran = 0.0
        else:
            ran = max(seconds(min(end, reading) - p.start_at), 0.0)
        keys.append((p.job_id, p.gpu_model, p.gpu_count))
        hours.append(ran / 3600)
    found = [Speed(j, g, c, h, rate_or_nan(rates.get(int(j)), g, c), math.nan, False)
             for (j, g, c), [h] in group_sums(keys, hours, sort=False).items()]
    out = list(found)
    for job_id, rows in by(range(len(found)), lambda i: found[i].job_id).items():
        steps = float(steps_done.get(int(job_id), 0.0))
        spent = [found[i].hours for i in rows]
        planned = [found[i].planned_sps for i in rows]
        if steps <= 0 or not sum(spent) > 0:
            continue
        ran = [i for i, h in zip(rows, spent, strict=True) if h > 0]
        if len(ran) == 1:  # one GPU: measured exactly; others it met after, by the ratio
            here = steps / (found[ran[0]].hours * 3600)
            for i in rows:
                out[i] = found[i]._replace(
                    measured_sps=here * found[i].planned_sps / found[ran[0]].planned_sps)
            out[ran[0]] = found[ran[0]]._replace(measured_sps=here)
            continue
        table_steps = array_total([h * 3600 * p for h, p in zip(spent, planned, strict=True)])
        if math.isfinite(table_steps) and table_steps > 0:
            for i in rows:
                out[i] = found[i]._replace(measured_sps=found[i].planned_sps * steps
                                           / table_steps)
    return out


def _bounded(found: list[Speed], short: set[int]) -> list[Speed]:
    """`found` with the short jobs' slow speeds taken back to unmeasured
    (`costsched.measured._bounded`)."""
    ran = {j: hours * 3600 for j, [hours] in group_sums(
        [s.job_id for s in found], [s.hours for s in found]).items()}
    out = []
    for s in found:
        slow = s.job_id in short and ran[s.job_id] < SETUP_SECONDS and not (
            s.measured_sps >= s.planned_sps)
        out.append(s._replace(measured_sps=math.nan, measuring=True) if slow else s)
    return out


def _trained(placements: Sequence[PlacementRow], readings: Sequence[Reading],
             rates: Mapping[int, Rate | None]) -> list[Speed]:
    """`speeds` of jobs with step readings (`costsched.measured._trained`)."""
    read = {int(r[0]): r for r in readings}
    keys, spans, made = [], [], []
    for p in placements:
        r = read.get(int(p.id))
        spent = float(r[5] - r[3]) if r is not None else 0.0
        steps = _number(r[4]) - _number(r[2]) if r is not None else 0.0
        keys.append((p.job_id, p.gpu_model, p.gpu_count))
        spans.append(spent if spent == spent else 0.0)
        made.append(steps if steps == steps else 0.0)
    found, enough = [], []
    for (j, g, c), (total, steps) in group_sums(keys, spans, made, sort=False).items():
        ok = total >= MIN_TRAINING_SECONDS and steps > 0
        enough.append(ok)
        found.append((Speed(j, g, c, total / 3600, rate_or_nan(rates.get(int(j)), g, c),
                            steps / total if ok else math.nan, False), total))
    out = [s for s, _ in found]
    for _, rows in by(range(len(found)), lambda i: found[i][0].job_id).items():
        known = [i for i in rows if enough[i]]
        if not known:  # reported steps, not yet for long enough anywhere
            for i in rows:
                out[i] = out[i]._replace(measuring=True)
            continue
        ref = out[max(known, key=lambda i: (found[i][1], -i))]
        for i in rows:
            if not enough[i]:
                out[i] = out[i]._replace(
                    measured_sps=ref.measured_sps * out[i].planned_sps / ref.planned_sps)
    return out


def _number(value: object) -> float:
    return math.nan if value is None else float(value)  # type: ignore[arg-type]


def measuring(job_speeds: Sequence[Speed]) -> bool:
    """Whether a job (its rows of `speeds`) reported steps but has no speed yet."""
    return bool(job_speeds) and all(s.measuring for s in job_speeds)


def _longest(rows: Sequence[Speed]) -> Speed | None:
    """The first row of the most hours (None: none)."""
    best = None
    for s in rows:
        if best is None or s.hours > best.hours:
            best = s
    return best


def speed_on(job_speeds: Sequence[Speed], gpu: str, count: int, rate: Rate | None) -> float:
    """The job's speed on (`gpu`, `count`) (`costsched.measured.speed_on`)."""
    known = [s for s in job_speeds if s.measured_sps == s.measured_sps]
    for s in known:
        if s.gpu_model == gpu and int(s.gpu_count) == int(count):
            return float(s.measured_sps)
    ref = _longest([s for s in known if s.hours > 0])
    if ref is None:
        return math.nan
    return float(ref.measured_sps * rate_or_nan(rate, gpu, count) / ref.planned_sps)


def speed_table(jobs: Mapping[int, object], measured: Sequence[Speed],
                rates: Mapping[int, JobRate | None], plans: Mapping[int, dict],
                factor: float) -> list[dict]:
    """SPEED_COLUMNS per job with a measured speed, by job id: it beside the figure its
    plan used (the plan kept at launch, else its throughput table's) on the GPU it ran
    longest, and whether it is off by more than `factor`. `jobs`: the job records by id;
    `plans`: the predictions kept at launch, by job id."""
    rows = []
    for job_id, found in sorted(by(measured, lambda s: s.job_id).items()):
        job = jobs[job_id]
        name = job.name  # type: ignore[attr-defined]
        rate = rates.get(int(job_id))
        if measuring(found):  # reported steps, not trained long enough to judge (yet)
            top = _longest(found) or found[0]
            words = TOO_SHORT if job.state in FINAL_STATES else MEASURING  # type: ignore[attr-defined]
            rows.append(_speed_row(int(job_id), name, top.gpu_model, int(top.gpu_count),
                                   float(top.planned_sps), math.nan, math.nan, False, "",
                                   f"job {job_id} ({name}): {words}"))
            continue
        top = _longest([s for s in found if s.measured_sps == s.measured_sps
                        and s.planned_sps == s.planned_sps and s.hours > 0])
        if top is None:
            continue
        check = checked(top, name, "", "", factor)
        gpu, count = check.gpu_model, check.gpu_count
        basis = rate.basis(gpu, count) if rate is not None else ""
        planned = check.planned_sps
        plan = plans.get(int(job_id))
        if plan is not None and plan["gpu_model"] == gpu and int(plan["gpu_count"]) == count:
            planned, basis = float(plan["steps_per_second"]), str(plan["throughput_source"])
        if assumed_basis(basis):  # an assumed hour's unit speed: no plan to compare with
            planned = math.nan
        check = replace(check, planned_sps=planned, basis=basis_words(basis))
        ratio = check.measured_sps / check.planned_sps if check.planned_sps else math.nan
        rows.append(_speed_row(int(job_id), check.name, gpu, count, check.planned_sps,
                               check.measured_sps, ratio, check.flagged, check.basis,
                               check.line() if check.flagged else ""))
    return rows


def _speed_row(*values: object) -> dict:
    return dict(zip(SPEED_COLUMNS, values, strict=True))

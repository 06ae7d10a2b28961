"""Estimate versus actual: what each job's plan predicted at its launch (hours, cost,
preemptions) beside what the job did, and how well the estimates hold per model and GPU.

Hours are training hours (`training_hours`, not the billed hours of the spend tables):
the steps the job did at the pace measured between the first and the last step it
reported on each instance (`work.trained_seconds`: the basis of its measured speed, setup,
the time it sat stopped and the watcher's lag after it exited left out) against the
plan's hours for that work, its start left out too (kept so: `service.estimates`).
Without step readings, the hours its instances ran; never more than the hours its
instances ran. A job whose work is hours on a reference GPU (its steps its own, not a
share of those hours) is compared once it succeeded, its training hours by the same rule
(the steps it reported at its measured pace); before, its share done is not known. Dollars
are what its instances were billed (setup included), its spend as "Spend per job" has it
(one figure per job in a report: up to the report's end, a running job's too; a job the
period cuts, over its whole life), against the plan's expected cost as
`plan` and `launch` showed it, which counts the job's first start once: the dollars it
predicted beyond its hours at its price (none in a prediction kept before plans counted
it). That start is a cloud instance's, assumed (its boot, set-up and warm-up): a job on a
launcher that runs it on this machine (the local launcher, `launchers.runs_here`) boots
no instance, and what getting it going took there (its setup) is in its dollars as
billed: its expected dollars leave the plan's start out (`expected_start_usd`), like for
like, and the table's note says so; else every job there would read 'cost under' by the
start alone.

A job that has not finished is compared on the work it has done: its plan's figures times
the share of its steps it reported (a job half done after 6 hours, planned at 8, is
running at 1.5x its plan), its start counted whole (paid once, at the start). So is a job
that exited 0 (succeeded) at a step short of its declared steps: its verdict says so
('ended short (exited 0 at 12% of its declared steps)'), and it has no ratio: a run that
ended short of its steps, like one that failed ('failed'), says nothing of its estimate's
accuracy and is left out of the calibration, as is a job not ended yet (its row says
where it stands: a job 1% done is no measure of its estimate). One that exited 0 having
reported no step did a share of its steps that is not known (`work.done_not_known`): no
share done, no ratio, its verdict NOT_REPORTED. One that reported more steps than it
declares (`work.past_total`) did all of its declared work (100%) and more: its training
hours count every step it reported, at its measured pace, but its plan priced the
declared steps alone, so it has no ratio either (its speed is in the speeds table) and
its verdict says how many steps it reported and which key of its file declares them. A
run on several GPU types ('1xL4 then 1xA10G') is left out of each GPU's group of the
calibration (counted in ALL). Ratios are actual over expected: above 1 the job took
longer or cost more than planned. Each ratio is judged alone: `under` below 1 -
TOLERANCE, `over` above 1 + TOLERANCE, `within` between. Where the hours and the cost
agree the verdict is that word; where they do not, it names each ('hours within, cost
under'), so that 'within' never stands beside a cost ratio of 0.10x (the words say where
the run stands against its estimate, not against a deadline). A job whose work was
assumed (a task that gives none: an hour of work on the slowest GPU of its set,
`work.unit_gpu`) has no estimate of its own, and no row.

Plain rows in and out (dicts by column): the report's text and JSON are written without
pandas; its frames are built from these rows.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime

from sqlalchemy import select

from costsched.costs import Move
from costsched.measured import TOO_EARLY, not_judged_yet, stored_readings
from costsched.model import FINAL_STATES
from costsched.report.outside import Causes, outside_words
from costsched.report.sums import by, column_sum, seconds
from costsched.step_share import percent_down
from costsched.store import PriceStore
from costsched.store.job_rows import JobRecord, PlacementRow, id_chunks
from costsched.store.schema import job_predictions
from costsched.throughput import assumed_basis
from costsched.work import (
    done_not_known,
    ended_short,
    own_total,
    past_total,
    past_words,
    share_done,
    trained_seconds,
    trained_span,
)

TOLERANCE = 0.10
ESTIMATE_COLUMNS = [
    "job_id", "name", "model", "gpu", "state", "done", "expected_training_hours",
    "training_hours", "training_hours_ratio", "expected_usd", "usd", "usd_ratio",
    "expected_preemptions", "preemptions", "vs_estimate",
]
CALIBRATION_COLUMNS = ["model", "gpu", "jobs", "median_training_hours_ratio",
                       "worst_training_hours_ratio", "median_usd_ratio", "worst_usd_ratio"]
ALL = "(all)"
THEN = " then "  # between the GPUs of a job that ran on several (`gpus_of`)
SHORT = "ended short"  # the verdict of a job that exited 0 short of its declared steps
# The verdict of one that exited 0 having reported no step: its share done is not known.
NOT_REPORTED = "no step reported (exited 0: the share of its steps it did is not known)"
_PREDICTED = ("job_id", "model", "gpu_model", "gpu_count", "steps_per_second",
              "throughput_source", "expected_hours", "expected_usd", "expected_preemptions",
              "usd_per_hour")


def predictions(store: PriceStore, job_ids: Iterable[int]) -> dict[int, dict]:
    """{job id: what its plan predicted at launch (`JobStore.predictions`' figures the
    report reads)} of those of `job_ids` that kept one, by job id, in one read."""
    query = select(*(job_predictions.c[c] for c in _PREDICTED)).order_by(
        job_predictions.c.job_id)
    with store.engine.connect() as conn:
        rows = [dict(zip(_PREDICTED, r, strict=True)) for chunk in id_chunks(
            job_ids, job_predictions.c.job_id) for r in conn.execute(query.where(chunk))]
    return {int(r["job_id"]): r for r in sorted(rows, key=lambda r: r["job_id"])}


def until(jobs: Sequence[JobRecord], end: datetime) -> dict[int, datetime]:
    """Per job (by id), the time its hours beside its estimate run to: the end of the
    report for a job that ended, else when its step was last read (its record's last
    write), the work its share done counts. (Its dollars run to the end of the report,
    as its spend does.)"""
    out = {}
    for job in jobs:
        read = end if job.state in FINAL_STATES else job.updated_at
        out[job.id] = read if read < end else end
    return out


def estimate_table(predicted: Mapping[int, dict], jobs: Mapping[int, JobRecord],
                   lives: Sequence[tuple[PlacementRow, float]], egress: Sequence[Move],
                   recoveries: Mapping[int, int],
                   readings: Sequence[tuple] | None = None,
                   spent: Mapping[int, float] | None = None,
                   read: Mapping[int, datetime] | None = None,
                   causes: Mapping[int, Causes] | None = None) -> list[dict]:
    """ESTIMATE_COLUMNS per job with a prediction. `lives`: the jobs' placements charged
    over their whole lives up to the report's end (each with its usd); `egress`: their
    moves' egress up to then; `recoveries`: per job id, the recoveries after a lost
    instance; `readings`: their step readings (`JobStore.reading_rows`); `spent`: per job
    id, its spend as the spend table has it, where it is the same figure (the period
    holds its whole life): its dollars here are that figure, never one summed again;
    `read`: per job id, the time its hours run to (`until`; default: its lives' ends);
    `causes`: per job id, what is known of its billed hours beyond its training (its steps
    lost at preemptions, its measured setup: `outside.causes_of`; none by default)."""
    rows = []
    by_job = by(lives, lambda life: life[0].job_id)
    read_of = by(readings or [], lambda r: int(r[1]))
    copied = by(egress, lambda m: m.job_id)
    for job_id, p in predicted.items():
        basis = str(p.get("throughput_source", ""))
        if job_id not in jobs or assumed_basis(basis) or jobs[job_id].steps_total is None:
            continue  # an assumed hour of work predicts nothing of the job's own
        job = jobs[job_id]
        mine = by_job.get(job_id, [])
        # Its total in the steps it reports; None for hours of work on a reference GPU,
        # whose share done is known only once it succeeded.
        total = own_total(getattr(job, "spec", {}), job.steps_total)
        succeeded = job.state == "succeeded"
        said = bool(read_of.get(job_id))  # it reported a step, 0 included
        short = ended_short(succeeded, job.steps_done, total, said)
        unknown = done_not_known(succeeded, job.steps_done, total, said)  # done: NaN
        done = math.nan if total is None and not succeeded else 1.0 if total is None else \
            share_done(job.steps_done, total, succeeded, said)
        # More steps reported than declared: its plan priced the declared steps alone.
        past = past_words(job.steps_done, total, getattr(job, "spec", {})) \
            if total is not None and past_total(job.steps_done, total) else ""
        hours = usd = math.nan
        outside = ""  # what of its billed hours was not training, by cause
        planned = started_usd(p)  # the plan's start, counted whole (paid once)
        expected_hours = p["expected_hours"] * done
        expected_usd = expected_start_usd(p, job) + (p["expected_usd"] - planned) * done
        if spent is not None and job_id in spent:  # the spend table's figure itself
            usd = float(spent[job_id])
        elif mine:  # what it spent over its whole life, however much it did
            usd = column_sum([u for _, u in mine]) + column_sum(
                [m.usd for m in copied.get(job_id, [])])
        if mine and (done > 0 or (done != done and job.steps_done > 0)):
            last = (read or {}).get(job_id)  # its hours to its step read, the work done
            ran = column_sum([max(seconds((life.end_at if last is None else min(
                life.end_at, last)) - life.start_at), 0.0) for life, _ in mine]) / 3600
            hours = ran
            trained = trained_seconds(read_of.get(job_id, []), float(job.steps_done), total,
                                      job.state == "succeeded", column_sum)
            if trained is not None:  # training only: the work done at its measured pace
                hours = trained / 3600
            hours = min(hours, ran)  # never more than its instances ran
            span = trained_span(read_of.get(job_id, []), column_sum)
            if trained is not None and span is not None:  # its billed hours not training
                outside = outside_words(ran, hours, span[1] / span[0],
                                        (causes or {}).get(job_id, Causes()))
        # A running job is judged as status judges its speed: not before it trained
        # MIN_TRAINING_SECONDS from its first reported step (its boot and setup are no
        # measure of its estimate).
        early = job.state not in FINAL_STATES and not_judged_yet(
            [life for life, _ in mine], stored_readings(read_of.get(job_id, [])),
            float(job.steps_done))
        if early:
            hours = math.nan  # its billed hours, its setup in them, are no training hours
        hours_ratio, usd_ratio = _ratio(hours, expected_hours), _ratio(usd, expected_usd)
        if job.state == "failed" or short or early or past:  # no measure of the estimate
            hours_ratio = usd_ratio = math.nan
        rows.append(dict(zip(ESTIMATE_COLUMNS, (
            job_id, job.name, p["model"], gpus_of(p, [life for life, _ in mine]), job.state,
            done, expected_hours, hours, hours_ratio, expected_usd, usd, usd_ratio,
            p["expected_preemptions"] * done, int(recoveries.get(job_id, 0)),
            TOO_EARLY if early else
            verdict(hours_ratio, usd_ratio, done if short else None,
                    job.state == "failed", outside, unknown, past)), strict=True)))
    return rows


def gpus_of(predicted: Mapping, lives: Sequence[PlacementRow]) -> str:
    """The GPUs a job ran on, in order: its plan's ('1xL4') when it ran on that alone (or
    has not run), else each it ran on ('1xL4 then 1xA10G', `THEN`): a run on several GPU
    types is no measure of one of them (`calibration` leaves it out of their groups)."""
    planned = f"{predicted['gpu_count']}x{predicted['gpu_model']}"
    ran = list(dict.fromkeys(f"{life.gpu_count}x{life.gpu_model}" for life in lives
                             if getattr(life, "gpu_model", None)))
    return planned if not ran or ran == [planned] else THEN.join(ran)


def expected_start_usd(predicted: Mapping, job: object) -> float:
    """The start a job's expected dollars count: its plan's (`started_usd`), a cloud
    instance's boot and setup; none where it ran on this machine (the local launcher,
    `launchers.runs_here`), which boots no instance: its setup is in its billed dollars."""
    from launchers import runs_here

    stored = getattr(job, "spec", None)
    launcher = stored.get("launcher") if isinstance(stored, Mapping) else None
    here = isinstance(launcher, str) and runs_here(launcher)
    return 0.0 if here else started_usd(predicted)


def started_usd(predicted: Mapping) -> float:
    """The dollars of a prediction's first start: its expected dollars beyond its
    (training) hours at its price; 0 for one kept before plans counted the start."""
    price = predicted.get("usd_per_hour")
    if price is None or not math.isfinite(float(price)):
        return 0.0
    return max(float(predicted["expected_usd"]) - float(predicted["expected_hours"])
               * float(price), 0.0)


def verdict(hours_ratio: float, usd_ratio: float, short: float | None,
            failed: bool = False, outside: str = "",
            not_reported: bool = False, past: str = "") -> str:
    """`vs_estimate`; for a run that says nothing of its estimate, what it is: 'failed'
    (`failed`), 'ended short' with the share done of a job that exited 0 short of its
    declared steps (`short`; None for any other job), NOT_REPORTED for one that exited 0
    having reported no step (`not_reported`: `work.done_not_known`), or, for one that
    reported more steps than it declares, those steps and the key that declares them
    (`past`: `work.past_words`; its plan priced the declared steps alone, so its hours and
    cost are no measure of it), with what of its billed hours was not training. `outside`:
    what of its billed hours was not training, by cause (`outside.outside_words`;
    `vs_estimate`)."""
    if failed:
        return "failed"
    if past:
        return f"{past} ({outside})" if outside else past
    if short is not None:
        return f"{SHORT} (exited 0 at {percent_down(short)} of its declared steps)"
    if not_reported:
        return NOT_REPORTED
    return vs_estimate(hours_ratio, usd_ratio, outside)


def vs_estimate(hours_ratio: float, usd_ratio: float, outside: str = "") -> str:
    """'under', 'within' or 'over' the estimate where the hours and the cost agree (each
    judged alone: `judged`), else the verdict of each, named: 'hours within, cost under'
    (see the module); '' when nothing can be compared. A cost over beside training hours
    that are not (or are over too) says what of its billed hours were not training, by
    the causes known
    (`outside`: `outside.outside_words`; its steps lost at a preemption and trained again,
    its setup where measured, the rest before its first step and after its last): 'hours
    within, cost over (26% of its billed hours outside training: 689 steps lost at a
    preemption and trained again, 20%; ...)'."""
    hours, cost = judged(hours_ratio), judged(usd_ratio)
    said = (hours or cost) if not hours or not cost or hours == cost else \
        f"hours {hours}, cost {cost}"
    if cost == "over" and outside:  # (training hours over too: the rest is said alike)
        return f"{said} ({outside})"
    return said


def judged(value: float) -> str:
    """One ratio against 1: 'under' below 1 - TOLERANCE, 'over' above 1 + TOLERANCE,
    'within' between; '' when it is not known."""
    if not math.isfinite(value):
        return ""
    if value > 1 + TOLERANCE:
        return "over"
    if value < 1 - TOLERANCE:
        return "under"
    return "within"


def calibration(estimates: Sequence[Mapping]) -> list[dict]:
    """Per (model, GPU), then over every job (model and GPU ALL): how many jobs compare,
    the median ratio and the worst (the furthest from 1, either way) of hours and cost.
    A run that failed or ended short has no ratio (`estimate_table`): it compares nothing;
    nor does one not ended yet (running, stopped): its row says where it stands, but a job
    1% done, its start counted whole, is no measure of its estimate; one that ran on
    several GPU types (`THEN`) counts in ALL alone."""
    compared = [e for e in estimates if e["state"] == "succeeded" and not (
        _nan(e["training_hours_ratio"]) and _nan(e["usd_ratio"]))]
    if not compared:
        return []
    groups = sorted(by([e for e in compared if THEN not in e["gpu"]],
                       lambda e: (e["model"], e["gpu"])).items())
    groups.append(((ALL, ALL), compared))
    return [dict(zip(CALIBRATION_COLUMNS, (
        model, gpu, len(found), *summary(e["training_hours_ratio"] for e in found),
        *summary(e["usd_ratio"] for e in found)), strict=True))
        for (model, gpu), found in groups]


def summary(ratios: Iterable[float]) -> tuple[float, float]:
    """(median, worst) of `ratios`; worst is the one furthest from 1 by factor."""
    known = [float(r) for r in ratios if r is not None and math.isfinite(float(r))
             and float(r) > 0]
    if not known:
        return math.nan, math.nan
    worst = max(range(len(known)), key=lambda i: (abs(math.log(known[i])), -i))
    return float(statistics.median(known)), known[worst]


def _nan(value: object) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _ratio(actual: float, expected: float) -> float:
    if not (math.isfinite(actual) and math.isfinite(expected)) or expected <= 0:
        return math.nan
    return actual / expected

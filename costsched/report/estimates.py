"""Estimate versus actual: what each job's plan predicted at its launch (hours, cost,
preemptions) beside what the job did, and how well the estimates hold per model and GPU.

Hours are training hours (`training_hours`, not the billed hours of the spend tables),
like with like: the time between the first and the last step
the job reported on each instance (the basis of its measured speed: setup, the time it sat
stopped and the watcher's lag after it exited left out) against the plan's hours for the
steps made in that time. Without step readings, the hours its instances ran.

A job that has not finished is compared on the work it has done: its plan's figures times
the share of its steps it reported (a job half done after 6 hours, planned at 8, is
running at 1.5x its plan). Ratios are actual over expected: above 1 the job took longer
or cost more than planned. A run came in `under` its estimate when both ratios are below
1 - TOLERANCE, `over` it when either is above 1 + TOLERANCE, `within` it otherwise (the
words say where the run stands against its estimate, not against a deadline). A job whose
work was assumed (a task that gives none: an hour of work on its first GPU) has no estimate
of its own, and no row.
"""

from __future__ import annotations

from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.model import FINAL_STATES
from costsched.throughput import assumed_basis

TOLERANCE = 0.10
ESTIMATE_COLUMNS = [
    "job_id", "name", "model", "gpu", "state", "done", "expected_training_hours",
    "training_hours", "training_hours_ratio", "expected_usd", "usd", "usd_ratio",
    "expected_preemptions", "preemptions", "vs_estimate",
]
CALIBRATION_COLUMNS = ["model", "gpu", "jobs", "median_training_hours_ratio",
                       "worst_training_hours_ratio", "median_usd_ratio", "worst_usd_ratio"]
ALL = "(all)"


def until(jobs: pd.DataFrame, end: pd.Timestamp) -> pd.Series:
    """Per job (by id), the time its actual figures run to: the end of the report for a
    job that ended, else when its step was last read (its record's last write)."""
    final = jobs["state"].isin(FINAL_STATES)
    read = pd.to_datetime(jobs["updated_at"], utc=True).where(~final, end)
    return pd.Series(read.where(read < end, end).to_numpy(), index=jobs["id"].to_numpy())


def estimate_table(predictions: pd.DataFrame, jobs: pd.DataFrame, lives: pd.DataFrame,
                   egress: pd.DataFrame, recoveries: pd.Series,
                   readings: pd.DataFrame | None = None) -> pd.DataFrame:
    """ESTIMATE_COLUMNS per job with a prediction. `lives`: the jobs' placements charged
    over their whole lives up to `until` (job_id, start_at, end_at, usd); `egress`: their
    moves' egress (job_id, at, usd) up to then; `recoveries`: per job id, the recoveries
    after a lost instance; `readings`: their step readings (`store.jobs.readings`)."""
    if predictions.empty:
        return pd.DataFrame(columns=ESTIMATE_COLUMNS)
    info = jobs.set_index("id")
    rows = []
    by_job = lives.groupby("job_id").indices if len(lives) else {}
    for p in predictions.itertuples():
        basis = str(getattr(p, "throughput_source", ""))
        if p.job_id not in info.index or assumed_basis(basis):
            continue  # an assumed hour of work predicts nothing of the job's own
        job = info.loc[p.job_id]
        mine = lives.iloc[by_job.get(p.job_id, [])]
        done = 1.0 if job["state"] == "succeeded" else min(
            float(job["steps_done"]) / float(job["steps_total"]), 1.0)
        hours = usd = np.nan
        expected_hours, expected_usd = p.expected_hours * done, p.expected_usd * done
        if len(mine) and done > 0:
            hours = float((mine["end_at"] - mine["start_at"]).dt.total_seconds()
                          .clip(lower=0).sum()) / 3600  # on instances: stops left out
            usd = float(mine["usd"].sum()) + float(
                egress.loc[egress["job_id"] == p.job_id, "usd"].sum())
            trained = _trained(readings, int(p.job_id))
            if trained is not None:  # training only, against the plan's for its steps
                hours = trained[0]
                expected_hours = p.expected_hours * min(
                    trained[1] / float(job["steps_total"]), 1.0)
        hours_ratio, usd_ratio = _ratio(hours, expected_hours), _ratio(usd, expected_usd)
        rows.append((int(p.job_id), job["name"], p.model, f"{p.gpu_count}x{p.gpu_model}",
                     job["state"], done, expected_hours, hours, hours_ratio, expected_usd,
                     usd, usd_ratio, p.expected_preemptions * done,
                     int(recoveries.get(p.job_id, 0)), vs_estimate(hours_ratio, usd_ratio)))
    return pd.DataFrame(rows, columns=ESTIMATE_COLUMNS)


def _trained(readings: pd.DataFrame | None, job_id: int) -> tuple[float, float] | None:
    """(hours, steps) the job trained: between its first and last step readings on each
    instance; None without readings that span a step."""
    if readings is None or readings.empty:
        return None
    mine = readings[readings["job_id"] == job_id]
    steps = float((mine["last_step"] - mine["first_step"]).clip(lower=0).sum())
    seconds = float((mine["last_at"] - mine["first_at"]).dt.total_seconds()
                    .clip(lower=0).sum())
    return (seconds / 3600, steps) if steps > 0 and seconds > 0 else None


def vs_estimate(hours_ratio: float, usd_ratio: float) -> str:
    """'under', 'within' or 'over' the estimate (see the module); '' when nothing can be
    compared."""
    ratios = [r for r in (hours_ratio, usd_ratio) if np.isfinite(r)]
    if not ratios:
        return ""
    if max(ratios) > 1 + TOLERANCE:
        return "over"
    if max(ratios) < 1 - TOLERANCE:
        return "under"
    return "within"


def calibration(estimates: pd.DataFrame) -> pd.DataFrame:
    """Per (model, GPU), then over every job (model and GPU ALL): how many jobs compare,
    the median ratio and the worst (the furthest from 1, either way) of hours and cost."""
    compared = estimates[estimates["training_hours_ratio"].notna()
                         | estimates["usd_ratio"].notna()]
    if compared.empty:
        return pd.DataFrame(columns=CALIBRATION_COLUMNS)
    groups = [((m, g), f) for (m, g), f in compared.groupby(["model", "gpu"], sort=True)]
    groups.append(((ALL, ALL), compared))
    rows = [(model, gpu, len(f), *summary(f["training_hours_ratio"]),
             *summary(f["usd_ratio"]))
            for (model, gpu), f in groups]
    return pd.DataFrame(rows, columns=CALIBRATION_COLUMNS)


def summary(ratios: pd.Series) -> tuple[float, float]:
    """(median, worst) of `ratios`; worst is the one furthest from 1 by factor."""
    known = ratios[np.isfinite(ratios.astype(float)) & (ratios > 0)].astype(float)
    if known.empty:
        return np.nan, np.nan
    worst = known.iloc[int(np.argmax(np.abs(np.log(known.to_numpy()))))]
    return float(known.median()), float(worst)


def _ratio(actual: float, expected: float) -> float:
    if not (np.isfinite(actual) and np.isfinite(expected)) or expected <= 0:
        return np.nan
    return actual / expected

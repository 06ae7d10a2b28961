"""Throughputs costsched measures from its own jobs: steps per second on each placement,
from the step readings the watch keeps on it (and the steps logged at launch and stops),
stored per (model, GPU model, count, precision) with time and instance; plans use the
median of the newest runs over an estimate or a bundled figure (never over a user's own,
`costsched.throughput`)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

from costsched.lazy import pandas as pd
from costsched.model import InvalidInput
from costsched.service.stores import StoreLike, using
from costsched.service.values import as_time
from costsched.store import PriceStore
from costsched.store.signals import THROUGHPUT_COLUMNS
from costsched.throughput import ThroughputTable, model_key
from costsched.throughput_learned import learned_rows, placement_rates, progress_steps
from costsched.validation import MAX_GPUS

# Placements that ended longer ago than this are not looked at again (each pass reads the
# progress records of the rest).
RECENT = timedelta(days=7)


def measure(store: PriceStore, at: datetime) -> pd.DataFrame:
    """`measure_rows` as a frame (THROUGHPUT_COLUMNS)."""
    return pd.DataFrame(measure_rows(store, at), columns=THROUGHPUT_COLUMNS)


def measure_rows(store: PriceStore, at: datetime) -> list[tuple]:
    """Steps/s of every placement running or ended within RECENT before `at` with at least
    two progress records a minute apart, except placements measured and since closed, or
    forgotten: a row each (THROUGHPUT_COLUMNS)."""
    placements = store.jobs.placement_rows(None)
    if not placements:
        return []
    done = store.measured_throughputs.placements_measured()
    since = at - RECENT
    todo = [p for p in placements if p.end_at is None
            or (p.end_at >= since and p.id not in done)]
    if not todo:
        return []
    # The progress records of every placement's job, then the jobs of those that have two
    # (a rate needs two progress records): two reads, and no look at the other jobs.
    ids = sorted({p.job_id for p in todo})
    every = len(ids) == len({p.job_id for p in placements})  # then read without ids
    progress_of = _progress_of(store, None if every else ids)
    rated = [j for j in ids if len(progress_of.get(j, ())) >= 2]
    if not rated:
        return []
    records = {r.id: r for r in store.jobs.records(rated)}
    rows = []
    for job_id in rated:  # sorted, as `ids`
        record = records[job_id]
        spec = record.spec.get("spec", record.spec)  # stored as {"spec": ..., "source": ...}
        if not spec.get("model"):  # no model: its name is no model a job file may name
            continue
        model = str(spec["model"])
        precision = str(spec.get("precision") or "fp32")
        for p in (p for p in todo if p.job_id == job_id):
            found = placement_rates(progress_of[job_id], p.start_at, p.end_at)
            if found is None:
                continue
            sps, steps, seconds = found
            rows.append((None, model, p.gpu_model, int(p.gpu_count), precision, sps, steps,
                         seconds, at, p.instance, int(job_id), int(p.id)))
    return rows


def _progress_of(store: PriceStore, job_ids: list[int] | None
                 ) -> dict[int, list[tuple[datetime, float | None]]]:
    """Each job's progress records as (at, steps): the step readings the watch keeps on its
    placements (`gang_stalls.trained_readings`: each placement's first and last, a gang's
    repairs in place left out), from its first step on; for a job with none, the steps
    logged at its launch and stops (`progress` events). Every job's when `job_ids` is
    None. (The launch's step 0 is never mixed with readings: its span is set-up.)"""
    from costsched.gang_stalls import trained_readings

    read: dict[int, list[tuple[datetime, float | None]]] = {}
    for _, job, first, first_ts, last, last_ts in trained_readings(store, job_ids):
        read.setdefault(int(job), []).extend(
            [(datetime.fromtimestamp(first_ts, timezone.utc), float(first)),
             (datetime.fromtimestamp(last_ts, timezone.utc), float(last))])
    logged: dict[int, list[tuple[datetime, float | None]]] = {}
    for event in store.jobs.event_rows(job_ids, kinds=["progress"]):
        if event.job_id not in read:
            logged.setdefault(event.job_id, []).append((event.at,
                                                        progress_steps(event.detail)))
    return {**logged, **read}


def learn(store: StoreLike, at: datetime | str | None = None) -> int:
    """Measure the placements not measured yet (and those still running) and store them;
    the number stored."""
    when = as_time(at, "at")
    with using(store) as opened:
        found = measure_rows(opened, when)
        return opened.measured_throughputs.add(pd.DataFrame(
            found, columns=THROUGHPUT_COLUMNS)) if found else 0


def unlearned(store: StoreLike, shown: int = 3) -> str:
    """Why the runs of jobs that reported their steps taught nothing (`measure_rows` skips
    them), a line per reason: their files name no model, the name a measured speed is kept
    under (and what gives it); their step readings on any one instance span less than a minute
    (`placement_rates`), too short to measure, whatever the file names ('report' may still
    show their pace; a run still going is not named: it may yet be). '' when every such
    run was learned. At most `shown` jobs named on each line."""
    with using(store) as opened:
        placements = opened.jobs.placement_rows(None)
        placed = sorted({p.job_id for p in placements})
        if not placed:
            return ""
        progress = _progress_of(opened, placed)
        records = opened.jobs.records(sorted(progress)) if progress else []
    measurable = {r.id for r in records
                  if any(placement_rates(progress[r.id], p.start_at, p.end_at) is not None
                         for p in placements if p.job_id == r.id)}
    nameless = [r for r in records if r.id in measurable and not stored_model(r.spec)]
    running = {p.job_id for p in placements if p.end_at is None}  # may yet be measured
    short = [r for r in records if r.id not in measurable and r.id not in running]
    lines = []
    if nameless:
        one = len(nameless) == 1
        lines.append(f"no speed learned from job{'' if one else 's'} "
                     f"{_listed(nameless, shown)}: "
                     f"{'its job file names' if one else 'their job files name'} no `model:`, "
                     "the name a measured speed is kept under; add `model: NAME` (under "
                     "`costsched:` in a SkyPilot task) and the next run is learned")
    if short:
        one = len(short) == 1
        lines.append(f"no speed learned from job{'' if one else 's'} {_listed(short, shown)}: "
                     f"{'its' if one else 'their'} step readings (taken at each watch) "
                     "on any one instance span less than a minute, too short to learn a "
                     "speed for the throughput table from; `report` shows the pace of "
                     "shorter runs")
    return "\n".join(lines)


def _listed(jobs: list, shown: int) -> str:
    """'1 (a), 2 (b) and 3 (c)', or '1 (a), 2 (b), 3 (c) and 2 more' past `shown`."""
    named = [f"{r.id} ({r.name})" for r in jobs[:shown]]
    more = len(jobs) - len(named)
    return (", ".join(named[:-1]) + " and " + named[-1] if len(named) > 1 and not more
            else ", ".join(named) + (f" and {more} more" if more else ""))


def measured(store: StoreLike, model: str | None = None) -> pd.DataFrame:
    """The stored measurements (not forgotten), newest first."""
    with using(store) as opened:
        return opened.measured_throughputs.rows(model)


def forget(store: StoreLike, *, model: str | None = None, gpu_model: str | None = None,
           gpu_count: int | None = None) -> int:
    """Forget matching measurements (`model` spelled in any case or punctuation): plans
    stop using them; the number forgotten."""
    if gpu_count is not None and (isinstance(gpu_count, bool) or not isinstance(gpu_count, int)
                                  or not 1 <= gpu_count <= MAX_GPUS):
        raise InvalidInput(f"gpu_count {gpu_count!r}: expected a whole number from 1 to "
                           f"{MAX_GPUS}")
    with using(store) as opened:
        kept = opened.measured_throughputs
        if model is None:
            return kept.forget(gpu_model=gpu_model, gpu_count=gpu_count)
        names = {m for m in kept.rows()["model"] if model_key(m) == model_key(model)}
        if not names:  # none measured: a model of the table, or a typo (said, with the close)
            ThroughputTable.load().canonical(model)
        return sum(kept.forget(model=m, gpu_model=gpu_model, gpu_count=gpu_count)
                   for m in sorted(names))


def table_with_measured(store: StoreLike, user_file: Path | None = None,
                        precision: str = "fp32") -> ThroughputTable:
    """The throughput table plans use: bundled, costsched's measurements over it, the
    user's over both."""
    with using(store) as opened:
        rows = of_models(opened, opened.measured_throughputs.rows())
    return ThroughputTable.load(user_file, precision=precision,
                                learned=learned_rows(rows, precision) if len(rows) else None)


def of_models(store: PriceStore, rows: pd.DataFrame) -> pd.DataFrame:
    """Of costsched's measurements, those of a model: not those stored (before they were
    kept apart) under the name of a job whose file names no model, which is no model a
    job file may name (a later job's `model:` is never offered it, nor planned on it)."""
    ids = sorted({int(j) for j in rows["job_id"].dropna()}) if len(rows) else []
    if not ids:
        return rows
    unnamed = {r.id: model_key(r.name) for r in store.jobs.records(ids)
               if not stored_model(r.spec)}
    if not unnamed:
        return rows
    keys = rows["model"].map(model_key)
    own = [unnamed.get(int(j)) == k if j == j else False
           for j, k in zip(rows["job_id"], keys, strict=True)]
    return rows[[not o for o in own]]


def stored_model(stored: dict) -> str | None:
    """The model a stored job spec names, or None."""
    spec = stored.get("spec", stored) if isinstance(stored, dict) else {}
    model = spec.get("model") if isinstance(spec, dict) else None
    return str(model) if model else None

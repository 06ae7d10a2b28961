"""Jobs' measured speeds against the figures their plans used, from the store: the lines
`status`, the daemon's log and `plan` show when a job ran more than the flagging factor
(config `throughput.mismatch_factor`, default 1.5x) faster or slower than planned.

A flagged job's measured speed is also stored with costsched's measurements (the learned
layer of the throughput table): the next plan of that model uses it unless the user or the
job spec declares a figure, which is kept, and flagged where it is used (`plan_notes`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from costsched import gang_stalls
from costsched.cpu_work import CpuWork
from costsched.lazy import pandas as pd
from costsched.measured import (
    MEASURING,
    JobRate,
    Placed,
    Reading,
    ShownSpeed,
    Speed,
    SpeedCheck,
    basis_words,
    checked,
    job_rate,
    job_speeds,
    longest,
    measuring,
    mismatch_factor,
    placed_rows,
    reading_rows,
    shown_speed,
    spec_nodes,
    speed_rows,
    sps,
    stored_readings,
    stored_spec,
)
from costsched.model import InvalidInput
from costsched.passes import one_pass
from costsched.service.stores import StoreLike, using
from costsched.store import PriceStore
from costsched.store.job_rows import PlacementRow
from costsched.store.jobs import JobRecord
from costsched.store.signals import THROUGHPUT_COLUMNS
from costsched.throughput import ThroughputTable, model_key
from costsched.throughput_rest import MEASURED, PLANNED, RestTable
from costsched.vocabulary import prefixed
from costsched.work import REST_NOT_PRICED, own_steps, past_total, past_words, share_key

RECENT_JOBS = 20  # `plan` looks at this many newest jobs of a model that reported a step


def checks(records: Iterable[JobRecord], placements: pd.DataFrame | Sequence[Placed],
           table: ThroughputTable | None = None, factor: float | None = None,
           readings: pd.DataFrame | Sequence[tuple] | None = None) -> dict[int, SpeedCheck]:
    """Each job's measured speed beside its plan's (`SpeedCheck`), for the jobs of
    `records` that reported a step and trained long enough to be measured; `placements`
    and `readings` (`JobStore.reading_rows`, or their frames): theirs (more are ignored)."""
    return _checked(*_measured(records, _placed(placements), table, _read(readings)),
                    factor)


def _placed(placements: pd.DataFrame | Sequence[Placed]) -> list[Placed]:
    """Placements as `speed_rows` reads them: the store's rows as they are, a frame made
    rows."""
    return placed_rows(placements) if hasattr(placements, "columns") else \
        list(placements)  # type: ignore[arg-type]


def _read(readings: pd.DataFrame | Sequence[tuple] | None) -> list[Reading]:
    """Step readings as `speed_rows` reads them (`JobStore.reading_rows`, or its frame)."""
    if readings is None:
        return []
    if hasattr(readings, "columns"):
        return reading_rows(readings)  # type: ignore[arg-type]
    return stored_readings(readings)


def _measured(records: Iterable[JobRecord], placements: Sequence[Placed],
              table: ThroughputTable | None, readings: Sequence[Reading]
              ) -> tuple[list[JobRecord], list[Speed], dict]:
    """The jobs of `records` that reported a step, their `speed_rows` and their rates."""
    # A job whose steps are not its own has no plan's speed in its steps to compare with.
    records = [r for r in records if r.steps_done > 0 and paced(r.spec)]
    if not records or not placements:
        return [], [], {}
    table = table or ThroughputTable.load()
    models = table.model_keys()
    rates = {r.id: job_rate(r.spec, r.created_at, table, models) for r in records}
    mine = [p for p in placements if int(p.job_id) in rates]
    found = speed_rows(mine, {r.id: r.steps_done for r in records},
                       {r.id: r.updated_at for r in records}, rates, readings=readings)
    return records, found, rates


def _checked(records: list[JobRecord], found: list[Speed], rates: dict,
             factor: float | None) -> dict[int, SpeedCheck]:
    """Each of `records`' measured speed beside its plan's, from its `speed_rows`."""
    if not records:
        return {}
    limit = mismatch_factor(factor)
    tops = longest(found)  # each job's GPU it ran longest
    out = {}
    for r in records:
        if r.id not in tops:
            continue
        rate = rates[r.id]
        model = rate.model if rate is not None else str(stored_spec(r.spec).get("model")
                                                        or r.name)
        top = tops[r.id]
        basis = rate.basis(str(top.gpu_model), int(top.gpu_count)) if rate is not None else ""
        out[r.id] = checked(top, r.name, model, basis_words(basis), limit,
                            spec_nodes(r.spec))
    return out


def flag_new(store: PriceStore, at: datetime,
             factor: float | None = None) -> list[tuple[int, str]]:
    """The running jobs whose measured speed is beyond the factor from their plan's and
    were not flagged before: (job id, a line) each (the daemon logs them), their flag kept
    with their prediction (or in their log, for a job launched without one), and their
    measured speed stored with costsched's measurements (for a job whose file names its
    model)."""
    # Only a job that reported a step has a measured speed (`_measured`).
    records = [r for r in store.jobs.records(states=["running"]) if r.steps_done > 0]
    if not records:
        return []
    ids = [r.id for r in records]
    placed = store.jobs.placement_rows(ids)
    found = {j: c for j, c in checks(records, placed, factor=factor,
                                     readings=gang_stalls.trained_readings(store, ids)).items()
             if c.flagged}
    if not found:
        return []
    predicted = store.jobs.predicted(list(found))
    unplanned = [j for j in found if j not in predicted]
    noted = store.jobs.last_details(unplanned, "throughput") if unplanned else {}
    new = store.jobs.flag_predictions([j for j in found if j in predicted], at=at)
    new |= {j for j in unplanned if j not in noted}
    if not new:
        return []
    store.jobs.note_many({j: found[j].line() for j in unplanned if j in new}, "throughput",
                         at=at)
    # A job whose file names no model is its own model (its name): no model a job file
    # may name, so its speed is not kept with costsched's measurements.
    named = {r.id for r in records if stored_spec(r.spec).get("model")}
    rows = [_measurement(found[j], [p for p in placed if p.job_id == j], at)
            for j in sorted(new) if j in named]
    store.measured_throughputs.add_rows(
        dict(zip(THROUGHPUT_COLUMNS, r, strict=True)) for r in rows if r is not None)
    return [(j, found[j].line()) for j in sorted(new)]


def _measurement(c: SpeedCheck, placed: Sequence[PlacementRow], at: datetime
                 ) -> tuple | None:
    """A row of costsched's measurements: the job's speed on its GPU, as its newest
    placement there."""
    there = [p for p in placed if p.gpu_model == c.gpu_model and int(p.gpu_count) == c.gpu_count]
    if not there:
        return None
    newest = there[-1]
    end = newest.end_at if newest.end_at is not None else at
    seconds = max((end - newest.start_at).total_seconds(), 1.0)
    return (None, c.model, c.gpu_model, c.gpu_count, "fp32", c.measured_sps,
            c.measured_sps * seconds, seconds, at, str(newest.instance),
            c.job_id, int(newest.id))


def plan_notes(store: PriceStore, models: Iterable[str], factor: float | None = None
               ) -> list[str]:
    """For each of `models` (as plans name them), the newest of its recent jobs whose
    measured speed was beyond the factor from the figure its plan used: a line each, with
    both figures (a declared figure is kept; the user decides)."""
    wanted = {model_key(m): m for m in models}
    if not wanted:
        return []
    frame = store.jobs.list()
    if frame.empty:
        return []
    reported = frame[frame["steps_done"] > 0]
    keys = [model_key(str(stored_spec(s).get("model") or n))
            for s, n in zip(reported["spec"], reported["name"], strict=True)]
    reported = reported[[k in wanted for k in keys]].tail(RECENT_JOBS * len(wanted))
    if reported.empty:
        return []
    records = store.jobs.records([int(i) for i in reported["id"]])
    ids = [r.id for r in records]
    found = checks(records, store.jobs.placements_of(ids), factor=factor,
                   readings=gang_stalls.trained_readings(store, ids))
    newest: dict[str, SpeedCheck] = {}
    for job_id in sorted(found):
        c = found[job_id]
        if c.flagged:
            newest[model_key(c.model)] = c
    sources = {r.id: str(r.spec.get("source") or "") for r in records}
    return [_plan_note(wanted[k], c, sources.get(c.job_id, ""))
            for k, c in newest.items() if k in wanted]


def _plan_note(model: str, c: SpeedCheck, source: str) -> str:
    """A plan's line of a job's measured speed far from its plan's, and what changes the
    figure plans use: a figure its job file declares wins over any table, so the file is
    edited; any other is overridden by `costsched throughput set`."""
    line = c.line(savings=False)
    if model_key(c.name) != model_key(model):  # the job's name is not its model's
        line = prefixed(model, line)
    if c.basis in (basis_words("job spec"), basis_words("job spec f: 1 h on 1xV100, given")):
        where = f" in {source}" if source and not source.startswith("<") else ""
        return (f"{line}; the figure its job file declares is kept: edit its `throughputs:`"
                f"{where} to use the measured one")
    return (f"{line}; to plan on the measured speed: `costsched throughput set "
            f"'{c.model}' {c.gpu_model}:{c.gpu_count} {c.measured_sps:.4g}`")


def status_flags(statuses: Iterable, factor: float | None = None) -> dict[int, str]:
    """{job id: its flag line} for the jobs of `statuses` (`service.jobs.JobStatus`) whose
    measured speed is beyond the factor from their plan's, and for the running jobs whose
    speed is still being measured ('measuring ...'), from what `status` read (its rows:
    no frame)."""
    shown = list(statuses)
    # Only a job that reported a step has a speed.
    placed = [p for s in shown if s.record.steps_done > 0 and s.cost.charged
              for p in (c.placement for c in s.cost.charged)]
    if not placed:
        return {}
    read = _read([r for s in shown for r in s.readings])
    with one_pass():  # jobs of one spec share its rate
        records, found, rates = _measured([s.record for s in shown], placed, None, read)
        flagged = _checked(records, found, rates, factor)
    out = {j: c.finding() for j, c in flagged.items() if c.flagged}  # shown by job
    # A job whose work is assumed has no plan's speed to be judged against: no 'measuring'.
    running = {s.record.id for s in shown if s.record.state == "running"
               and s.assumed_work is None}
    for job_id, rows in job_speeds(found).items():
        if job_id in running and measuring(rows):
            out[job_id] = MEASURING
    return out


def shown_speeds(statuses: Iterable) -> dict[int, ShownSpeed]:
    """{job id: its measured speed as every view shows it (`measured.shown_speed`)} for
    the jobs of `statuses` (`service.jobs.JobStatus`) that have one, from what `status`
    read: their charged placements, step readings and steps, as the report reads them
    from the store (`report.speeds`), so that both say the same."""
    shown = [s for s in statuses if s.record.steps_done > 0 and s.cost.charged]
    if not shown:
        return {}
    placed = [c.placement for s in shown for c in s.cost.charged]
    read = _read([r for s in shown for r in s.readings])
    table = ThroughputTable.load()
    models = table.model_keys()
    with one_pass():  # jobs of one spec share its rate
        rates = {s.record.id: job_rate(s.record.spec, s.record.created_at, table, models)
                 for s in shown}
        found = job_speeds(speed_rows(placed, {s.record.id: s.record.steps_done for s in shown},
                                      {s.record.id: s.record.updated_at for s in shown},
                                      rates, readings=read))
    out = {}
    for s in shown:
        speed = shown_speed(found.get(s.record.id, []), s.record.spec, s.record.final,
                            s.record.steps_done)
        if speed is not None:
            out[s.record.id] = speed
    return out


def with_speeds(statuses: Sequence) -> list:
    """`statuses` (`service.jobs.JobStatus`), each with its `speed` (`shown_speeds`)."""
    found = shown_speeds(statuses)
    return [replace(s, speed=found.get(s.record.id)) for s in statuses]


def plan_notes_for(db: StoreLike, models: Iterable[str], factor: float | None = None
                   ) -> list[str]:
    """`plan_notes` from the store at `db` (a store, a URL or a path, None for the
    default)."""
    with using(db) as store:
        return plan_notes(store, models, factor)


# --- the speed the rest of a running job runs at ---------------------------------------------


def job_paces(store: PriceStore, records: Sequence[JobRecord],
              tables: Mapping[int, tuple[str, ThroughputTable]]) -> dict[int, list[Speed]]:
    """Each of `records`' speeds (`speed_rows`, its rows) by the table it is priced with
    (`tables`: {job id: (its model, its table)}): from one read of their placements and
    one of their step readings. Jobs that reported no step, or whose work is assumed or
    given as hours on a reference GPU (their steps are not the table's), have none."""
    mine = [r for r in records if r.steps_done > 0 and r.id in tables
            and paced(r.spec)]
    if not mine:
        return {}
    ids = [r.id for r in mine]
    rates = {j: JobRate(*tables[j]) for j in ids}
    found = speed_rows(store.jobs.placement_rows(ids), {r.id: r.steps_done for r in mine},
                       {r.id: r.updated_at for r in mine}, rates,
                       readings=stored_readings(gang_stalls.trained_readings(store, ids)))
    return job_speeds(found)



def paced(stored: Mapping) -> bool:
    """Whether a stored job's steps are its own (so its measured speed prices the rest):
    not an assumed hour of work, nor hours of work on a reference GPU (`work.own_steps`)."""
    return own_steps(stored)


def rest_table(table: ThroughputTable, model: str, stored: Mapping,
               rows: Sequence[Speed]) -> ThroughputTable:
    """The table the rest of a job is priced with: at its measured pace (`RestTable`)
    where it has a measured speed, else `table` as it is (CPU work: as it is)."""
    if isinstance(table, CpuWork) or not paced(stored) or \
            not any(s.measured_sps == s.measured_sps for s in rows):
        return table
    return RestTable(table, model, rows)


def short_work(job: JobRecord | object) -> str:
    """Why the rest of a running job cannot be priced: its work is not given (its total is
    not known: an assumed hour is no measure of what is left), or it reported a step beyond
    the steps it declares (the declared work is short: what is left is not known, never 0);
    for a job whose work is hours on a reference GPU (its steps not `paced`) that reported
    a step, that step, its measured pace where `job` is a `JobStatus` with readings, and
    the key that gives a share (`work.share_key`); '' otherwise. `job`: its record or its
    status."""
    record: JobRecord = getattr(job, "record", job)  # type: ignore[assignment]
    if record.state != "running":
        return ""
    if record.steps_total is None:
        return REST_NOT_PRICED  # one sentence, one line
    done = max(float(record.steps_done or 0.0), float(record.checkpoint_step or 0.0))
    total = float(record.steps_total)
    if not paced(record.spec):
        if not done > 0:
            return ""
        pace = getattr(job, "pace", None)
        at = f" at {sps(pace)} steps/s measured" if pace else ""
        return (f"step {done:,.0f}{at}: {share_key(record.spec)}; its rest is priced as "
                "all of its hours")
    if not past_total(done, total):
        return ""
    return f"{past_words(done, total, record.spec)}; the rest cannot be priced"


def status_rests(statuses: Iterable) -> dict[int, dict]:
    """{job id: the speed the rest of it runs at} for the running jobs of `statuses`
    (`service.jobs.JobStatus`), on the GPU of its open placement, as the decider and the
    budgets' forecast price it (`rest_table`): {"steps_per_second", "source" ("measured"
    or "planned"), "work_short" (why the rest cannot be priced, else None)}."""
    shown = [s for s in statuses if s.record.state == "running"
             and s.open_placement is not None]
    if not shown:
        return {}
    placed = [p for s in shown if s.record.steps_done > 0
              for p in (c.placement for c in s.cost.charged)]
    read = _read([r for s in shown for r in s.readings])
    table = ThroughputTable.load()
    with one_pass():  # jobs of one spec share its rate
        _, found, _ = _measured([s.record for s in shown], placed, table, read)
        rates = {s.record.id: job_rate(s.record.spec, s.record.created_at, table,
                                       table.model_keys()) for s in shown}
    rows = job_speeds(found)
    out = {}
    for s in shown:
        rate, short = rates[s.record.id], short_work(s.record)
        gpu, count = str(s.open_placement["gpu_model"]), int(s.open_placement["gpu_count"])
        speed, source = float("nan"), PLANNED
        if rate is not None:
            paced_table = rest_table(rate.table, rate.model, s.record.spec,
                                     rows.get(s.record.id, []))
            try:
                speed = paced_table.get(rate.model, gpu, count).steps_per_second
                source = MEASURED if paced_table is not rate.table else PLANNED
            except InvalidInput:
                pass
        out[s.record.id] = {"steps_per_second": speed, "source": source,
                            "work_short": short or None}
    return out

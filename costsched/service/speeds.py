"""Jobs' measured speeds against the figures their plans used, from the store: the lines
`status`, the daemon's log and `plan` show when a job ran more than the flagging factor
(config `throughput.mismatch_factor`, default 1.5x) faster or slower than planned.

A flagged job's measured speed is also stored with costsched's measurements (the learned
layer of the throughput table): the next plan of that model uses it unless the user or the
job spec declares a figure, which is kept, and flagged where it is used (`plan_notes`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from costsched.lazy import pandas as pd
from costsched.measured import (
    MEASURING,
    SpeedCheck,
    basis_words,
    checked,
    job_rate,
    longest,
    measuring,
    mismatch_factor,
    speeds,
    stored_spec,
)
from costsched.passes import one_pass
from costsched.service.stores import StoreLike, using
from costsched.store import PriceStore
from costsched.store.jobs import JobRecord, readings_frame
from costsched.store.signals import THROUGHPUT_COLUMNS
from costsched.throughput import ThroughputTable, model_key
from costsched.vocabulary import prefixed

RECENT_JOBS = 20  # `plan` looks at this many newest jobs of a model that reported a step


def checks(records: Iterable[JobRecord], placements: pd.DataFrame,
           table: ThroughputTable | None = None, factor: float | None = None,
           readings: pd.DataFrame | None = None) -> dict[int, SpeedCheck]:
    """Each job's measured speed beside its plan's (`SpeedCheck`), for the jobs of
    `records` that reported a step and trained long enough to be measured; `placements`
    and `readings` (`JobStore.readings`): theirs (more are ignored)."""
    return _checked(*_measured(records, placements, table, readings), factor)


def _measured(records: Iterable[JobRecord], placements: pd.DataFrame,
              table: ThroughputTable | None, readings: pd.DataFrame | None
              ) -> tuple[list[JobRecord], pd.DataFrame, dict]:
    """The jobs of `records` that reported a step, their `speeds` and their rates."""
    records = [r for r in records if r.steps_done > 0]
    if not records or placements.empty:
        return [], pd.DataFrame(columns=["job_id", "measuring"]), {}
    table = table or ThroughputTable.load()
    models = {model_key(m) for m in table.models()}
    rates = {r.id: job_rate(r.spec, r.created_at, table, models) for r in records}
    mine = placements[placements["job_id"].isin(list(rates))]
    found = speeds(mine, {r.id: r.steps_done for r in records},
                   {r.id: pd.Timestamp(r.updated_at) for r in records}, rates,
                   readings=readings)
    return records, found, rates


def _checked(records: list[JobRecord], found: pd.DataFrame, rates: dict,
             factor: float | None) -> dict[int, SpeedCheck]:
    """Each of `records`' measured speed beside its plan's, from its `speeds` rows."""
    if not records:
        return {}
    limit = mismatch_factor(factor)
    tops = longest(found)  # each job's GPU it ran longest: one sort for every job
    out = {}
    for r in records:
        if r.id not in tops:
            continue
        rate = rates[r.id]
        model = rate.model if rate is not None else str(stored_spec(r.spec).get("model")
                                                        or r.name)
        top = tops[r.id]
        basis = rate.basis(str(top.gpu_model), int(top.gpu_count)) if rate is not None else ""
        nodes = stored_spec(r.spec).get("num_nodes", 1)
        nodes = nodes if isinstance(nodes, int) and not isinstance(nodes, bool) else 1
        out[r.id] = checked(top, r.name, model, basis_words(basis), limit, nodes)
    return out


def flag_new(store: PriceStore, at: datetime,
             factor: float | None = None) -> list[tuple[int, str]]:
    """The running jobs whose measured speed is beyond the factor from their plan's and
    were not flagged before: (job id, a line) each (the daemon logs them), their flag kept
    with their prediction (or in their log, for a job launched without one), and their
    measured speed stored with costsched's measurements."""
    # Only a job that reported a step has a measured speed (`_measured`).
    records = [r for r in store.jobs.records(states=["running"]) if r.steps_done > 0]
    if not records:
        return []
    ids = [r.id for r in records]
    placed = store.jobs.placements_of(ids)
    found = {j: c for j, c in checks(records, placed, factor=factor,
                                     readings=store.jobs.readings(ids)).items()
             if c.flagged}
    if not found:
        return []
    predicted = set(store.jobs.predictions(list(found))["job_id"])
    unplanned = [j for j in found if j not in predicted]
    noted = store.jobs.last_details(unplanned, "throughput") if unplanned else {}
    new = store.jobs.flag_predictions([j for j in found if j in predicted], at=at)
    new |= {j for j in unplanned if j not in noted}
    store.jobs.note_many({j: found[j].line() for j in unplanned if j in new}, "throughput",
                         at=at)
    rows = [_measurement(found[j], placed[placed["job_id"] == j], at) for j in sorted(new)]
    store.measured_throughputs.add(pd.DataFrame(
        [r for r in rows if r is not None], columns=THROUGHPUT_COLUMNS))
    return [(j, found[j].line()) for j in sorted(new)]


def _measurement(c: SpeedCheck, placed: pd.DataFrame, at: datetime) -> tuple | None:
    """A row of costsched's measurements: the job's speed on its GPU, as its newest
    placement there."""
    there = placed[(placed["gpu_model"] == c.gpu_model)
                   & (placed["gpu_count"].astype(int) == c.gpu_count)]
    if there.empty:
        return None
    newest = there.iloc[-1]
    end = newest["end_at"] if pd.notna(newest["end_at"]) else pd.Timestamp(at)
    seconds = max((end - newest["start_at"]).total_seconds(), 1.0)
    return (None, c.model, c.gpu_model, c.gpu_count, "fp32", c.measured_sps,
            c.measured_sps * seconds, seconds, pd.Timestamp(at), str(newest["instance"]),
            c.job_id, int(newest["id"]))


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
                   readings=store.jobs.readings(ids))
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
    speed is still being measured ('measuring ...'), from what `status` read."""
    shown = list(statuses)
    # Only a job that reported a step has a speed: without one, no frame is built.
    frames = [s.cost.placements for s in shown if s.record.steps_done > 0 and s.cost.charged]
    if not frames:
        return {}
    placed = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    read = [r for s in shown for r in s.readings]
    readings = readings_frame(read) if read else None
    with one_pass():  # jobs of one spec share its rate
        records, found, rates = _measured([s.record for s in shown], placed, None, readings)
        flagged = _checked(records, found, rates, factor)
    out = {j: c.finding() for j, c in flagged.items() if c.flagged}  # shown by job
    # A job whose work is assumed has no plan's speed to be judged against: no 'measuring'.
    running = {s.record.id for s in shown if s.record.state == "running"
               and s.assumed_work is None}
    for job_id, rows in found.groupby("job_id").indices.items():
        if int(job_id) in running and measuring(found.iloc[rows]):
            out[int(job_id)] = MEASURING
    return out


def plan_notes_for(db: StoreLike, models: Iterable[str], factor: float | None = None
                   ) -> list[str]:
    """`plan_notes` from the store at `db` (a store, a URL or a path, None for the
    default)."""
    with using(db) as store:
        return plan_notes(store, models, factor)

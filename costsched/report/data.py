"""The figures of a cost report: spend per job, cloud and day, egress per move, savings
against two baselines, the moves with their costs, and the budgets at risk.

Everything is charged as `costsched.costs` charges it: each placement (clipped to the
period, and split at midnight UTC) integrated over its stored price history. A report over
many jobs and months is one pass: the jobs, placements, moves and move events are read once
each, and every interval it prices (the pieces of placements, their on-demand twins, the
launch-choice baselines, the budgets' whole lives, the moves' idle time) is charged in one
`costs.charge` call, so the price history is read once, over the span they cover.

The tables are computed once, on plain rows (`Report.rows`: lists of dicts by column),
which the report's text and JSON are written from without pandas; `Report.jobs` and the
other tables as frames (the Python API, notebooks, the HTML file's charts) are built from
those rows (`report.frames`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

from costsched import checkpoint_sizes, own_budget
from costsched.amounts import CHARGED, Scale, no_noise
from costsched.costs import Move, egress_rows, nodes_of
from costsched.gang_stalls import stopped_first_of
from costsched.job_names import chosen_words, is_pattern, picks
from costsched.measured import JobRate, job_rate, mismatch_factor
from costsched.model import NODE_RECOVERY, RECOVERY_NOTE, InvalidInput, recoveries
from costsched.passes import one_pass
from costsched.price_ages import (
    Stale,
    charged_note,
    stale_after_hours,
    stale_charges,
)
from costsched.report import estimates, lost_work, useful
from costsched.report.columns import (
    BUDGET_COLUMNS,
    CLOUD_COLUMNS,
    DAY_COLUMNS,
    JOB_COLUMNS,
)
from costsched.report.failed import failed_runs
from costsched.report.moves import gang_events, move_table, moved_into, target_running_times
from costsched.report.outside import Causes, causes_of
from costsched.report.paces import estimated_lines, placement_paces
from costsched.report.pieces import (
    Piece,
    charge_parts,
    on_demand_twin,
    pieces,
    static_stays,
)
from costsched.report.speeds import speed_table, speeds, trained_readings
from costsched.report.sums import column_sum, group_sums, nan_to_none
from costsched.report.tables import NAMES, TABLES
from costsched.report.written import estimate_parts, repriced_rows, row_parts, scaled_parts
from costsched.store import PriceStore
from costsched.store.job_rows import EventRow, JobRecord, PlacementRow
from costsched.store.moves import MoveRecord
from costsched.throughput import ThroughputTable, model_key
from costsched.validation import as_time
from costsched.vocabulary import did_you_mean, restart_move

if TYPE_CHECKING:
    import pandas as pd

NEAR_BUDGET = 0.8  # a job that spent this share of its budget is reported

_BASELINE_COLUMNS = ("on_demand_usd", "saved_vs_on_demand_usd", "launch_choice_usd",
                     "saved_vs_launch_choice_usd")


@dataclass(frozen=True, eq=False)
class Report:
    """A cost report over [since, until] (since None: from the first placement).

    `rows`: each table (`report.tables.TABLES`) as rows, by name; the same tables as
    frames are its attributes of those names:
    jobs: per job, its spend in the period and the two baselines (see `build`).
    clouds: per cloud, compute on it and the egress it billed (moves out of it).
    days: per UTC day, job and cloud (egress on the day of the move, on the source cloud).
    egress: one row per move that copied a checkpoint (`costs.egress_costs`).
    moves: the migrations and recoveries started in the period, with their costs.
    budgets: the jobs that spent at least 80% of their budget (over their whole life), and
      those stopped at it.
    speeds: per job that reported a step, its measured speed beside the one its plan used
      (`flag`: the words when they differ by more than the flagging factor).
    estimates: per job launched with a plan, what the plan predicted beside what happened
      (`costsched.report.estimates`); calibration: the same per model and GPU, and overall.
    """

    since: datetime | None
    until: datetime
    rows: Mapping[str, list[dict]] = field(repr=False)
    # The precision of charged figures (`amounts.CHARGED`): the text and HTML
    # write the spend at it (`tables`); JSON keeps the exact figures.
    scale: Scale | None = None
    # What its spend tables' compute and hours are made of (`report.written.row_parts`):
    # each is written as the sum of its parts as written, as `status` lists a job's.
    parts: Mapping[str, list[dict]] = field(default_factory=dict, repr=False)
    # The jobs `--job` chose, in words (`job_names.chosen_words`) and by id; every job
    # when `chosen` is '' (no --job).
    chosen: str = ""
    chosen_ids: tuple[int, ...] = ()
    # The prices its spend in the period was charged from older than `prices.stale_after`
    # (`price_ages.Stale`), None when none is.
    stale: Stale | None = None

    def stale_note(self) -> str:
        """The note its text and JSON give when its spend was charged from old prices
        ('' when it was not)."""
        return "" if self.stale is None else charged_note(self.stale, "the spend and savings")

    def tables(self) -> dict[str, Any]:
        """Its tables by name, with the charged figures' precision under "scale" where they
        are written at it and what the spend tables' cells are made of under "parts": what
        the views write the report from (`report.cells`)."""
        if self.scale is None:
            return dict(self.rows)
        return {**self.rows, "scale": self.scale.places(), "parts": dict(self.parts)}

    @cached_property
    def jobs(self) -> pd.DataFrame:
        return _frame(self, "jobs")

    @cached_property
    def clouds(self) -> pd.DataFrame:
        return _frame(self, "clouds")

    @cached_property
    def days(self) -> pd.DataFrame:
        return _frame(self, "days")

    @cached_property
    def egress(self) -> pd.DataFrame:
        return _frame(self, "egress")

    @cached_property
    def moves(self) -> pd.DataFrame:
        return _frame(self, "moves")

    @cached_property
    def budgets(self) -> pd.DataFrame:
        return _frame(self, "budgets")

    @cached_property
    def speeds(self) -> pd.DataFrame:
        return _frame(self, "speeds")

    @cached_property
    def estimates(self) -> pd.DataFrame:
        return _frame(self, "estimates")

    @cached_property
    def calibration(self) -> pd.DataFrame:
        return _frame(self, "calibration")

    def job_ids(self) -> set[int]:
        """The ids of the jobs it covers (a report of one job: that job's)."""
        return {int(r["job_id"]) for r in self.rows["jobs"]}

    @property
    def placed(self) -> bool:
        """Whether anything was placed in the period (compute, egress or a move in it)."""
        return bool(self.rows["jobs"] or self.rows["moves"])

    def flags(self) -> list[str]:
        """The speed table's flags (a job off its plan's speed), in its order."""
        return [r["flag"] for r in self.rows["speeds"] if r["flag"]]

    def places(self, name: str) -> dict[str, int]:
        """The precision of the table `name`'s dollars and hours (`cells.places_of`)."""
        from costsched.report.cells import places_of

        return places_of(name, self.rows[name], self.tables())

    def document(self) -> dict:
        """The report as `report --json` writes it (but the budgets now, which the
        command adds): its period (and whether anything was placed in it), the jobs
        `--job` chose (null: every job), totals over them and every table by name, NaN
        as None, and what each table says (`notes`, by table: the text's and the HTML
        file's words)."""
        return {"since": self.since, "until": self.until, "placed": self.placed,
                "chosen": {"jobs": self.chosen, "job_ids": list(self.chosen_ids)}
                if self.chosen else None,
                "totals": self.totals,
                "stale_prices": None if self.stale is None else {
                    "count": self.stale.count, "total": self.stale.total,
                    "oldest_at": self.stale.oldest_at,
                    "oldest_age_hours": round(self.stale.oldest_hours, 1),
                    "stale_after_hours": self.stale.stale_after_hours,
                    "note": self.stale_note().removeprefix("note: ")},
                **{name: [{k: nan_to_none(v) for k, v in row.items()} for row in rows]
                   for name, rows in self.rows.items()},
                "notes": {t.name: t.note for t in TABLES if t.note}}

    @property
    def totals(self) -> dict[str, float | None]:
        """USD over every job (a baseline or saving over the jobs it applies to, None when
        none: `saves`), its billed hours (the placements') and instance-hours (N nodes: N
        instances an hour), and what its failed runs cost (`failed_usd`)."""
        return totals(self.rows["jobs"], self.rows.get("failed_runs"))


def totals(jobs: Sequence[Mapping[str, Any]],
           runs: Sequence[Mapping[str, Any]] | None = None
           ) -> dict[str, float | None]:
    """`Report.totals` of the per-job rows `jobs` (a frame's records too); its failed
    runs' spend that of `runs` (`report.failed`), else that of the failed jobs."""
    sums = {c: column_sum([_float(r[c]) for r in jobs], nan_when_none=True)
            for c in JOB_COLUMNS[4:]}
    each = column_sum([_float(r["billed_hours"]) * _float(r.get("nodes"), 1.0) for r in jobs])
    failed = column_sum([_float(r["usd"]) for r in runs] if runs is not None
                        else [_float(r["usd"]) for r in jobs if r.get("state") == "failed"])
    out = {**sums, "instance_hours": each, "failed_usd": failed}  # (its spend, apart)
    return {c: (None if math.isnan(v) else no_noise(v)) if c in _BASELINE_COLUMNS else
            (0.0 if math.isnan(v) else v) for c, v in out.items()}


def _float(value: object, missing: float = math.nan) -> float:
    return missing if value is None or value != value else float(value)  # type: ignore[arg-type]


def _frame(report: Report, name: str) -> pd.DataFrame:
    from costsched.report.frames import table_frame

    return table_frame(name, report.rows[name])


def build(store: PriceStore, *, since: datetime | str | None = None,
          until: datetime | str | None = None, job: int | str | None = None,
          now: datetime | str | None = None, factor: float | None = None,
          stale_after: float | None = None) -> Report:
    """The cost report of the jobs in `store` (or of `job`, an id or a name) over the
    period [since, until], as of `now` (default: the current time; an open placement is
    charged up to the earlier of `until` and `now`).

    Savings are a baseline's USD less the job's spend (compute and egress) in the period,
    each baseline charged over the time it would take for the work the job did at the
    job's measured speed (`costsched.measured`: its reported step over its placements'
    hours), never at a declared figure:

    - on-demand: each piece of each placement in the period on the on-demand price of the
      same instance type in the same region, by the same rule as the job's own
      placements: the stored on-demand history, else the catalog's list prices; NaN when
      neither knows the type. Each piece's hours times the share of the job's hours its
      work needed (`report.useful.shares`: its training hours and one start a run, not
      its preemptions' redone steps and setups).
    - static: the same work on the job's launch-time choice (its first placement's
      offering) kept to the end. The work is the step the job reported (its progress),
      when the period holds the job's whole life up to that report; otherwise the steps its
      placements made in the period (each piece's hours x the job's measured speed on its
      GPUs); at most the job's steps. Its hours are those steps / the job's measured speed
      on that offering's GPUs (by its table's ratio where it never ran there) / 3600, laid
      over the job's runs in the period (from the start of its first piece; a user's stop
      and start ends a run and begins one, as the choice kept would have stopped too: each
      run filled in turn, the last one to the end of the work), charged over that
      offering's own stored price history (as the job's placements are; the same share
      of its hours as on-demand's), not at its
      launch price: a job that ran on its launch choice alone saves nothing against it.
      NaN for a job that reported no step (no measured speed).

    `factor`: measured over planned speed (either way) beyond which `speeds` flags a job
    (default: the configuration's `throughput.mismatch_factor`). `stale_after`: the hours
    beyond which a price the spend was charged from is old (`stale`; default: the
    configuration's `prices.stale_after`, as `plan` reads it).

    A saving that does not apply (no baseline price, an unresolvable spec, no measured
    speed, no compute in the period) is NaN, and None in `totals` when it applies to no
    job: never 0.
    """
    now_at = as_time(now, "now")
    start = None if since is None else as_time(since, "since")
    asked = None if until is None else as_time(until, "until")
    end = now_at if asked is None else min(asked, now_at)
    if start is not None and asked is not None and start >= asked:
        raise InvalidInput(f"since {start:%Y-%m-%dT%H:%MZ}: expected a time before "
                           f"{asked:%Y-%m-%dT%H:%MZ} (until, the end of the period)")
    if start is not None and start >= end:  # a period that has not begun yet
        raise InvalidInput(f"since {start:%Y-%m-%dT%H:%MZ}: the period begins after now "
                           f"({now_at:%Y-%m-%dT%H:%MZ}): nothing can have been spent in it "
                           "yet")
    with one_pass():  # each distinct stored spec is resolved once
        jobs = reported_jobs(store, job)
        built = _build(store, jobs, start, end, factor, stale_after)
    if job is None:
        return built
    return replace(built, chosen=chosen_words(str(job), [(j.id, j.name) for j in jobs]),
                   chosen_ids=tuple(j.id for j in jobs))


def _build(store: PriceStore, jobs: list[JobRecord], start: datetime | None,
           end: datetime, factor: float | None, stale_after: float | None = None) -> Report:
    names = {j.id: j.name for j in jobs}
    by_id = {j.id: j for j in jobs}
    every = store.jobs.placement_rows([jobs[0].id] if len(jobs) == 1 else None)
    placed = [p for p in every if p.job_id in names]
    # What ran: a placement whose instance still waits for capacity is not billed yet.
    ran = [p for p in placed if not p.waiting]

    cut = pieces(ran, start, end)
    all_moves = egress_rows(placed,
                            checkpoint_gb={j.id: own_budget.checkpoint_gb(j.spec) for j in jobs},
                            measured=_measured(jobs, placed))
    egress = [m for m in all_moves if m.at <= end and (start is None or m.at >= start)]

    budgets = own_budget.budgets(store, jobs)  # as `start --budget` left them
    lives = [c.placement for c in pieces([p for p in ran if p.job_id in budgets], None, end)]
    job_moves = store.moves.of_jobs(names)
    into, reasons = moved_into(job_moves, placed), {p.id: p.reason for p in placed}
    rates = _rates(jobs, {p.job_id for p in placed})
    # The baselines take the pace the job kept over its placements' hours, setup included
    # (a launch choice kept would have paid its setup too); the speed table, its training
    # speed (setup left out: a slow start is no slow training).
    done = {j.id: j.steps_done for j in jobs}
    read_at = {j.id: j.updated_at for j in jobs}
    readings = trained_readings(store, list(names))  # a gang's repairs left out
    paced, guessed = placement_paces(ran, done, read_at, rates, readings)  # each its own steps
    measured = speeds(ran, done, read_at, rates, readings)
    nodes = {j.id: nodes_of(j.spec) for j in jobs}
    gang = gang_events(store, names)
    states = [e for e in store.jobs.event_rows(names, ["state"]) if e.at <= end]
    # A gang's repair its job was stopped in, before the gang resumed: no recovery.
    stopped_first = stopped_first_of(gang, states)
    moves, idle = move_table(job_moves, names, placed, all_moves, start, end,
                             target_running_times(store, job_moves, start, end),
                             gang, store.jobs.event_rows(list(names), [RECOVERY_NOTE]),
                             lost_work.paces(measured), nodes, stopped_first)
    share = useful.shares(by_id, ran, readings, end)  # the work done, not the overhead
    each = useful.placement_shares(by_id, ran, readings, end)  # ... on each placement
    stays = static_stays(by_id, ran, cut, start, end, paced, rates, share)
    predicted = estimates.predictions(store, list(names))
    # A job's actual dollars beside its estimate run to the end of the report, as its
    # spend does: one figure per job (`_one_spend`).
    runs = [c.placement for c in pieces([p for p in ran if p.job_id in predicted], None, end)]
    dates: list[datetime | None] = []
    charged = charge_parts(
        store, end, nodes,
        placed={"pieces": [c.placement for c in cut],
                "on_demand": [on_demand_twin(c.placement) for c in cut],
                "lives": lives, "runs": runs},
        what_ifs={"static": stays, "idle": [p for _, p in idle]}, dates=dates)
    # How old the prices the spend in the period was charged from are (`plan`'s rule).
    stale = stale_charges([(c.placement.offering_key, since, c.placement.end_at)
                           for c, since, got in zip(cut, dates, charged["pieces"],
                                                    strict=False) if got.hours > 0],
                          stale_after_hours() if stale_after is None else stale_after)

    spent_on = [(c, got.hours, got.usd,
                 math.nan if twin.price_source == "placement" else
                 twin.usd * each.get(c.placement.id, share.get(c.placement.job_id, 1.0)))
                for c, got, twin in zip(cut, charged["pieces"], charged["on_demand"],
                                        strict=True)]
    static = {j: got[0] for j, got in group_sums(
        [p.job_id for p in stays], [got.usd for got in charged["static"]],
        nan_when_none=True).items()}
    idle_usd = group_sums([n for n, _ in idle], [got.usd for got in charged["idle"]])
    for n, move in enumerate(moves):
        move["idle_usd"] = idle_usd[n][0] if n in idle_usd else 0.0
        move["usd"] = move["idle_usd"] + move["egress_usd"]
    spent = {j: got[0] for j, got in group_sums(
        [p.job_id for p in lives], [got.usd for got in charged["lives"]]).items()}
    run_egress = [m for m in all_moves if m.at <= end]
    held = _in_period(jobs, placed, start, end)  # the speeds and estimates of these alone
    ran = [(p, got.usd) for p, got in zip(runs, charged["runs"], strict=True)]
    job_rows = _job_table(jobs, spent_on, egress, static, nodes, useful.on_launch_choice(placed),
                          useful.shown_states(jobs, {int(r[1]) for r in readings}),
                          useful.on_demand_alone(placed))
    job_parts = row_parts({"jobs": job_rows}, spent_on)["jobs"]
    whole = _one_spend(job_rows, job_parts, placed, start)
    estimated = [row for row in estimates.estimate_table(
        predicted, by_id, ran, run_egress, _recoveries(job_moves, gang, stopped_first),
        readings,
        {j: usd for j, (usd, _) in whole.items()}, estimates.until(jobs, end),
        _causes(store, [j for j in predicted if j in held], end)) if row["job_id"] in held]
    rows = {
        "jobs": job_rows,
        "clouds": _cloud_table(spent_on, egress),
        "days": _day_table(spent_on, egress, names),
        "moves": moves,
        "egress": [_egress_row(m, names, into, reasons) for m in egress],
        "budgets": _budget_table(jobs, budgets, spent, all_moves, end,
                                 _stopped_at_budget(store, jobs, budgets)),
        "speeds": [row for row in speed_table(by_id, measured, rates, predicted,
                                              mismatch_factor(factor))
                   if row["job_id"] in held],
        "estimates": estimated, "calibration": estimates.calibration(estimated),
    }
    repriced = repriced_rows(spent_on, [got.price_source for got in charged["pieces"]],
                             names, nodes)  # beside the tables: `report.written`
    scale, parts = scaled_parts(rows, spent_on, CHARGED,
                                [p for p in placed if p.end_at is None])
    return Report(since=start, until=end, rows={
        **{name: rows[name] for name in NAMES}, "repriced": repriced,
        "failed_runs": failed_runs(  # each run that failed, with its spend in the period
            states,
            [(s[0].placement, s[2]) for s in spent_on], egress, names),
        "estimated_baselines": estimated_lines(job_rows, guessed)}, stale=stale,
                  scale=scale, parts={**parts, "estimates": estimate_parts(
                      estimated, ran, run_egress, {j: made for j, (_, made) in whole.items()})})


def _one_spend(job_rows: Sequence[Mapping[str, Any]], parts: Sequence[Mapping[str, list]],
               placed: Sequence[PlacementRow], start: datetime | None
               ) -> dict[int, tuple[float, list[float]]]:
    """{job id: (its total, what it is made of as the spend table writes it: its
    placements' charges and its egress)} of each job whose whole life the period holds:
    the one figure its estimate's dollars read (a job the period cuts is compared on its
    whole life's spend, another figure, as the estimates' note says)."""
    first: dict[int, datetime] = {}
    for p in placed:
        first[p.job_id] = min(p.start_at, first.get(p.job_id, p.start_at))
    out = {}
    for row, made in zip(job_rows, parts, strict=True):
        job = int(row["job_id"])
        if start is None or (job in first and first[job] >= start):
            egress = [row["egress_usd"]] if row["egress_usd"] else []
            out[job] = (float(row["usd"]), [*made["compute_usd"], *egress])
    return out


def _in_period(jobs: Sequence[JobRecord], placed: Sequence[PlacementRow],
               start: datetime | None, end: datetime) -> set[int]:
    """The ids of the jobs the period holds: those with a placement in it (running or
    waiting for capacity), and those never placed that were made by its end."""
    met = {p.job_id for p in placed if p.start_at <= end
           and (start is None or p.end_at is None or p.end_at >= start)}
    ever = {p.job_id for p in placed}
    return met | {j.id for j in jobs if j.id not in ever and j.created_at <= end}


def _causes(store: PriceStore, job_ids: Sequence[int], end: datetime
            ) -> dict[int, Causes]:
    """Per job id (of `job_ids`), what is known of its billed hours beyond its training:
    the steps its preemptions lost by the report's `end`, its setups where measured
    (`outside.causes_of`), in two reads."""
    if not job_ids:
        return {}
    notes: dict[int, list] = {}
    for e in store.jobs.event_rows(job_ids, [RECOVERY_NOTE]):
        if e.at <= end:
            notes.setdefault(e.job_id, []).append(e)
    setups = store.jobs.setups(job_ids)
    return {j: causes_of(notes.get(j, []), setups.get(j, [])) for j in job_ids}


def _recoveries(job_moves: Mapping[int, list[MoveRecord]], gang: Sequence[EventRow],
                stopped_first: Collection[int]) -> dict[int, int]:
    """Per job id, its recoveries after a lost instance or node (`model.recoveries`; not
    its restarts by the user, nor those after its own error, nor a gang's repair its job
    was stopped in before the gang resumed: of `gang`, its jobs' gang events, those in
    `stopped_first`)."""
    nodes = Counter(e.job_id for e in gang
                    if e.kind == NODE_RECOVERY and e.id not in stopped_first)
    return {j: recoveries((m.kind for m in found if not restart_move(m.kind, m.detail)),
                          nodes[j])
            for j, found in job_moves.items()}


def _rates(jobs: Sequence[JobRecord], ran: set[int]) -> dict[int, JobRate | None]:
    """The throughput table's rates of the jobs of `ran`."""
    table = ThroughputTable.load()
    models = {model_key(m) for m in table.models()}
    return {j.id: job_rate(j.spec, j.created_at, table, models) for j in jobs if j.id in ran}


# --- tables ---------------------------------------------------------------------------------

Spent = tuple[Piece, float, float, float]  # a piece, its hours, usd and on-demand usd


def _job_table(jobs: Sequence[JobRecord], spent: Sequence[Spent], egress: Sequence[Move],
               static: Mapping[int, float], nodes: Mapping[int, int],
               alone: Collection[int] = (), shown: Mapping[int, str] | None = None,
               on_demand: Collection[int] = ()) -> list[dict]:
    """The per-job rows. `alone`: the jobs that ran on their launch choice alone, whose
    launch choice kept is what they spent, by construction (its own charge, made to
    another time, may differ by a second's); `shown`: their states as views show them;
    `on_demand`: the jobs that ran on on-demand alone, whose on-demand baseline is so."""
    keys = [s[0].placement.job_id for s in spent]
    compute = group_sums(keys, [s[1] for s in spent], [s[2] for s in spent])
    cover_of = group_sums(keys, [s[3] for s in spent], nan_when_none=True)
    out_of = group_sums([m.job_id for m in egress], [m.usd for m in egress])
    rows = []
    for job in jobs:
        if job.id not in compute and job.id not in out_of:
            continue
        billed, paid = compute.get(job.id, [0.0, 0.0])
        cover = cover_of[job.id][0] if job.id in cover_of else math.nan
        out = out_of[job.id][0] if job.id in out_of else 0.0
        total = paid + out
        kept = float(static.get(job.id, math.nan))
        if job.id in alone and kept == kept:  # the launch choice kept is what it ran on
            kept = total
        cover = total if job.id in on_demand and cover == cover else cover
        if not saves(job):  # no baseline, so no saving (a baseline alone makes one again)
            cover = kept = math.nan
        rows.append(dict(zip(JOB_COLUMNS, (
            job.id, job.name, (shown or {}).get(job.id, job.state),
            int(nodes.get(job.id, 1)), float(billed), float(paid), float(out), float(total),
            float(cover), no_noise(cover - total), kept, no_noise(kept - total)), strict=True)))
    return rows


def saves(job: JobRecord) -> bool:
    """Whether the job's spend can be a saving against a baseline: not when its run
    failed (what it spent bought no result; the report says it apart, `failed_usd`). A job
    that succeeded counts, and so does one running or stopped: its work is kept in its
    checkpoint, and its on-demand baseline is the same instance for the same hours, so
    it holds for a job that reports no step too (its launch-choice baseline needs one)."""
    return job.state != "failed"


def _cloud_table(spent: Sequence[Spent], egress: Sequence[Move]) -> list[dict]:
    keys = [s[0].placement.cloud for s in spent]
    hours = group_sums(keys, [s[1] for s in spent])
    usd = group_sums(keys, [s[2] for s in spent])
    out = group_sums([m.from_cloud for m in egress], [m.usd for m in egress])
    rows = []
    for cloud in sorted(set(hours) | set(out)):
        billed, paid = (hours[cloud][0], usd[cloud][0]) if cloud in hours else (0.0, 0.0)
        moved = out[cloud][0] if cloud in out else 0.0
        rows.append(dict(zip(CLOUD_COLUMNS, (cloud, float(billed), float(paid),
                                             float(moved), float(paid + moved)), strict=True)))
    return rows


def _day_table(spent: Sequence[Spent], egress: Sequence[Move], names: Mapping[int, str]
               ) -> list[dict]:
    keys = [(s[0].day, s[0].placement.job_id, names[s[0].placement.job_id],
             s[0].placement.cloud) for s in spent]
    hours = group_sums(keys, [s[1] for s in spent])
    usd = group_sums(keys, [s[2] for s in spent])
    out = group_sums([(m.at.replace(hour=0, minute=0, second=0, microsecond=0), m.job_id,
                       names[m.job_id], m.from_cloud) for m in egress], [m.usd for m in egress])
    rows = []
    for key in sorted(set(hours) | set(out), key=lambda k: (k[0], k[1], k[3])):
        billed, paid = (hours[key][0], usd[key][0]) if key in hours else (0.0, 0.0)
        moved = out[key][0] if key in out else 0.0
        rows.append(dict(zip(DAY_COLUMNS, (*key, float(billed), float(paid), float(moved),
                                           float(paid + moved)), strict=True)))
    return rows


def _egress_row(move: Move, names: Mapping[int, str], into: Mapping[int, tuple[int, str]],
                reasons: Mapping[int, str]) -> dict:
    """A checkpoint's copy, with the move that made it (`moves.moved_into`; none recorded:
    its kind is the reason of the placement it went to)."""
    move_id, kind = into.get(move.to_placement, (None, reasons.get(move.to_placement, "")))
    return {"move_id": move_id, "job_id": move.job_id, "name": names[move.job_id],
            "kind": kind, "at": move.at,
            "from_cloud": move.from_cloud, "from_region": move.from_region,
            "to_cloud": move.to_cloud, "to_region": move.to_region, "gb": float(move.gb),
            "usd_per_gb": float(move.usd_per_gb), "usd": float(move.usd),
            "gb_source": move.gb_source}


def _budget_table(jobs: Sequence[JobRecord], budgets: Mapping[int, float],
                  compute: Mapping[int, float], egress: Sequence[Move], end: datetime,
                  stopped: set[int] = frozenset()) -> list[dict]:  # type: ignore[assignment]
    """Jobs whose whole-life spend up to `end` (`compute` per job, plus egress) is at least
    80% of their budget, and those their cap keeps stopped now, which say so (however
    little they spent: the cap charges ahead for the next watch interval)."""
    until = [m for m in egress if m.at <= end]
    moved = group_sums([m.job_id for m in until], [m.usd for m in until])
    names = {j.id: j.name for j in jobs}
    rows = []
    for job_id, budget in budgets.items():
        spent = float(compute.get(job_id, 0.0)) + float(moved.get(job_id, [0.0])[0])
        used = spent / budget
        if used >= NEAR_BUDGET or job_id in stopped:
            rows.append(dict(zip(BUDGET_COLUMNS, (
                job_id, names[job_id], float(budget), spent, used,
                "stopped at its budget" if job_id in stopped else
                "over" if spent > budget else "near"), strict=True)))
    return rows


def _stopped_at_budget(store: PriceStore, jobs: Sequence[JobRecord],
                       budgets: Mapping[int, float]) -> set[int]:
    """The jobs their own budget's cap keeps stopped now (`own_budget.capped_now`: not one
    started again since, running or finished)."""
    capped = own_budget.capped_now(store, [j for j in jobs if j.id in budgets])
    return {j for j, name in capped.items() if name == ""}


# --- small helpers ----------------------------------------------------------------------------


def reported_jobs(store: PriceStore, job: int | str | None) -> list[JobRecord]:
    """The jobs reported on (their records), oldest first: every job, the one of an id,
    those of a name, else a sweep's (NAME-1, NAME-2, ...) or those a pattern matches
    (`job_names.picks`, as `status --name` matches)."""
    if job is None:
        return store.jobs.records()
    if isinstance(job, int) or str(job).strip().isdigit():
        found = [store.jobs.get(int(job))]
    else:
        found = store.jobs.find(str(job)) or [
            r for r in store.jobs.records() if picks(r.name, str(job))]
    if not found:
        names = sorted({r.name for r in store.jobs.records()})
        listed = "; no job is stored" if not names else "; the jobs: " + ", ".join(
            names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        what = "no job's name matches it" if is_pattern(str(job)) else \
            "no job of that id or name in the store"
        raise InvalidInput(f"job {job!r}: {what}" + (did_you_mean(str(job), names) or listed))
    return found


def _measured(jobs: Sequence[JobRecord], placed: Sequence[PlacementRow]
              ) -> dict[int, checkpoint_sizes.Measured]:
    """The measured checkpoint versions of the jobs that moved (what their moves copied)."""
    moved = {p.job_id for p in placed if p.reason in checkpoint_sizes.MOVE_REASONS}
    return checkpoint_sizes.of_locations({j.id: j.checkpoint_location for j in jobs
                                          if j.id in moved})


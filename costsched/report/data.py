"""The figures of a cost report, as DataFrames: spend per job, cloud and day, egress per move,
savings against two baselines, the moves with their costs, and the budgets at risk.

Everything is charged as `costsched.costs` charges it: each placement (clipped to the
period, and split at midnight UTC) integrated over its stored price history. A report over
many jobs and months is one pass: the jobs, placements, moves and move events are read once
each, and every interval it prices (the pieces of placements, their on-demand twins, the
launch-choice baselines, the budgets' whole lives, the moves' idle time) is charged in one
`placement_costs` call, so the price history is read once, over the span they cover.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime

from costsched.costs import egress_costs, placement_costs
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.measured import (
    MEASURING,
    TOO_SHORT,
    JobRate,
    basis_words,
    check,
    job_rate,
    measuring,
    mismatch_factor,
    speed_on,
    speeds,
)
from costsched.model import FINAL_STATES, InvalidInput
from costsched.passes import one_pass
from costsched.report import estimates
from costsched.report.moves import MOVE_COLUMNS, move_table, target_running_times
from costsched.store import OFFERING_KEY, PriceStore
from costsched.store.moves import MoveRecord
from costsched.throughput import ThroughputTable, assumed_basis, model_key
from costsched.validation import as_time

NEAR_BUDGET = 0.8  # a job that spent this share of its budget is reported

# billed_hours: the placements' hours, as the clouds bill them (the estimates' training_hours
# leave setup, restarts and idle time out)
JOB_COLUMNS = ["job_id", "name", "state", "nodes", "billed_hours", "compute_usd", "egress_usd",
               "usd", "on_demand_usd", "saved_vs_on_demand_usd", "static_usd",
               "saved_vs_static_usd"]
CLOUD_COLUMNS = ["cloud", "billed_hours", "compute_usd", "egress_usd", "usd"]
DAY_COLUMNS = ["day", "job_id", "name", "cloud", "billed_hours", "compute_usd", "egress_usd",
               "usd"]
EGRESS_COLUMNS = ["job_id", "name", "at", "from_cloud", "from_region", "to_cloud",
                  "to_region", "gb", "usd_per_gb", "usd"]
# priced_*: the move's price as the decider priced it when it chose the target (`Decision.move`,
# kept with the move's first candidate), itemised; NaN for a recovery or a fallback target.
_BASELINE_COLUMNS = ("on_demand_usd", "saved_vs_on_demand_usd", "static_usd", "saved_vs_static_usd")
BUDGET_COLUMNS = ["job_id", "name", "budget_usd", "spent_usd", "used", "status"]
SPEED_COLUMNS = ["job_id", "name", "gpu_model", "gpu_count", "planned_sps", "measured_sps",
                 "measured_vs_planned", "flagged", "planned_from", "flag"]


@dataclass(frozen=True, eq=False)
class Report:
    """A cost report over [since, until] (since None: from the first placement).

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

    since: pd.Timestamp | None
    until: pd.Timestamp
    jobs: pd.DataFrame = field(repr=False)
    clouds: pd.DataFrame = field(repr=False)
    days: pd.DataFrame = field(repr=False)
    egress: pd.DataFrame = field(repr=False)
    moves: pd.DataFrame = field(repr=False)
    budgets: pd.DataFrame = field(repr=False)
    speeds: pd.DataFrame = field(repr=False, default_factory=lambda: pd.DataFrame(
        columns=SPEED_COLUMNS))
    estimates: pd.DataFrame = field(repr=False, default_factory=lambda: pd.DataFrame(
        columns=estimates.ESTIMATE_COLUMNS))
    calibration: pd.DataFrame = field(repr=False, default_factory=lambda: pd.DataFrame(
        columns=estimates.CALIBRATION_COLUMNS))

    def job_ids(self) -> set[int]:
        """The ids of the jobs it covers (a report of one job: that job's)."""
        return {int(j) for j in self.jobs["job_id"]} if "job_id" in self.jobs else set()

    @property
    def totals(self) -> dict[str, float | None]:
        """USD over every job (a baseline or saving over the jobs it applies to, None when
        none), its billed hours (the placements') and instance-hours (N nodes: N
        instances an hour)."""
        sums = {c: float(self.jobs[c].sum(min_count=1)) for c in JOB_COLUMNS[4:]}
        each = float((self.jobs["billed_hours"] * self.jobs["nodes"].fillna(1)).sum())
        totals = {**sums, "instance_hours": each}
        return {c: (None if np.isnan(v) else v) if c in _BASELINE_COLUMNS else
                (0.0 if np.isnan(v) else v) for c, v in totals.items()}


def build(store: PriceStore, *, since: datetime | str | None = None,
          until: datetime | str | None = None, job: int | str | None = None,
          now: datetime | str | None = None, factor: float | None = None) -> Report:
    """The cost report of the jobs in `store` (or of `job`, an id or a name) over the
    period [since, until], as of `now` (default: the current time; an open placement is
    charged up to the earlier of `until` and `now`).

    Savings are a baseline's USD less the job's spend (compute and egress) in the period,
    each baseline charged over the time it would take for the work the job did at the
    job's measured speed (`costsched.measured`: its reported step over its placements'
    hours), never at a declared figure:

    - on-demand: each piece of each placement in the period on the on-demand price of the
      same instance type in the same region (the same GPU at the same speed: the same
      hours), by the same rule as the job's own placements: the stored on-demand history,
      else the catalog's list prices; NaN when neither knows the type.
    - static: the same work on the job's launch-time choice (its first placement's
      offering) kept to the end. The work is the step the job reported (its progress),
      when the period holds the job's whole life up to that report; otherwise the steps its
      placements made in the period (each piece's hours x the job's measured speed on its
      GPUs); at most the job's steps. Its hours are those steps / the job's measured speed
      on that offering's GPUs (by its table's ratio where it never ran there) / 3600, from
      the start of the period's first piece, charged over that offering's own stored price
      history (as the job's placements are), not at its launch price. NaN for a job that
      reported no step (no measured speed).

    `factor`: measured over planned speed (either way) beyond which `speeds` flags a job
    (default: the configuration's `throughput.mismatch_factor`).

    A saving that does not apply (no baseline price, an unresolvable spec, no measured
    speed, no compute in the period) is NaN, and None in `totals` when it applies to no
    job: never 0.
    """
    now_at = pd.Timestamp(as_time(now, "now"))
    start = None if since is None else pd.Timestamp(as_time(since, "since"))
    end = now_at if until is None else min(pd.Timestamp(as_time(until, "until")), now_at)
    if start is not None and start >= end:
        raise InvalidInput(f"since {start:%Y-%m-%dT%H:%MZ}: expected a time before "
                           f"{end:%Y-%m-%dT%H:%MZ} (the end of the period)")
    with one_pass():  # each distinct stored spec is resolved once
        return _build(store, reported_jobs(store, job), start, end, factor)


def _build(store: PriceStore, jobs: pd.DataFrame, start: pd.Timestamp | None,
           end: pd.Timestamp, factor: float | None) -> Report:
    names = dict(zip(jobs["id"], jobs["name"], strict=True))
    placed = store.jobs.placements(int(jobs["id"].iloc[0]) if len(jobs) == 1 else None)
    placed = placed[placed["job_id"].isin(list(names))].reset_index(drop=True)
    # What ran: a placement whose instance still waits for capacity is not billed yet.
    ran = placed[~placed["waiting"]].reset_index(drop=True)

    pieces = _pieces(ran, start, end)
    sizes = {j: _checkpoint_gb(spec) for j, spec in zip(jobs["id"], jobs["spec"], strict=True)}
    all_moves = egress_costs(placed, checkpoint_gb=sizes)
    in_period = all_moves["at"] <= end
    if start is not None:
        in_period &= all_moves["at"] >= start
    egress = all_moves[in_period].assign(name=lambda f: f["job_id"].map(names))

    budgets = {j: b for j, b in zip(jobs["id"], map(_budget, jobs["spec"]), strict=True)
               if b is not None}
    lives = _pieces(ran[ran["job_id"].isin(list(budgets))], None, end)
    job_moves = store.moves.of_jobs(names)
    moves, idle = move_table(job_moves, jobs, placed, all_moves, start, end,
                             target_running_times(store, job_moves, start, end))
    rates = _rates(jobs, set(placed["job_id"]))
    # The baselines take the pace the job kept over its placements' hours, setup included
    # (a launch choice kept would have paid its setup too); the speed table, its training
    # speed (setup left out: a slow start is no slow training).
    paced = _measured(jobs, ran, rates, None)
    readings = store.jobs.readings(list(names))
    measured = _measured(jobs, ran, rates, readings)
    stays = _static_stays(jobs, ran, pieces, start, end, paced, rates)
    predicted = store.jobs.predictions(list(names))
    reached = estimates.until(jobs, end)
    runs = _clip_to(_pieces(ran[ran["job_id"].isin(list(predicted["job_id"]))],
                            None, end), reached)
    nodes = {j: _nodes(spec) for j, spec in zip(jobs["id"], jobs["spec"], strict=True)}
    charged = _charge(store, end, nodes, pieces=pieces, on_demand=_on_demand_twin(pieces),
                      static=stays, lives=lives, idle=idle, runs=runs)

    pieces = pieces.assign(hours=charged["pieces"]["hours"], usd=charged["pieces"]["usd"],
                           name=pieces["job_id"].map(names))
    twin = charged["on_demand"]
    pieces["on_demand_usd"] = np.where(twin["price_source"] == "placement", np.nan,
                                       twin["usd"])
    static = pd.Series(charged["static"]["usd"].to_numpy(), index=stays["job_id"], dtype=float)
    idle_usd = charged["idle"].groupby(idle["move"].to_numpy())["usd"].sum()
    moves["idle_usd"] = idle_usd.reindex(range(len(moves)), fill_value=0.0).to_numpy()
    moves["usd"] = moves["idle_usd"] + moves["egress_usd"]
    spent = charged["lives"].groupby("job_id")["usd"].sum()
    run_egress = all_moves[all_moves["at"] <= pd.to_datetime(
        all_moves["job_id"].map(reached), utc=True)]
    estimated = estimates.estimate_table(
        predicted, jobs, runs.assign(usd=charged["runs"]["usd"].to_numpy()), run_egress,
        _recoveries(job_moves), readings)
    return Report(
        since=start, until=end, jobs=_job_table(jobs, pieces, egress, static, nodes),
        clouds=_cloud_table(pieces, egress), days=_day_table(pieces, egress),
        egress=egress[EGRESS_COLUMNS].reset_index(drop=True),
        moves=moves[MOVE_COLUMNS],
        budgets=_budget_table(jobs, budgets, spent, all_moves, end,
                              _stopped_at_budget(store, list(budgets))),
        speeds=_speed_table(jobs, measured, rates, predicted, mismatch_factor(factor)),
        estimates=estimated, calibration=estimates.calibration(estimated),
    )


def _clip_to(pieces: pd.DataFrame, ends: pd.Series) -> pd.DataFrame:
    """`pieces` ending at the latest at their job's time in `ends` (by job id)."""
    if pieces.empty:
        return pieces
    last = pd.to_datetime(pieces["job_id"].map(ends), utc=True)
    end_at = pieces["end_at"].where(pieces["end_at"] < last, last)
    kept = pieces.assign(end_at=end_at)
    return kept[kept["end_at"] > kept["start_at"]].reset_index(drop=True)


def _recoveries(job_moves: dict[int, list[MoveRecord]]) -> pd.Series:
    """Per job id, its recoveries after a lost instance (not its restarts by the user)."""
    return pd.Series({j: sum(m.kind == "recovery" for m in found)
                      for j, found in job_moves.items()}, dtype=int)


# --- measured speed ----------------------------------------------------------------------


def _measured(jobs: pd.DataFrame, placed: pd.DataFrame, rates: dict[int, JobRate | None],
              readings: pd.DataFrame | None) -> pd.DataFrame:
    """Each job's speed on each GPU it ran on (`costsched.measured.speeds`): the steps it
    made over the time it trained (`readings`; setup left out), or without readings its
    reported step over its placements' hours up to its record's last write."""
    done = dict(zip(jobs["id"], jobs["steps_done"], strict=True))
    read = dict(zip(jobs["id"], pd.to_datetime(jobs["updated_at"], utc=True), strict=True))
    return speeds(placed, done, read, rates, readings=readings)


def _speed_table(jobs: pd.DataFrame, measured: pd.DataFrame,
                 rates: dict[int, JobRate | None], predicted: pd.DataFrame,
                 factor: float) -> pd.DataFrame:
    """Per job with a measured speed: it beside the figure its plan used (the plan kept at
    launch, else its throughput table's) on the GPU it ran longest, and whether it is off
    by more than `factor`."""
    names, states = (dict(zip(jobs["id"], jobs[c], strict=True)) for c in ("name", "state"))
    plans = predicted.set_index("job_id") if len(predicted) else None
    rows = []
    for job_id, found in measured.groupby("job_id", sort=True):
        rate = rates.get(int(job_id))
        if measuring(found):  # reported steps, not trained long enough to judge (yet)
            top = found.sort_values("hours", ascending=False, kind="stable").iloc[0]
            words = TOO_SHORT if states.get(job_id) in FINAL_STATES else MEASURING
            rows.append((int(job_id), names[job_id], top["gpu_model"], int(top["gpu_count"]),
                         float(top["planned_sps"]), np.nan, np.nan, False, "",
                         f"job {job_id} ({names[job_id]}): {words}"))
            continue
        checked = check(int(job_id), names[job_id], "", found, "", factor)
        if checked is None:
            continue
        gpu, count = checked.gpu_model, checked.gpu_count
        basis = rate.basis(gpu, count) if rate is not None else ""
        planned = checked.planned_sps
        if plans is not None and job_id in plans.index:
            plan = plans.loc[job_id]
            if plan["gpu_model"] == gpu and int(plan["gpu_count"]) == count:
                planned, basis = float(plan["steps_per_second"]), str(plan["throughput_source"])
        if assumed_basis(basis):  # an assumed hour's unit speed: no plan to compare with
            planned = np.nan
        checked = replace(checked, planned_sps=planned, basis=basis_words(basis))
        rows.append((int(job_id), checked.name, gpu, count, checked.planned_sps,
                     checked.measured_sps, checked.ratio, checked.flagged, checked.basis,
                     checked.line() if checked.flagged else ""))
    return pd.DataFrame(rows, columns=SPEED_COLUMNS)


# --- the period's pieces of placements -------------------------------------------------------

_DAY = 86_400 * 10**9  # a day in nanoseconds


def _pieces(placed: pd.DataFrame, start: pd.Timestamp | None, end: pd.Timestamp
            ) -> pd.DataFrame:
    """Each placement clipped to [start, end] and split at midnight UTC, with its `day`;
    a placement that does not meet the period has no piece."""
    begin = placed["start_at"] if start is None else placed["start_at"].clip(lower=start)
    finish = placed["end_at"].fillna(end).clip(upper=end)
    lo = begin.to_numpy(dtype="datetime64[ns]").view("int64")
    hi = finish.to_numpy(dtype="datetime64[ns]").view("int64")
    first_day = lo - lo % _DAY
    days = np.where((hi > first_day) & (hi >= lo), -((first_day - hi) // _DAY), 0)
    rows = np.repeat(np.arange(len(placed)), days)
    nth = np.arange(len(rows)) - np.repeat(np.cumsum(days) - days, days)
    day = first_day[rows] + nth * _DAY
    out = placed.iloc[rows].reset_index(drop=True)

    def utc_times(ns: np.ndarray) -> pd.Series:
        return pd.Series(pd.to_datetime(ns, unit="ns", utc=True))

    return out.assign(start_at=utc_times(np.maximum(lo[rows], day)),
                      end_at=utc_times(np.minimum(hi[rows], day + _DAY)), day=utc_times(day))


def _on_demand_twin(pieces: pd.DataFrame) -> pd.DataFrame:
    """The same pieces on the on-demand offering of their type and region; no price of
    their own, so that an unknown on-demand price shows as price_source "placement"."""
    return pieces.assign(market="on_demand", zone="", usd_per_hour=np.nan)


def _charge(store: PriceStore, end: pd.Timestamp, nodes: dict[int, int],
            **parts: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Each frame of placement intervals of jobs (an open one ends at `end`) with
    `hours`, `usd`, `price_source` and `job_id`, all charged in one `placement_costs` call;
    a job of several nodes (`nodes`, by job id) is charged each node, a node not running
    left out (the parts in PLACED are pieces of stored placements: their gaps apply)."""
    columns = [*OFFERING_KEY, "start_at", "end_at", "usd_per_hour", "waiting", "job_id"]
    together = pd.concat([frame.reindex(columns=columns).assign(
        id=frame["id"] if name in _PLACED and "id" in frame else np.nan)
        for name, frame in parts.items()], ignore_index=True)
    together["waiting"] = together["waiting"].eq(True)
    charged = placement_costs(store, together, now=end.to_pydatetime(), nodes=nodes)
    out, at = {}, 0
    for name, frame in parts.items():
        rows = charged.iloc[at:at + len(frame)].reset_index(drop=True)
        out[name] = rows.assign(job_id=frame["job_id"].to_numpy())
        at += len(frame)
    return out


# The parts `_charge` is given that are pieces of stored placements (not what-ifs).
_PLACED = ("pieces", "on_demand", "lives", "runs")


# --- the launch-time choice kept -------------------------------------------------------------


def _static_stays(jobs: pd.DataFrame, placed: pd.DataFrame, pieces: pd.DataFrame,
                  start: pd.Timestamp | None, end: pd.Timestamp, measured: pd.DataFrame,
                  rates: dict[int, JobRate | None]) -> pd.DataFrame:
    """Per job whose launch-choice baseline applies (see `build`): its first placement's
    offering over the period's work at the job's measured speed there, as a placement
    frame (job_id, offering, start_at, end_at, usd_per_hour)."""
    if pieces.empty or measured.empty:
        return placed.iloc[0:0]
    # Each piece's measured speed on its own GPU (NaN: the job reported no step).
    keys = ["job_id", "gpu_model", "gpu_count"]
    known = measured.assign(gpu_count=measured["gpu_count"].astype(int)).set_index(keys)
    index = pd.MultiIndex.from_arrays([pieces["job_id"], pieces["gpu_model"],
                                       pieces["gpu_count"].astype(int)])
    speeds = known["measured_sps"].reindex(index).to_numpy(dtype=float)
    records = dict(zip(jobs["id"], jobs.to_dict("records"), strict=True))
    # The steps each piece made at the job's measured speed, and those after the job's
    # record was last written (its reported step, if any, was read by then).
    read_at = pieces["job_id"].map(jobs.set_index("id")["updated_at"])
    after = pieces["start_at"].where(pieces["start_at"] > read_at, read_at)
    made = pd.DataFrame({
        "steps": _seconds(pieces["start_at"], pieces["end_at"]) * speeds,
        "since_read": _seconds(after, pieces["end_at"]) * speeds,
        "unknown": np.isnan(speeds)}).groupby(pieces["job_id"].to_numpy()).agg(
            {"steps": "sum", "since_read": "sum", "unknown": "any"})
    begin = pieces.groupby("job_id")["start_at"].min().to_dict()
    first = placed.sort_values(["job_id", "start_at", "id"], kind="stable").drop_duplicates(
        "job_id")
    firsts = dict(zip(first["job_id"], first.to_dict("records"), strict=True))
    by_job = measured.groupby("job_id").indices
    rows = []
    for job_id, work, since_read, unknown in made.itertuples(name=None):
        own, job = firsts[job_id], records[job_id]
        if unknown:  # no measured speed: no baseline, never one from a declared figure
            continue
        if job["steps_done"] > 0 and (start is None or start <= own["start_at"]) and \
                job["updated_at"] <= end:  # the period holds the job's life to its report
            work = job["steps_done"] + since_read
        steps_made = min(float(work), float(job["steps_total"]))
        speed = speed_on(measured.iloc[by_job[job_id]], own["gpu_model"],
                         int(own["gpu_count"]), rates.get(job_id))
        if not speed > 0:
            continue
        # Whole seconds, as placements are stored (a float a hair under a second would be cut).
        stay = begin[job_id] + pd.Timedelta(seconds=round(steps_made / speed))
        rows.append({**own, "start_at": begin[job_id], "end_at": stay})
    stays = pd.DataFrame(rows, columns=placed.columns)
    for column in ("start_at", "end_at"):
        stays[column] = pd.to_datetime(stays[column], utc=True)
    return stays


def _seconds(start: pd.Series, end: pd.Series) -> np.ndarray:
    """Seconds from each start to its end (0 when the end is not after the start)."""
    return np.maximum((end - start).dt.total_seconds().to_numpy(), 0.0)


def _rates(jobs: pd.DataFrame, ran: set[int]) -> dict[int, JobRate | None]:
    """The throughput table's rates of the jobs of `ran`."""
    table = ThroughputTable.load()
    models = {model_key(m) for m in table.models()}
    return {j: job_rate(spec, created, table, models) for j, spec, created
            in zip(jobs["id"], jobs["spec"], jobs["created_at"], strict=True) if j in ran}


# --- tables ---------------------------------------------------------------------------------


def _job_table(jobs: pd.DataFrame, pieces: pd.DataFrame, egress: pd.DataFrame,
               static: pd.Series, nodes: dict[int, int]) -> pd.DataFrame:
    by_job = pieces.groupby("job_id")
    compute = by_job[["hours", "usd"]].sum().rename(columns={"hours": "billed_hours",
                                                             "usd": "compute_usd"})
    compute["on_demand_usd"] = by_job["on_demand_usd"].sum(min_count=1)
    out = egress.groupby("job_id")["usd"].sum().rename("egress_usd")
    frame = jobs.rename(columns={"id": "job_id"}).set_index("job_id")[["name", "state"]]
    frame = frame.join(compute).join(out).join(static.rename("static_usd"))
    frame = frame[frame["billed_hours"].notna() | frame["egress_usd"].notna()]
    frame[["billed_hours", "compute_usd", "egress_usd"]] = frame[
        ["billed_hours", "compute_usd", "egress_usd"]].fillna(0.0)
    frame["usd"] = frame["compute_usd"] + frame["egress_usd"]
    frame["saved_vs_on_demand_usd"] = frame["on_demand_usd"] - frame["usd"]
    frame["saved_vs_static_usd"] = frame["static_usd"] - frame["usd"]
    frame["nodes"] = [nodes.get(int(j), 1) for j in frame.index]
    return frame.reset_index()[JOB_COLUMNS].astype({c: float for c in JOB_COLUMNS[4:]}
                                                    | {"nodes": int})


def _cloud_table(pieces: pd.DataFrame, egress: pd.DataFrame) -> pd.DataFrame:
    compute = pieces.groupby("cloud").agg(billed_hours=("hours", "sum"),
                                          compute_usd=("usd", "sum"))
    out = egress.groupby("from_cloud")["usd"].sum().rename("egress_usd")
    frame = compute.join(out, how="outer").fillna(0.0)
    frame["usd"] = frame["compute_usd"] + frame["egress_usd"]
    frame = frame.rename_axis("cloud").reset_index()
    return frame.astype({c: float for c in CLOUD_COLUMNS[1:]})[CLOUD_COLUMNS]


def _day_table(pieces: pd.DataFrame, egress: pd.DataFrame) -> pd.DataFrame:
    keys = ["day", "job_id", "name", "cloud"]
    compute = pieces.groupby(keys).agg(billed_hours=("hours", "sum"),
                                       compute_usd=("usd", "sum"))
    moved = egress.assign(day=egress["at"].dt.normalize(), cloud=egress["from_cloud"])
    out = moved.groupby(keys)["usd"].sum().rename("egress_usd")
    frame = compute.join(out, how="outer").fillna(0.0).reset_index()
    frame["usd"] = frame["compute_usd"] + frame["egress_usd"]
    frame = frame.astype({c: float for c in DAY_COLUMNS[4:]})
    return frame.sort_values(["day", "job_id", "cloud"], ignore_index=True)[DAY_COLUMNS]


def _budget_table(jobs: pd.DataFrame, budgets: dict[int, float], compute: pd.Series,
                  egress: pd.DataFrame, end: pd.Timestamp,
                  stopped: set[int] = frozenset()) -> pd.DataFrame:  # type: ignore[assignment]
    """Jobs whose whole-life spend up to `end` (`compute` per job, plus egress) is at least
    80% of their budget, and those the watcher stopped at their cap, which say so (however
    little they spent: the cap charges ahead for the next watch interval)."""
    moved = egress[egress["at"] <= end].groupby("job_id")["usd"].sum()
    names = dict(zip(jobs["id"], jobs["name"], strict=True))
    rows = []
    for job_id, budget in budgets.items():
        spent = float(compute.get(job_id, 0.0)) + float(moved.get(job_id, 0.0))
        used = spent / budget
        if used >= NEAR_BUDGET or job_id in stopped:
            rows.append((job_id, names[job_id], budget, spent, used,
                         "stopped at its budget" if job_id in stopped else
                         "over" if spent > budget else "near"))
    return pd.DataFrame(rows, columns=BUDGET_COLUMNS).astype(
        {"budget_usd": float, "spent_usd": float, "used": float})


def _stopped_at_budget(store: PriceStore, job_ids: list[int]) -> set[int]:
    """The jobs the watcher stopped at their own budget's cap (their events say so)."""
    said = store.jobs.events_of(job_ids, kinds=["budget"]) if job_ids else None
    if said is None or said.empty:
        return set()
    return {int(j) for j, d in zip(said["job_id"], said["detail"], strict=True)
            if d.startswith(f"stopped at budget job {int(j)} ")}


# --- small helpers ----------------------------------------------------------------------------

_JOB_FIELDS = ["id", "name", "state", "spec", "steps_total", "steps_done", "created_at",
               "updated_at"]


def reported_jobs(store: PriceStore, job: int | str | None) -> pd.DataFrame:
    """The jobs reported on (id, name, state, stored spec, steps, times), oldest first."""
    if job is None:
        return store.jobs.list()[_JOB_FIELDS]
    if isinstance(job, int) or str(job).strip().isdigit():
        found = [store.jobs.get(int(job))]
    else:
        found = store.jobs.find(str(job))
    if not found:
        raise InvalidInput(f"job {job!r}: no job of that id or name in the store")
    return pd.DataFrame([r.__dict__ for r in found])[_JOB_FIELDS]


def _spec(stored: dict) -> dict:
    spec = stored.get("spec") if isinstance(stored, dict) else None
    return spec if isinstance(spec, dict) else {}


def _budget(stored: dict) -> float | None:
    budget = (_spec(stored).get("constraints") or {}).get("budget")
    return float(budget) if isinstance(budget, (int, float)) and budget > 0 else None


def _nodes(stored: dict) -> int:
    """The job's nodes (num_nodes; 1 but for a multi-node job): each is charged."""
    value = _spec(stored).get("num_nodes", 1)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 1 else 1


def _checkpoint_gb(stored: dict) -> float:
    size = (_spec(stored).get("checkpoint") or {}).get("size_gb", 0.0)
    return float(size) if isinstance(size, (int, float)) and size >= 0 else 0.0

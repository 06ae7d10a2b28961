"""The figures of a cost report, as DataFrames: spend per job, cloud and day, egress per move,
savings against two baselines, the moves with their costs, and the budgets at risk.

Everything is charged as `costsched.costs` charges it: each placement (clipped to the
period, and split at midnight UTC) integrated over its stored price history.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
import pandas as pd

from costsched.costs import egress_costs, placement_costs
from costsched.jobspec import parse, resolve
from costsched.model import InvalidInput, utc
from costsched.service.values import as_time
from costsched.store import JobRecord, PriceStore
from costsched.throughput import ThroughputTable

NEAR_BUDGET = 0.8  # a job that spent this share of its budget is reported
MOVE_KINDS = ("migration", "recovery")

JOB_COLUMNS = ["job_id", "name", "state", "hours", "compute_usd", "egress_usd", "usd",
               "on_demand_usd", "saved_vs_on_demand_usd", "static_usd", "saved_vs_static_usd"]
CLOUD_COLUMNS = ["cloud", "hours", "compute_usd", "egress_usd", "usd"]
DAY_COLUMNS = ["day", "job_id", "name", "cloud", "hours", "compute_usd", "egress_usd", "usd"]
EGRESS_COLUMNS = ["job_id", "name", "at", "from_cloud", "from_region", "to_cloud",
                  "to_region", "gb", "usd_per_gb", "usd"]
MOVE_COLUMNS = ["move_id", "job_id", "name", "kind", "state", "at", "source", "target",
                "idle_usd", "egress_usd", "usd"]
_BASELINE_COLUMNS = ("on_demand_usd", "saved_vs_on_demand_usd", "static_usd",
                     "saved_vs_static_usd")
BUDGET_COLUMNS = ["job_id", "name", "budget_usd", "spent_usd", "used", "status"]


@dataclass(frozen=True, eq=False)
class Report:
    """A cost report over [since, until] (since None: from the first placement).

    jobs: per job, its spend in the period and the two baselines (see `build`).
    clouds: per cloud, compute on it and the egress it billed (moves out of it).
    days: per UTC day, job and cloud (egress on the day of the move, on the source cloud).
    egress: one row per move that copied a checkpoint (`costs.egress_costs`).
    moves: the migrations and recoveries started in the period, with their costs.
    budgets: the jobs that spent at least 80% of their budget (over their whole life).
    """

    since: pd.Timestamp | None
    until: pd.Timestamp
    jobs: pd.DataFrame = field(repr=False)
    clouds: pd.DataFrame = field(repr=False)
    days: pd.DataFrame = field(repr=False)
    egress: pd.DataFrame = field(repr=False)
    moves: pd.DataFrame = field(repr=False)
    budgets: pd.DataFrame = field(repr=False)

    @property
    def totals(self) -> dict[str, float | None]:
        """USD over every job: compute, egress, spend, the baselines and the savings; a
        baseline or saving over the jobs it applies to, None when it applies to none."""
        sums = {c: float(self.jobs[c].sum(min_count=1)) for c in JOB_COLUMNS[4:]}
        totals = {"hours": float(self.jobs["hours"].sum()), **sums}
        return {c: (None if np.isnan(v) else v) if c in _BASELINE_COLUMNS else
                (0.0 if np.isnan(v) else v) for c, v in totals.items()}


def build(store: PriceStore, *, since: datetime | str | None = None,
          until: datetime | str | None = None, job: int | str | None = None,
          now: datetime | str | None = None) -> Report:
    """The cost report of the jobs in `store` (or of `job`, an id or a name) over the
    period [since, until], as of `now` (default: the current time; an open placement is
    charged up to the earlier of `until` and `now`).

    Savings are a baseline's USD less the job's spend (compute and egress) in the period:

    - on-demand: the same hours (every piece of every placement in the period) charged on
      the on-demand price of the same instance type in the same region, by the same rule as
      the job's own placements: the stored on-demand history, else the catalog's list
      prices; NaN when neither knows the type.
    - static: the same work on the job's launch-time choice (its first placement's
      offering) kept to the end. The work is the steps its placements made in the period
      (each piece's hours x the job's throughput on its GPUs, by the job's throughput table
      as `service.jobs.steps_left` counts them), at most the job's steps; its hours are
      those steps / the job's steps per second on that offering / 3600, from the start of
      the period's first piece, charged over that offering's own stored price history (as
      the job's placements are), not at its launch price.

    A saving that does not apply (no baseline price, an unresolvable spec, no compute in
    the period) is NaN, and None in `totals` when it applies to no job: never 0.
    """
    now_at = pd.Timestamp(as_time(now, "now"))
    start = None if since is None else pd.Timestamp(as_time(since, "since"))
    end = now_at if until is None else min(pd.Timestamp(as_time(until, "until")), now_at)
    if start is not None and start >= end:
        raise InvalidInput(f"since {start:%Y-%m-%dT%H:%MZ}: expected a time before "
                           f"{end:%Y-%m-%dT%H:%MZ} (the end of the period)")
    records = _jobs(store, job)
    names = {r.id: r.name for r in records}
    placed = store.jobs.placements()
    placed = placed[placed["job_id"].isin(list(names))].reset_index(drop=True)

    pieces = placement_costs(store, _pieces(placed, start, end), now=end.to_pydatetime())
    pieces["name"] = pieces["job_id"].map(names)
    on_demand = placement_costs(store, _on_demand_twin(pieces), now=end.to_pydatetime())
    pieces["on_demand_usd"] = np.where(on_demand["price_source"] == "placement", np.nan,
                                       on_demand["usd"].to_numpy())

    sizes = {r.id: _checkpoint_gb(r) for r in records}
    all_moves = egress_costs(placed, checkpoint_gb=sizes)
    in_period = all_moves["at"] <= end
    if start is not None:
        in_period &= all_moves["at"] >= start
    egress = all_moves[in_period].assign(name=lambda f: f["job_id"].map(names))

    table = ThroughputTable.load()
    rates = {r.id: _rate(r, table) for r in records}
    jobs = _job_table(store, records, placed, pieces, egress, rates)
    return Report(
        since=start, until=end, jobs=jobs,
        clouds=_cloud_table(pieces, egress), days=_day_table(pieces, egress),
        egress=egress[EGRESS_COLUMNS].reset_index(drop=True),
        moves=_move_table(store, records, placed, all_moves, start, end),
        budgets=_budget_table(store, records, placed, all_moves, end),
    )


# --- the period's pieces of placements -------------------------------------------------------


def _pieces(placed: pd.DataFrame, start: pd.Timestamp | None, end: pd.Timestamp
            ) -> pd.DataFrame:
    """Each placement clipped to [start, end] and split at midnight UTC, with its `day`."""
    begin = placed["start_at"] if start is None else placed["start_at"].clip(lower=start)
    finish = placed["end_at"].fillna(end).clip(upper=end)
    rows, lo, hi, days = [], [], [], []
    for i, (s, e) in enumerate(zip(begin, finish, strict=True)):
        day = s.normalize()
        while day < e:
            following = day + pd.Timedelta(days=1)
            rows.append(i)
            lo.append(max(s, day))
            hi.append(min(e, following))
            days.append(day)
            day = following
    out = placed.iloc[rows].reset_index(drop=True)
    utc_times = "datetime64[ns, UTC]"
    return out.assign(start_at=pd.Series(lo, dtype=utc_times),
                      end_at=pd.Series(hi, dtype=utc_times), day=pd.Series(days, dtype=utc_times))


def _on_demand_twin(pieces: pd.DataFrame) -> pd.DataFrame:
    """The same pieces on the on-demand offering of their type and region; no price of
    their own, so that an unknown on-demand price shows as price_source "placement"."""
    return pieces[[c for c in pieces.columns if c != "usd"]].assign(
        market="on_demand", zone="", usd_per_hour=np.nan)


# --- tables ---------------------------------------------------------------------------------


def _job_table(store: PriceStore, records: list[JobRecord], placed: pd.DataFrame,
               pieces: pd.DataFrame, egress: pd.DataFrame,
               rates: dict[int, Callable[[str, int], float] | None]) -> pd.DataFrame:
    rows = []
    for record in records:
        mine = pieces[pieces["job_id"] == record.id]
        moved = egress[egress["job_id"] == record.id]
        if mine.empty and moved.empty:
            continue
        compute, out = float(mine["usd"].sum()), float(moved["usd"].sum())
        on_demand = float(mine["on_demand_usd"].sum(min_count=1)) if len(mine) else np.nan
        static = _static_usd(store, record, placed[placed["job_id"] == record.id], mine,
                             rates[record.id])
        rows.append((record.id, record.name, record.state, float(mine["hours"].sum()),
                     compute, out, compute + out, on_demand, on_demand - (compute + out),
                     static, static - (compute + out)))
    return pd.DataFrame(rows, columns=JOB_COLUMNS).astype(
        {c: float for c in JOB_COLUMNS[3:]})


def _static_usd(store: PriceStore, record: JobRecord, placed: pd.DataFrame,
                pieces: pd.DataFrame, rate: Callable[[str, int], float] | None) -> float:
    """The period's work on the job's launch-time choice, charged over that offering's
    stored price history (see `build`); NaN when it does not apply."""
    if rate is None or placed.empty or pieces.empty:
        return float("nan")
    per_second = [rate(g, int(n)) for g, n in zip(pieces["gpu_model"], pieces["gpu_count"],
                                                   strict=True)]
    steps = min(float(np.dot(pieces["hours"].to_numpy() * 3600, per_second)),
                record.steps_total)
    first = placed.sort_values(["start_at", "id"]).iloc[[0]]
    speed = rate(str(first["gpu_model"].iloc[0]), int(first["gpu_count"].iloc[0]))
    if not speed > 0:
        return float("nan")
    begin = pieces["start_at"].min()
    # Whole seconds, as placements are stored (a float a hair under a second would be cut).
    stays = first.assign(start_at=begin,
                         end_at=begin + pd.Timedelta(seconds=round(steps / speed)))
    charged = placement_costs(store, stays, now=begin.to_pydatetime())  # it has an end
    return float(charged["usd"].iloc[0])


def _cloud_table(pieces: pd.DataFrame, egress: pd.DataFrame) -> pd.DataFrame:
    compute = pieces.groupby("cloud").agg(hours=("hours", "sum"), compute_usd=("usd", "sum"))
    out = egress.groupby("from_cloud")["usd"].sum().rename("egress_usd")
    frame = compute.join(out, how="outer").fillna(0.0)
    frame["usd"] = frame["compute_usd"] + frame["egress_usd"]
    frame = frame.rename_axis("cloud").reset_index()
    return frame.astype({c: float for c in CLOUD_COLUMNS[1:]})[CLOUD_COLUMNS]


def _day_table(pieces: pd.DataFrame, egress: pd.DataFrame) -> pd.DataFrame:
    keys = ["day", "job_id", "name", "cloud"]
    compute = pieces.groupby(keys).agg(hours=("hours", "sum"), compute_usd=("usd", "sum"))
    moved = egress.assign(day=egress["at"].dt.normalize(), cloud=egress["from_cloud"])
    out = moved.groupby(keys)["usd"].sum().rename("egress_usd")
    frame = compute.join(out, how="outer").fillna(0.0).reset_index()
    frame["usd"] = frame["compute_usd"] + frame["egress_usd"]
    frame = frame.astype({c: float for c in DAY_COLUMNS[4:]})
    return frame.sort_values(["day", "job_id", "cloud"], ignore_index=True)[DAY_COLUMNS]


def _move_table(store: PriceStore, records: list[JobRecord], placed: pd.DataFrame,
                egress: pd.DataFrame, start: pd.Timestamp | None,
                end: pd.Timestamp) -> pd.DataFrame:
    """The migrations and recoveries started in the period. Their idle USD (part of the
    compute spend, not added to it) is what was billed without training: a migration's
    source from the stop request to its end, and the target from its launch until it ran
    (until `end` while it has not). Egress: the checkpoint's copy into the target."""
    rows = []
    for record in records:
        mine = placed[placed["job_id"] == record.id]
        moves = [m for m in store.moves.of_job(record.id) if m.kind in MOVE_KINDS
                 and pd.Timestamp(m.created_at) <= end
                 and (start is None or pd.Timestamp(m.created_at) >= start)]
        if not moves:
            continue
        ran = _target_running_times(store, record.id)
        for move in moves:
            source = _on_instance(mine, move.source_instance)
            target = _on_instance(mine, move.target_instance)
            idle = []
            if move.kind == "migration" and source is not None:
                idle.append(_clip(source, pd.Timestamp(move.created_at), end))
            if target is not None:
                idle.append(_clip(target, target["start_at"], ran.get(move.id, end)))
            idle_usd = _charge(store, idle, end)
            copied = (egress[egress["to_placement"] == target["id"]]["usd"].sum()
                      if target is not None else 0.0)
            rows.append((move.id, record.id, record.name, move.kind, move.state,
                         pd.Timestamp(move.created_at), _where(source), _where(target),
                         idle_usd, float(copied), idle_usd + float(copied)))
    frame = pd.DataFrame(rows, columns=MOVE_COLUMNS)
    frame["at"] = pd.to_datetime(frame["at"], utc=True)
    return frame.astype({"idle_usd": float, "egress_usd": float, "usd": float})


def _budget_table(store: PriceStore, records: list[JobRecord], placed: pd.DataFrame,
                  egress: pd.DataFrame, end: pd.Timestamp) -> pd.DataFrame:
    """Jobs whose whole-life spend up to `end` is at least 80% of their budget."""
    rows = []
    for record in records:
        budget = _budget(record)
        if budget is None:
            continue
        mine = _pieces(placed[placed["job_id"] == record.id], None, end)
        spent = float(placement_costs(store, mine, now=end)["usd"].sum()) if len(mine) else 0.0
        spent += float(egress[(egress["job_id"] == record.id) & (egress["at"] <= end)]
                       ["usd"].sum())
        used = spent / budget
        if used >= NEAR_BUDGET:
            rows.append((record.id, record.name, budget, spent, used,
                         "over" if spent > budget else "near"))
    return pd.DataFrame(rows, columns=BUDGET_COLUMNS).astype(
        {"budget_usd": float, "spent_usd": float, "used": float})


# --- small helpers ----------------------------------------------------------------------------


def _jobs(store: PriceStore, job: int | str | None) -> list[JobRecord]:
    if job is None:
        frame = store.jobs.list()
        return [store.jobs.get(int(i)) for i in frame["id"]] if len(frame) else []
    if isinstance(job, int) or str(job).strip().isdigit():
        return [store.jobs.get(int(job))]
    found = store.jobs.find(str(job))
    if not found:
        raise InvalidInput(f"job {job!r}: no job of that id or name in the store")
    return found


def _spec(record: JobRecord) -> dict:
    spec = record.spec.get("spec") if isinstance(record.spec, dict) else None
    return spec if isinstance(spec, dict) else {}


def _budget(record: JobRecord) -> float | None:
    budget = (_spec(record).get("constraints") or {}).get("budget")
    return float(budget) if isinstance(budget, (int, float)) and budget > 0 else None


def _checkpoint_gb(record: JobRecord) -> float:
    size = (_spec(record).get("checkpoint") or {}).get("size_gb", 0.0)
    return float(size) if isinstance(size, (int, float)) and size >= 0 else 0.0


def _rate(record: JobRecord, table: ThroughputTable) -> Callable[[str, int], float] | None:
    """The job's steps per second on (GPU model, count), by its own throughput table."""
    try:
        source = str(record.spec.get("source", "<stored spec>"))
        resolved = resolve(parse(_spec(record), source), table, utc(record.created_at),
                           source=source)
    except InvalidInput:
        return None
    model, own = resolved.job.model, resolved.table
    return lambda gpu, count: own.get(model, gpu, count).steps_per_second


def _target_running_times(store: PriceStore, job_id: int) -> dict[int, pd.Timestamp]:
    """When each of the job's moves reached target_running, from the job's event log."""
    events = store.jobs.events(job_id)
    events = events[(events["kind"] == "move") & (events["to_state"] == "target_running")]
    out = {}
    for at, detail in zip(events["at"], events["detail"], strict=True):
        head = str(detail).split(" ", 2)  # "move 12 (migration): ..."
        if len(head) > 1 and head[0] == "move" and head[1].isdigit():
            out.setdefault(int(head[1]), pd.Timestamp(at))
    return out


def _on_instance(placed: pd.DataFrame, instance: str) -> pd.Series | None:
    if not instance:
        return None
    found = placed[placed["instance"] == instance]
    return None if found.empty else found.iloc[-1]


def _clip(placement: pd.Series, lo: pd.Timestamp, hi: pd.Timestamp) -> pd.Series:
    """The placement over [lo, hi] within its own interval (empty when they do not meet)."""
    end = placement["end_at"] if pd.notna(placement["end_at"]) else hi
    clipped = placement.copy()
    clipped["start_at"] = max(placement["start_at"], lo)
    clipped["end_at"] = max(clipped["start_at"], min(end, hi))
    return clipped


def _charge(store: PriceStore, pieces: list[pd.Series], end: pd.Timestamp) -> float:
    if not pieces:
        return 0.0
    frame = pd.DataFrame(pieces).reset_index(drop=True)
    for column in ("start_at", "end_at"):
        frame[column] = pd.to_datetime(frame[column], utc=True)
    return float(placement_costs(store, frame, now=end.to_pydatetime())["usd"].sum())


def _where(placement: pd.Series | None) -> str:
    if placement is None:
        return ""
    return " ".join([placement["cloud"], placement["zone"] or placement["region"],
                     placement["instance_type"], placement["market"].replace("_", "-")])

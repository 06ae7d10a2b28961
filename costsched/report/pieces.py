"""The intervals a report charges, on plain rows: each placement clipped to the period and
split at midnight UTC (its pieces), their on-demand twins, the launch-time choice kept to
the end (`static_stays`), all charged in one `costs.charge` call (`charge_parts`)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta, timezone
from typing import NamedTuple

from costsched.costs import charge
from costsched.measured import JobRate, Speed, speed_on
from costsched.report.sums import by, group_sums, seconds
from costsched.store import PriceStore
from costsched.store.job_rows import JobRecord, PlacementRow
from costsched.work import own_total

DAY = timedelta(days=1)


class Piece(NamedTuple):
    """A placement's part within the period and one UTC `day` (its start_at and end_at
    are the part's)."""

    placement: PlacementRow
    day: datetime


def pieces(placed: Sequence[PlacementRow], start: datetime | None, end: datetime
           ) -> list[Piece]:
    """Each placement clipped to [start, end] and split at midnight UTC, with its `day`;
    a placement that does not meet the period has no piece."""
    out = []
    for p in placed:
        lo = p.start_at if start is None else max(p.start_at, start)
        hi = min(end if p.end_at is None else p.end_at, end)
        first_day = datetime(lo.year, lo.month, lo.day, tzinfo=timezone.utc)
        days = -((first_day - hi) // DAY) if hi > first_day and hi >= lo else 0
        for nth in range(days):
            day = first_day + nth * DAY
            out.append(Piece(p._replace(start_at=max(lo, day), end_at=min(hi, day + DAY)),
                             day))
    return out


def on_demand_twin(placement: PlacementRow) -> PlacementRow:
    """The same interval on the on-demand offering of its type and region; no price of
    its own, so that an unknown on-demand price shows as price_source "placement"."""
    return placement._replace(market="on_demand", zone="", usd_per_hour=math.nan)


class Charged(NamedTuple):
    hours: float
    usd: float
    price_source: str


def charge_parts(store: PriceStore, end: datetime, nodes: Mapping[int, int],
                 placed: Mapping[str, Sequence[PlacementRow]],
                 what_ifs: Mapping[str, Sequence[PlacementRow]],
                 dates: list | None = None) -> dict[str, list[Charged]]:
    """Each list of intervals (an open one ends at `end`) charged, all in one `charge`
    call (the price history is read once); a job of several nodes (`nodes`, by job id) is
    charged each node, a node not running left out where the interval is part of a stored
    placement (`placed`; `what_ifs` are not: the launch choice kept, a move's idle time).
    `dates`: gets when the price each interval was charged at its end took effect, in
    their order (`costs.charge`)."""
    together: list[PlacementRow] = []
    for rows in placed.values():
        together.extend(rows)
    for rows in what_ifs.values():
        together.extend(r._replace(id=None) for r in rows)
    charged = charge(store, together, now=end, nodes=nodes, dates=dates)
    out, at = {}, 0
    for name, rows in (*placed.items(), *what_ifs.items()):
        out[name] = [Charged(*c) for c in charged[at:at + len(rows)]]
        at += len(rows)
    return out


def static_stays(jobs: Mapping[int, JobRecord], placed: Sequence[PlacementRow],
                 cut: Sequence[Piece], start: datetime | None, end: datetime,
                 measured: Sequence[Speed], rates: Mapping[int, JobRate | None],
                 share: Mapping[int, float] | None = None) -> list[PlacementRow]:
    """Per job whose launch-choice baseline applies (see `report.data.build`): its first
    placement's offering over the period's work at the job's measured speed there, laid
    over the job's runs (`_runs`): one row per run it reaches. `share`: per job, the share
    of its hours the work needed (`report.useful.shares`: its redone steps and extra
    starts left out; 1 where not given)."""
    if not cut or not measured:
        return []
    # Each piece's measured speed on its own GPU (NaN: the job reported no step).
    known = {(s.job_id, s.gpu_model, int(s.gpu_count)): s.measured_sps for s in measured}
    keys, steps, since_read, unknown = [], [], [], {}
    for piece in cut:
        p = piece.placement
        speed = known.get((p.job_id, p.gpu_model, int(p.gpu_count)), math.nan)
        # The steps the piece made, and those after the job's record was last written
        # (its reported step, if any, was read by then).
        read_at = jobs[p.job_id].updated_at
        after = p.start_at if p.start_at > read_at else read_at
        keys.append(p.job_id)
        steps.append(max(seconds(p.end_at - p.start_at), 0.0) * speed)
        since_read.append(max(seconds(p.end_at - after), 0.0) * speed)
        unknown[p.job_id] = unknown.get(p.job_id, False) or speed != speed
    made, later = group_sums(keys, steps), group_sums(keys, since_read)
    runs = _runs(cut)
    firsts: dict[int, PlacementRow] = {}
    for p in sorted(placed, key=lambda p: (p.job_id, p.start_at, p.id)):
        firsts.setdefault(p.job_id, p)
    by_job = by(measured, lambda s: s.job_id)
    rows = []
    for job_id in sorted(made):
        if unknown[job_id]:  # no measured speed: no baseline, never one from a declared figure
            continue
        own, job = firsts[job_id], jobs[job_id]
        work = made[job_id][0]
        if job.steps_done > 0 and (start is None or start <= own.start_at) and \
                job.updated_at <= end:  # the period holds the job's life to its report
            work = job.steps_done + later[job_id][0]
        total = own_total(job.spec, job.steps_total)  # None: not in its steps
        # At most its total, or the steps it reported where they are more (work done is
        # never cut to the declared work).
        steps_made = float(work) if total is None else min(float(work), max(
            total, float(job.steps_done)))
        speed = speed_on(by_job.get(job_id, []), own.gpu_model, int(own.gpu_count),
                         rates.get(job_id))
        if not speed > 0:
            continue
        # Whole seconds, as placements are stored (a float a hair under a second would be cut).
        rows.extend(own._replace(start_at=lo, end_at=hi)
                    for lo, hi in _laid(runs[job_id], round(
                        steps_made / speed * (share or {}).get(job_id, 1.0))))
    return rows


def _runs(cut: Sequence[Piece]) -> dict[int, list[tuple[datetime, datetime]]]:
    """Per job, the spans it ran in the period, in order: a new run starts where the user
    started the job again after a stop (a placement made by `start`), so the launch choice
    kept would have stopped and started when the job did; moves and recoveries stay inside
    a run (the choice kept would not have waited for them)."""
    runs: dict[int, list[list[datetime]]] = {}
    seen: set[int | None] = set()
    for piece in sorted(cut, key=lambda c: (c.placement.job_id, c.placement.start_at)):
        p = piece.placement
        spans = runs.setdefault(p.job_id, [])
        if not spans or (p.reason == "start" and p.id not in seen):
            spans.append([p.start_at, p.end_at])
        else:
            spans[-1][1] = max(spans[-1][1], p.end_at)
        seen.add(p.id)
    return {job: [(lo, hi) for lo, hi in spans] for job, spans in runs.items()}


def _laid(runs: Sequence[tuple[datetime, datetime]], needed: float
          ) -> list[tuple[datetime, datetime]]:
    """`needed` seconds laid over `runs` in order, each run filled to its end, what is left
    past the start of the last run (the work carries on to its end)."""
    out = []
    for n, (lo, hi) in enumerate(runs):
        last = n == len(runs) - 1
        take = needed if last else min(needed, seconds(hi - lo))
        out.append((lo, lo + timedelta(seconds=take)))
        needed -= take
        if needed <= 0:
            break
    return out

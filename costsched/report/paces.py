"""The pace each job kept on each GPU it ran on, for its baselines: the steps each of its
placements made over that placement's hours (its setup included, as the launch choice kept
would have paid its own), up to the job's report.

A placement's steps are those its step readings recorded (`JobStore.reading_rows`: the
step it had reached when it moved, was recovered or stopped), less the step the job had
reached on the placement before it; the job's newest placement reaches the step the job
reported. A job that ran on one GPU, or whose placements were stored without readings, is
paced as `costsched.measured.speed_rows` paces it over its placements' hours (several GPUs
then by its throughput table's ratios: an estimate, said by `estimated`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime

from costsched.measured import Rate, Speed, rate_or_nan, speed_rows
from costsched.optimize.unmatched_estimates import ESTIMATED_MARK
from costsched.report.sums import by, column_sum, seconds
from costsched.store.job_rows import PlacementRow


def placement_paces(placements: Sequence[PlacementRow], steps_done: Mapping[int, float],
                    read_at: Mapping[int, datetime], rates: Mapping[int, Rate | None],
                    readings: Sequence[tuple]) -> tuple[list[Speed], set[int]]:
    """(Speed rows per job and GPU (model, count): the pace each kept there, see the
    module; the ids of the jobs whose pace on their launch GPU is an estimate: shared by
    the table's ratio, or carried by it from another GPU). `readings`: `JobStore.reading_rows`
    of the jobs."""
    found = speed_rows(placements, steps_done, read_at, rates, ())
    read = {int(r[0]): r for r in readings}
    mine: dict[int, list[Speed]] = {}
    for job_id, placed in by(placements, lambda p: p.job_id).items():
        gpus = {(p.gpu_model, int(p.gpu_count)) for p in placed}
        at = read_at.get(job_id)
        if len(gpus) < 2 or at is None or any(p.id not in read for p in placed):
            continue
        mine[job_id] = _own(sorted(placed, key=lambda p: (p.start_at, p.id)), read,
                            float(steps_done.get(job_id, 0.0)), at, rates.get(job_id))
    out = [s for s in found if s.job_id not in mine]
    for rows in mine.values():
        out.extend(rows)
    estimated = {s.job_id for s in found if s.job_id not in mine
                 and len({(t.gpu_model, t.gpu_count) for t in found
                          if t.job_id == s.job_id}) > 1}
    firsts = {p.job_id: (p.gpu_model, int(p.gpu_count))
              for p in sorted(placements, key=lambda p: (p.start_at, p.id), reverse=True)}
    estimated |= {job for job, rows in mine.items()
                  if any(s.measuring and (s.gpu_model, s.gpu_count) == firsts[job]
                         for s in rows)}
    return [s._replace(measuring=False) for s in out], estimated


def _own(placed: Sequence[PlacementRow], read: Mapping[int, tuple], step: float,
         at: datetime, rate: Rate | None) -> list[Speed]:
    """One job's Speed rows from its placements' own steps and hours (`measuring` marks a
    GPU whose pace is carried by the table's ratio: no step of its own there)."""
    reached = 0.0
    groups: dict[tuple[str, int], list[list[float]]] = {}
    for n, p in enumerate(placed):
        last = float(read[p.id][4])
        if n == len(placed) - 1:
            last = max(last, step)
        made = max(last - reached, 0.0)
        reached = max(reached, last)
        end = at if p.end_at is None or not p.end_at < at else p.end_at
        spent = groups.setdefault((p.gpu_model, int(p.gpu_count)), [[], []])
        spent[0].append(made)
        spent[1].append(max(seconds(end - p.start_at), 0.0))
    rows = []
    for (gpu, count), (steps, spans) in groups.items():
        made, took = column_sum(steps), column_sum(spans)
        rows.append(Speed(placed[0].job_id, gpu, count, took / 3600,
                          rate_or_nan(rate, gpu, count),
                          made / took if made > 0 and took > 0 else math.nan, False))
    known = [s for s in rows if s.measured_sps == s.measured_sps]
    if not known:
        return rows
    ref = max(known, key=lambda s: s.hours)
    return [s if s.measured_sps == s.measured_sps else s._replace(
        measured_sps=ref.measured_sps * s.planned_sps / ref.planned_sps, measuring=True)
        for s in rows]


def estimated_lines(job_rows: Sequence[Mapping], estimated: set[int]) -> list[dict]:
    """Under the totals, one line per job whose launch-choice baseline rests on an
    estimated speed (`placement_paces`), marked as `plan` marks an estimated speed."""
    return [{"job_id": int(r["job_id"]), "name": r["name"],
             "line": f"{ESTIMATED_MARK} job {r['job_id']} ({r['name']}): its launch choice "
                     "kept rests on an estimated speed on its launch GPU (its steps there "
                     "were not recorded apart: its pace shared among its GPUs by its "
                     "throughput table's ratios)"}
            for r in job_rows if int(r["job_id"]) in estimated
            and r["launch_choice_usd"] == r["launch_choice_usd"]]

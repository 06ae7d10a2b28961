"""What of a job's billed hours its baselines count, and the state its row shows.

A baseline is charged for the work the job really did (docs/reports.md, Baselines). A
job that was preempted or moved paid for more than that work: the steps it made again
from its checkpoint and each new instance's setup. A baseline would not have been
preempted or moved, so it counts the job's training hours (`work.trained_seconds`: the
steps it did at its measured pace, those made again left out) and one start per run (the
setup of its first instance: the time before its first reported step less that step's
training; a user's stop and start begins a run, as the launch choice kept stops and
starts too), never more than its placements' hours. `shares` gives that over the
placements' hours, the share of each piece the baselines charge.

A placement still open at the report's end trained on after the job's record was last
written (its step read by then), as far as the store knows: those hours count as training,
as the baselines' work counts their steps (`pieces.static_stays`), never as overhead. A
placement that ended did what its readings say: its hours after them are not training.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime

from costsched.report.sums import by, column_sum, seconds
from costsched.shown_state import shown_state
from costsched.store.job_rows import JobRecord, PlacementRow
from costsched.work import own_total, trained_seconds, trained_span


def shares(jobs: Mapping[int, JobRecord], ran: Sequence[PlacementRow],
           readings: Sequence[tuple], end: datetime) -> dict[int, float]:
    """{job id: the share of its placements' hours up to `end` that its baselines count}
    (see the module), for each job that ran on more than one placement and reported steps
    on its first; any other job's baselines count its hours (a share of 1)."""
    out = {}
    read = by(readings, lambda r: int(r[1]))
    for job_id, placed in by(ran, lambda p: p.job_id).items():
        job, found = jobs.get(job_id), read.get(job_id, [])
        if job is None or len(placed) < 2 or not found:
            continue
        placed = sorted(placed, key=lambda p: (p.start_at, p.id))
        first = next((r for r in found if int(r[0]) == placed[0].id), None)
        span = trained_span(found, column_sum)
        trained = trained_seconds(found, float(job.steps_done),
                                  own_total(job.spec, job.steps_total),
                                  job.state == "succeeded", column_sum)
        if first is None or span is None or trained is None:
            continue
        setup = max(float(first[3]) - placed[0].start_at.timestamp()
                    - float(first[2]) * span[1] / span[0], 0.0)
        starts = 1 + sum(1 for p in placed[1:] if p.reason == "start")
        billed = column_sum([_billed(p, end) for p in placed])
        after = column_sum([_after_read(p, job.updated_at, end) for p in placed])
        if billed > 0:
            out[job_id] = min((trained + after + starts * setup) / billed, 1.0)
    return out


def placement_shares(jobs: Mapping[int, JobRecord], ran: Sequence[PlacementRow],
                     readings: Sequence[tuple], end: datetime) -> dict[int, float]:
    """{placement id: the share of its hours up to `end` the baselines count}, for each
    job that ran on more than one placement, each with step readings: the training it did
    there (its own steps, the step it reached there less the step reached before, at the
    pace read between its readings) and, on the first placement of each run, one setup,
    never more than its hours. The on-demand baseline so charges each offering for the
    work done on it, not the job's one share of all its hours."""
    out: dict[int, float] = {}
    read = {int(r[0]): r for r in readings}
    for job_id, placed in by(ran, lambda p: p.job_id).items():
        job = jobs.get(job_id)
        if job is None or len(placed) < 2 or any(p.id not in read for p in placed):
            continue
        placed = sorted(placed, key=lambda p: (p.start_at, p.id))
        span = trained_span([read[p.id] for p in placed], column_sum)
        if span is None:
            continue
        first = read[placed[0].id]
        setup = max(float(first[3]) - placed[0].start_at.timestamp()
                    - float(first[2]) * span[1] / span[0], 0.0)
        reached = 0.0
        for n, p in enumerate(placed):
            r = read[p.id]
            last = max(float(r[4]), float(job.steps_done)) if n == len(placed) - 1 \
                else float(r[4])
            made, reached = max(last - reached, 0.0), max(reached, last)
            steps, took = float(r[4]) - float(r[2]), float(r[5]) - float(r[3])
            pace = steps / took if steps > 0 and took > 0 else span[0] / span[1]
            billed = _billed(p, end)
            if billed > 0:
                starts = setup if n == 0 or p.reason == "start" else 0.0
                after = _after_read(p, job.updated_at, end)
                out[p.id] = min((made / pace + after + starts) / billed, 1.0)
    return out


def _billed(p: PlacementRow, end: datetime) -> float:
    """The seconds a placement ran up to `end`."""
    return max(seconds(min(end if p.end_at is None else p.end_at, end) - p.start_at), 0.0)


def _after_read(p: PlacementRow, read_at: datetime, end: datetime) -> float:
    """The seconds a placement still open at `end` ran after the job's record was last
    written: training whose steps no reading holds yet (see the module); 0 for one that
    ended by `end`."""
    if p.end_at is not None and p.end_at <= end:
        return 0.0
    return max(seconds(end - max(p.start_at, read_at)), 0.0)


def shown_states(jobs: Sequence[JobRecord], said: Collection[int]) -> dict[int, str]:
    """{job id: its state as every view shows it (`vocabulary.job_state`): ended-short
    for one that exited 0 short of its declared steps}. `said`: the jobs that reported a
    step (0 included)."""
    return {j.id: shown_state(j, reported=j.id in said) for j in jobs}


def on_demand_alone(placed: Sequence[PlacementRow]) -> set[int]:
    """The jobs that ran on on-demand instances alone: their on-demand baseline is the
    same charges as their spend in another order (its share of their hours aside, which
    an instance that is never preempted pays all the same), so it is their spend."""
    markets: dict[int, set[str]] = {}
    for p in placed:
        markets.setdefault(p.job_id, set()).add(p.market)
    return {job for job, found in markets.items() if found == {"on_demand"}}


def on_launch_choice(placed: Sequence[PlacementRow]) -> set[int]:
    """The jobs that ran on their launch choice alone: every placement of theirs on the
    offering (and GPUs) of their first one."""
    offerings: dict[int, set] = {}
    for p in placed:
        offerings.setdefault(p.job_id, set()).add((p.offering_key, p.gpu_model, p.gpu_count))
    return {job for job, found in offerings.items() if len(found) == 1}

"""The speed a start prices a stopped job's rest at, on the offering it would start on, in
words: the figure the decider priced it with (`service.speeds.rest_table`, its measured
speed carried by its table's ratio to a GPU it did not run on) and where it comes from."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from costsched import gang_stalls
from costsched.catalog import gpu_model_name
from costsched.measured import Speed, first_longest, sps, stored_readings
from costsched.model import InvalidInput
from costsched.own_budget import Pace
from costsched.service.speeds import rest_table
from costsched.store import PriceStore
from costsched.throughput import ThroughputTable
from costsched.throughput_rest import RestTable


def _gpu(model: str, count: int) -> str:
    return model if int(count) == 1 else f"{int(count)}x{model}"


def rest_pace(table: ThroughputTable, model: str, stored: Mapping,
              measured: Sequence[Speed], gpu_model: str, gpu_count: int,
              where: str) -> str | None:
    """The pace of the job's rest on (`gpu_model`, `gpu_count`) of the offering `where`
    ('gcp us-east4 g2-standard-4 on-demand'), as the rest is priced there, in words:
    'its measured 11.8 steps/s on WHERE' where it ran on that GPU, else '5.9 steps/s on
    WHERE (estimated: 11.8 measured on A100 x the table's ratio)'; None where no measured
    speed of it is known (its rest is priced at its plan's speed)."""
    rest = rest_table(table, model, stored, measured)
    if rest is table or not gpu_model:
        return None
    try:
        speed = float(rest.get(model, gpu_model, int(gpu_count)).steps_per_second)
    except InvalidInput:
        return None
    gpu = gpu_model_name(gpu_model)
    known = [s for s in measured if s.measured_sps == s.measured_sps]
    if any(gpu_model_name(s.gpu_model) == gpu and int(s.gpu_count) == int(gpu_count)
           for s in known):
        return f"its measured {sps(speed)} steps/s on {where}"
    ran = [s for s in known if s.hours > 0]
    if not ran:
        return None
    ref = first_longest(ran)
    return (f"{sps(speed)} steps/s on {where} (estimated: {sps(ref.measured_sps)} measured "
            f"on {_gpu(ref.gpu_model, ref.gpu_count)} x the table's ratio)")


def estimated_pace(table: ThroughputTable, model: str, gpu_model: str, gpu_count: int
                   ) -> str:
    """Where the speed the rest of the job is priced at on (`gpu_model`, `gpu_count`) is
    estimated (neither given nor measured; `table`: its rest's), in words: 'at an estimated
    0.31 steps/s on 1xA10G, not measured (estimate: ...)'; '' where it is not."""
    if not gpu_model:
        return ""
    try:
        speed = table.get(model, gpu_model, int(gpu_count))
    except InvalidInput:
        return ""
    if not speed.estimated:
        return ""
    return (f"at an estimated {sps(speed.steps_per_second)} steps/s on "
            f"{int(gpu_count)}x{gpu_model_name(gpu_model)}, not measured ({speed.basis})")


def so_far(store: PriceStore, job_id: int) -> Pace | None:
    """The pace job `job_id` ran at so far by its step readings (the steps between each
    placement's first and last reading over the time between them: no boot or setup),
    however short their span, before its speed is judged (`measured.MEASURING`); None
    where no placement of it had its step read twice."""
    spans = [r for r in stored_readings(gang_stalls.trained_readings(store, [job_id]))
             if r.last_ts > r.first_ts]
    steps = math.fsum(r.last_step - r.first_step for r in spans)
    seconds = math.fsum(r.last_ts - r.first_ts for r in spans)
    return Pace(steps, seconds / 3600) if steps > 0 and seconds > 0 else None


class Slower(NamedTuple):
    """The speed the rest of a job is priced at where the pace it ran so far is slower
    than its plan's (`slower_pace`), and that in words."""

    steps_per_second: float
    said: str


def slower_pace(table: ThroughputTable, model: str, measured: Sequence[Speed],
                pace: Pace | None, gpu_model: str, gpu_count: int,
                where: str) -> Slower | None:
    """The rest of a job whose speed is still being measured, on (`gpu_model`,
    `gpu_count`) of the offering `where`, at the pace it ran so far (`so_far`) where that
    is slower than its plan's on the GPU it ran on: the slower of the two, as a budget's
    hint errs toward enough. On that GPU 'the 18 steps/s it ran so far, not yet
    measured'; on another, carried by its table's ratio. None where its pace is not
    slower, or either speed is not known."""
    ref = _slower_than_planned(measured, pace)
    if ref is None or pace is None or not gpu_model:
        return None
    try:
        planned = float(table.get(model, gpu_model, int(gpu_count)).steps_per_second)
    except InvalidInput:
        return None
    if not planned > 0:
        return None
    said = f"the {sps(pace.per_second)} steps/s it ran so far, not yet measured"
    if gpu_model_name(ref.gpu_model) == gpu_model_name(gpu_model) and \
            int(ref.gpu_count) == int(gpu_count):
        return Slower(pace.per_second, said)
    speed = pace.per_second * planned / ref.planned_sps
    return Slower(speed, f"{sps(speed)} steps/s on {where} (estimated: {said} on "
                         f"{_gpu(ref.gpu_model, ref.gpu_count)}, x the table's ratio)")


def _slower_than_planned(measured: Sequence[Speed], pace: Pace | None) -> Speed | None:
    """The speed row of the GPU a job still being measured ran on longest, where the pace
    it ran so far (`pace`) is slower than its plan's there; None where it is not, or
    either is not known."""
    ran = [s for s in measured if s.hours > 0] or list(measured)
    if pace is None or not ran:
        return None
    ref = first_longest(ran)
    return ref if 0 < pace.per_second < ref.planned_sps else None


def slower_table(table: ThroughputTable, model: str, measured: Sequence[Speed],
                 pace: Pace | None) -> ThroughputTable | None:
    """The table the rest of a job still being measured is priced with where the pace it
    ran so far is slower than its plan's (`slower_pace`'s rule): that pace on the GPU it
    ran on, carried to the others by its table's ratio (`RestTable`); None where it is
    not slower. A move at a budget's cap weighs its rest by it, as the hint that gives
    the stopped job enough prices it: one figure to finish there."""
    ref = _slower_than_planned(measured, pace)
    if ref is None or pace is None:
        return None
    return RestTable(table, model, [ref._replace(measured_sps=pace.per_second,
                                                 measuring=False)])

"""The speed a start prices a stopped job's rest at, on the offering it would start on, in
words: the figure the decider priced it with (`service.speeds.rest_table`, its measured
speed carried by its table's ratio to a GPU it did not run on) and where it comes from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from costsched.catalog import gpu_model_name
from costsched.measured import Speed, first_longest, sps
from costsched.model import InvalidInput
from costsched.service.speeds import rest_table
from costsched.throughput import ThroughputTable


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

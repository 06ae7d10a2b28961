"""The speed the rest of a running job runs at: its measured speed where one is trusted
(`costsched.measured.speed_rows`: trained long enough between its step readings), else
its plan's figure. One fact for every price of the rest of a job (the decider's stay and
move costs, a budget's forecast, the dashboard's forecast, `status`): `rest_speed` for one
GPU, `RestTable` for a decider's view of every offering.

On a GPU the job did not run on, its measured speed is carried by its table's ratio
between the two GPUs (`speed_on`): a job measured 4x slower than planned is 4x slower
everywhere, so a move is never made to look cheaper by comparing a measured speed here
with a planned one there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from costsched.catalog import gpu_model_name
from costsched.measured import Speed, first_longest, speed_on, sps
from costsched.model import InvalidInput
from costsched.throughput import Throughput, ThroughputTable, model_key

MEASURED = "measured"
PLANNED = "planned"


class RestSpeed(NamedTuple):
    """Steps per second of the rest of a job on a GPU, and where the figure comes from
    (MEASURED or PLANNED; NaN and PLANNED when neither is known)."""

    steps_per_second: float
    source: str


def rest_speed(job_speeds: Sequence[Speed], gpu: str, count: int,
               planned: float) -> RestSpeed:
    """The speed the rest of a job runs at on (`gpu`, `count`): measured (its rows of
    `speed_rows`, carried by its table's ratio to a GPU it did not run on) where one is
    trusted, else `planned` (its table's figure there)."""
    rate = _rate_of(job_speeds, gpu, count, planned)
    measured = speed_on(job_speeds, gpu, count, rate)
    if math.isfinite(measured) and measured > 0:
        return RestSpeed(float(measured), MEASURED)
    return RestSpeed(float(planned) if planned > 0 else math.nan, PLANNED)


def _rate_of(job_speeds: Sequence[Speed], gpu: str, count: int, planned: float):  # noqa: ANN202
    """A rate that knows the one GPU asked about (its plan's figure) and those of the
    rows (their planned figures): all `speed_on` reads."""
    known = {(s.gpu_model, int(s.gpu_count)): s.planned_sps for s in job_speeds}
    known[(gpu, int(count))] = planned

    def rate(g: str, c: int) -> float:
        return float(known.get((g, int(c)), math.nan))

    return rate


class RestTable(ThroughputTable):
    """A running job's throughput table with its model's figures at the pace it measured
    (`rest_speed` on every GPU); other models, and every figure where nothing is measured,
    as `base` has them. Its answers depend on its base's and on the job's measured speeds
    (and the GPU it ran longest, which carries them to the others): jobs alike in both
    share a view (`speeds_key`)."""

    def __init__(self, base: ThroughputTable, model: str, job_speeds: Sequence[Speed]) -> None:
        self._base, self._key, self._speeds = base, model_key(model), tuple(job_speeds)
        self.precision, self.rule_scale = base.precision, base.rule_scale
        self._found: dict[tuple, Throughput] = {}

    def __getattr__(self, name: str) -> object:
        if name.startswith("__") or name in ("_base", "_key", "_speeds", "_found"):
            raise AttributeError(name)
        return getattr(self._base, name)

    @property
    def base(self) -> ThroughputTable:
        """The table the job's plan used."""
        return self._base

    def speeds_key(self, model: str) -> tuple | None:
        base = self._base.speeds_key(model)
        if base is None or model_key(model) != self._key:
            return base
        known = [s for s in self._speeds if s.measured_sps == s.measured_sps]
        ran = [s for s in known if s.hours > 0]
        ref = first_longest(ran) if ran else None
        return ("at pace", base, tuple((s.gpu_model, int(s.gpu_count), s.measured_sps)
                                       for s in known),
                None if ref is None else (ref.gpu_model, int(ref.gpu_count)))

    def overlay(self, rows: object, precision: str | None = None) -> ThroughputTable:
        return self._base.overlay(rows, precision)  # type: ignore[arg-type]

    def get(self, model: str, gpu_model: str, gpu_count: int = 1, *,
            estimate: bool = True) -> Throughput:
        asked = (model, gpu_model, gpu_count, estimate)
        if asked not in self._found:  # a pass asks the same few GPUs for every offering
            self._found[asked] = self._get(model, gpu_model, gpu_count, estimate)
        return self._found[asked]

    def _get(self, model: str, gpu_model: str, gpu_count: int,  # type: ignore[override]
             estimate: bool) -> Throughput:
        planned = self._base.get(model, gpu_model, gpu_count, estimate=estimate)
        if model_key(model) != self._key:
            return planned
        gpu, count = gpu_model_name(gpu_model), int(gpu_count)
        rows = [s._replace(planned_sps=_planned(self._base, model, s))
                for s in self._speeds]
        found = rest_speed(rows, gpu, count, planned.steps_per_second)
        if found.source != MEASURED:
            return planned
        # Measured on this very GPU: no estimate, whatever its plan's figure was; carried
        # from another GPU by the table's ratio: as estimated as the table's figure here.
        here = any(gpu_model_name(s.gpu_model) == gpu and int(s.gpu_count) == count
                   and s.measured_sps == s.measured_sps for s in self._speeds)
        return Throughput(found.steps_per_second, planned.estimated and not here,
                          f"measured by this job: {sps(found.steps_per_second)} steps/s on "
                          f"{count}x{gpu} (its plan's {sps(planned.steps_per_second)}: "
                          f"{planned.basis})")


def _planned(table: ThroughputTable, model: str, s: Speed) -> float:
    """The table's figure on the GPU of a speed row (NaN where it has none)."""
    try:
        return float(table.get(model, s.gpu_model, int(s.gpu_count)).steps_per_second)
    except InvalidInput:
        return math.nan

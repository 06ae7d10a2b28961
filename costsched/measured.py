"""Measured speed: the steps per second a job really made, from the step it reported and
the hours it trained, and how far that is from the figure its plan used.

A job's speed on a GPU (model and count) is the steps it made there over the time it
trained there: on each placement, from the first step it reported to the last (its
`readings`), so that the boot, the setup and the data loading before its first step are
never counted as slow training. Until a running job (one with an open placement) has
trained MIN_TRAINING_SECONDS between two readings on some GPU, its speed is still being
measured (`measuring`): no figure, no flag. A job that ended before that is measured over
its placements' hours (all it ran: its setup and the lag before its exit was seen
included), which bounds its speed from below: a speed faster than planned stands, and so
does a slower one once it ran SETUP_SECONDS; before, it is too short to judge
(`TOO_SHORT`), never "3.2x slower" for a job of seconds.
A job whose placements were stored before readings were kept is measured over its
placements' hours up to its report; one that ran on more than one GPU then reports one
step for all of them, so its steps are shared among its GPUs in the proportions of its
throughput table (the table's ratios, scaled to what the job did). A speed on a GPU the
job did not train on (long enough) is its measured speed carried by the table's ratio
between the two GPUs, never the table's absolute figure. Where no step was reported (or
the table knows neither GPU), there is no speed: NaN, never a guess.

Pure: frames and stored specs in, frames out; `costsched.service.speeds` reads the store.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from costsched.jobspec import parse, resolve
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.model import InvalidInput, utc
from costsched.optimize.decision import Overheads
from costsched.passes import memo
from costsched.throughput import ASSUMED_WORDS, ThroughputTable, assumed_basis, model_key

DEFAULT_FACTOR = 1.5  # measured / planned beyond this (either way) is flagged
SPEED_COLUMNS = ["job_id", "gpu_model", "gpu_count", "hours", "planned_sps", "measured_sps",
                 "measuring"]
# Between two readings on a GPU before its speed is judged: readings come every few seconds,
# so a speed is never judged on one or two of them.
MIN_TRAINING_SECONDS = 10.0
MEASURING = (f"measuring: its speed is judged after {MIN_TRAINING_SECONDS:.0f} s of "
             "training from its first reported step (boot and setup are not counted)")
# A job that ran less than this in all (a new instance's boot and setup, by default) may
# have spent most of it setting up: too short to be judged slow over all it ran.
SETUP_SECONDS = Overheads().restart_minutes * 60
TOO_SHORT = (f"too short to judge: it ran under {SETUP_SECONDS / 60:.0f} minutes and "
             f"trained under {MIN_TRAINING_SECONDS:.0f} s between its reported steps (its "
             "setup may be most of it)")
Rate = Callable[[str, int], float]  # steps/s on (GPU model, count) by a job's table


def rate_or_nan(rate: Rate | None, gpu: str, count: int) -> float:
    """`rate(gpu, count)`, NaN when there is no rate or its table cannot estimate the GPU."""
    if rate is None:
        return math.nan
    try:
        value = float(rate(str(gpu), int(count)))
    except InvalidInput:
        return math.nan
    return value if value > 0 else math.nan


def speeds(placements: pd.DataFrame, steps_done: Mapping[int, float],
           read_at: Mapping[int, pd.Timestamp], rates: Mapping[int, Rate | None],
           readings: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per job and GPU (model, count) it ran on: the hours it trained there (see the
    module), the speed its table gives (`planned_sps`) and the speed it made
    (`measured_sps`, NaN when it reported no step, or while `measuring`). `placements`:
    the jobs' placement frame (id, job_id, gpu_model, gpu_count, start_at, end_at; end NaT
    while open); `readings`: their step readings (`JobStore.readings`). A job without
    readings is measured over its placements' hours up to the reading of its step
    (`read_at`)."""
    if placements.empty:
        return pd.DataFrame(columns=SPEED_COLUMNS)
    read = set() if readings is None or readings.empty else set(readings["job_id"])
    if read:
        trained = _trained(placements[placements["job_id"].isin(read)], readings, rates)
        live = set(placements.loc[placements["end_at"].isna(), "job_id"])
        short = set(trained.loc[trained["measuring"], "job_id"]) - live
        trained = trained[~trained["job_id"].isin(short)]
        rest = placements[~placements["job_id"].isin(read - short)]
        if rest.empty:
            return trained
        over_all = speeds(rest, steps_done, read_at, rates)
        return pd.concat([trained, _bounded(over_all, short)], ignore_index=True)
    reading = placements["job_id"].map(lambda j: read_at.get(int(j)))
    reading = pd.to_datetime(reading, utc=True)
    end = placements["end_at"].fillna(reading)
    end = end.where(end < reading, reading)
    seconds = np.maximum((end - placements["start_at"]).dt.total_seconds().fillna(0.0), 0.0)
    frame = placements[["job_id", "gpu_model", "gpu_count"]].assign(hours=seconds / 3600)
    frame = frame.groupby(["job_id", "gpu_model", "gpu_count"], as_index=False,
                          sort=False)["hours"].sum()
    frame["planned_sps"] = [rate_or_nan(rates.get(int(j)), g, c) for j, g, c in zip(
        frame["job_id"], frame["gpu_model"], frame["gpu_count"], strict=True)]
    measured = np.full(len(frame), np.nan)
    all_hours, all_planned = frame["hours"].to_numpy(), frame["planned_sps"].to_numpy()
    for job_id, rows in frame.groupby("job_id").indices.items():
        steps = float(steps_done.get(int(job_id), 0.0))
        hours, planned = all_hours[rows], all_planned[rows]
        if steps <= 0 or hours.sum() <= 0:
            continue
        ran = hours > 0
        if ran.sum() == 1:  # one GPU: measured exactly; others it met after the reading
            here = steps / (hours[ran][0] * 3600)  # by the table's ratio
            measured[rows] = here * planned / planned[ran][0]
            measured[rows[ran]] = here
            continue
        table_steps = float((hours * 3600 * planned).sum())
        if math.isfinite(table_steps) and table_steps > 0:
            measured[rows] = planned * steps / table_steps
    frame["measured_sps"] = measured
    frame["measuring"] = False
    return frame[SPEED_COLUMNS]


def _bounded(frame: pd.DataFrame, short: set) -> pd.DataFrame:
    """`frame` (`speeds` over placements' hours) with the speeds of the `short` jobs that
    read slower than planned after running less than SETUP_SECONDS taken back to
    unmeasured: over all such a job ran, its setup and the lag before its exit was seen
    may be most of it, so its speed is only a lower bound, which says "faster" truly and
    "slower" never (eight seconds of a job, setup included, read "3.2x slower")."""
    ran = frame.groupby("job_id")["hours"].transform("sum") * 3600
    slow = (frame["job_id"].isin(short) & (ran < SETUP_SECONDS)
            & ~(frame["measured_sps"] >= frame["planned_sps"]))
    return frame.assign(measured_sps=frame["measured_sps"].where(~slow),
                        measuring=frame["measuring"] | slow)


def _trained(placements: pd.DataFrame, readings: pd.DataFrame,
             rates: Mapping[int, Rate | None]) -> pd.DataFrame:
    """`speeds` of jobs with step readings: per GPU, the steps between each placement's
    first and last reading over the time between them; a GPU it has not trained on long
    enough is carried by its table's ratio from the one it trained on longest."""
    read = readings.set_index("id")
    mine = placements.assign(
        seconds=placements["id"].map(
            (read["last_at"] - read["first_at"]).dt.total_seconds()).fillna(0.0),
        steps=placements["id"].map(read["last_step"] - read["first_step"]).fillna(0.0))
    frame = mine.groupby(["job_id", "gpu_model", "gpu_count"], as_index=False,
                         sort=False)[["seconds", "steps"]].sum()
    frame["hours"] = frame["seconds"] / 3600
    frame["planned_sps"] = [rate_or_nan(rates.get(int(j)), g, c) for j, g, c in zip(
        frame["job_id"], frame["gpu_model"], frame["gpu_count"], strict=True)]
    enough = (frame["seconds"] >= MIN_TRAINING_SECONDS) & (frame["steps"] > 0)
    frame["measured_sps"] = (frame["steps"] / frame["seconds"]).where(enough)
    frame["measuring"] = False
    for _, rows in frame.groupby("job_id").indices.items():
        known = frame.iloc[rows][enough.iloc[rows]]
        if known.empty:  # reported steps, not yet for long enough anywhere
            frame.loc[frame.index[rows], "measuring"] = True
            continue
        ref = known.sort_values("seconds", ascending=False, kind="stable").iloc[0]
        others = frame.index[rows][~enough.iloc[rows].to_numpy()]
        frame.loc[others, "measured_sps"] = (ref["measured_sps"] * frame.loc[others,
                                             "planned_sps"] / ref["planned_sps"])
    return frame[SPEED_COLUMNS]


def measuring(job_speeds: pd.DataFrame) -> bool:
    """Whether a job (its rows of `speeds`) reported steps but has not trained long enough
    on any GPU for a speed yet."""
    return bool(len(job_speeds)) and bool(job_speeds["measuring"].all())


def speed_on(job_speeds: pd.DataFrame, gpu: str, count: int, rate: Rate | None) -> float:
    """The job's speed on (`gpu`, `count`): measured where it ran there, else its measured
    speed where it ran longest carried by its table's ratio between the two GPUs (`rate`);
    NaN when neither is known. `job_speeds`: one job's rows of `speeds`."""
    known = job_speeds[job_speeds["measured_sps"].notna()]
    here = known[(known["gpu_model"] == gpu) & (known["gpu_count"].astype(int) == int(count))]
    if len(here):
        return float(here["measured_sps"].iloc[0])
    ran = known[known["hours"] > 0]
    if ran.empty:
        return math.nan
    ref = ran.sort_values("hours", ascending=False, kind="stable").iloc[0]
    return float(ref["measured_sps"] * rate_or_nan(rate, gpu, count) / ref["planned_sps"])


@dataclass(frozen=True)
class SpeedCheck:
    """A job's measured speed beside the figure its plan used, on the GPU it ran longest."""

    job_id: int
    name: str
    model: str
    gpu_model: str
    gpu_count: int
    planned_sps: float
    measured_sps: float
    basis: str  # where the planned figure came from (the job spec, a table, an estimate)
    factor: float  # the flagging threshold
    nodes: int = 1  # a multi-node job's instances at once, each with gpu_count GPUs

    @property
    def ratio(self) -> float:
        """Measured over planned."""
        return self.measured_sps / self.planned_sps

    @property
    def flagged(self) -> bool:
        """Beyond the factor from its plan's figure; never when that figure is an assumed
        hour of work (no speed to compare a measurement with)."""
        if assumed_basis(self.basis):
            return False
        r = self.ratio
        return math.isfinite(r) and r > 0 and max(r, 1 / r) > self.factor

    @property
    def where(self) -> str:
        """'1xA100-80GB', or '2 nodes of 1xA100-80GB'."""
        shape = f"{self.gpu_count}x{self.gpu_model}"
        return f"{self.nodes} nodes of {shape}" if self.nodes > 1 else shape

    def line(self, savings: bool = True) -> str:
        """What a user reads: the job, both figures and by how much (`savings`: and that
        savings are computed from the measured one)."""
        return f"job {self.job_id} ({self.name}): {self.finding(savings)}"

    def finding(self, savings: bool = True) -> str:
        """`line` without the job's name, for a line that names it already."""
        r = self.ratio
        how = f"{r:,.3g}x faster" if r >= 1 else f"{1 / r:,.3g}x slower"
        return (f"measured {sps(self.measured_sps)} steps/s on {self.where}, {how} than the "
                f"{sps(self.planned_sps)} its plan used ({self.basis})"
                + ("; savings use the measured speed" if savings else ""))


def sps(value: float) -> str:
    """Steps per second in a few significant digits."""
    if not math.isfinite(value):
        return "-"
    return f"{value:,.3g}" if value < 1000 else f"{value:,.0f}"


def check(job_id: int, name: str, model: str, job_speeds: pd.DataFrame, basis: str,
          factor: float = DEFAULT_FACTOR) -> SpeedCheck | None:
    """The job's `SpeedCheck` on the GPU it ran longest with a measured speed; None when
    it has none, or its plan's figure there is unknown."""
    top = longest(job_speeds).get(int(job_id))
    return None if top is None else checked(top, name, model, basis, factor)


def checked(top: tuple, name: str, model: str, basis: str,
            factor: float = DEFAULT_FACTOR, nodes: int = 1) -> SpeedCheck:
    """The `SpeedCheck` of a job's row of `longest` (`nodes`: its instances at once)."""
    return SpeedCheck(int(top.job_id), str(name), str(model), str(top.gpu_model),
                      int(top.gpu_count), float(top.planned_sps), float(top.measured_sps),
                      basis, float(factor), int(nodes))


def longest(found: pd.DataFrame) -> dict[int, tuple]:
    """Of `speeds` rows (of any number of jobs), each job's row on the GPU it ran longest
    with both speeds known (the first such of equal hours), as a named tuple; a job with
    none is left out. Sorted once for every job."""
    known = found[found["measured_sps"].notna() & found["planned_sps"].notna()
                  & (found["hours"] > 0)]
    if known.empty:
        return {}
    top = known.sort_values("hours", ascending=False, kind="stable").drop_duplicates("job_id")
    return {int(row.job_id): row for row in top.itertuples(index=False)}


def mismatch_factor(factor: float | None = None) -> float:
    """`factor`, else the configured `throughput.mismatch_factor` (default 1.5)."""
    if factor is not None:
        return check_factor(factor)
    from costsched.config import effective

    return check_factor(effective().throughput.mismatch_factor)


def check_factor(value: object) -> float:
    """A flagging factor: a number above 1."""
    try:
        factor = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        factor = math.nan
    if not math.isfinite(factor) or factor <= 1:
        raise InvalidInput(f"throughput mismatch factor {value!r}: expected a number above 1")
    return factor


# --- a job's throughput table, from its stored spec ------------------------------------------


class JobRate:
    """A job's steps per second on (GPU model, count) by its own throughput table (the
    figures its plans use), with where each figure comes from."""

    def __init__(self, model: str, table: ThroughputTable) -> None:
        self.model, self._table = model, table

    def __call__(self, gpu: str, count: int) -> float:
        return self._table.get(self.model, gpu, count).steps_per_second

    def basis(self, gpu: str, count: int) -> str:
        try:
            return self._table.get(self.model, gpu, count).basis
        except InvalidInput:
            return ""


def job_rate(stored: dict, created_at: datetime, table: ThroughputTable, models: set[str]
             ) -> JobRate | None:
    """The rate of a job from its stored spec ({"spec": ..., "source": ...}) over `table`
    (`models`: its model keys); None when the spec does not resolve. Inside a pass, jobs
    whose specs differ at most in a name that is only a label (not one of `models`) share
    one: a sweep's jobs, say. (Its creation time only dates a deadline, which the spec met
    when it was stored.)"""
    spec = stored_spec(stored)
    if spec.get("model") or model_key(str(spec.get("name"))) not in models:
        spec = {k: v for k, v in spec.items() if k != "name"}
    key = ("job rate", id(table), json.dumps(spec, sort_keys=True, default=str))
    return memo(key, lambda: _resolved_rate(stored, created_at, table), shared=True)


def _resolved_rate(stored: dict, created_at: datetime, table: ThroughputTable
                   ) -> JobRate | None:
    try:
        source = str(stored.get("source", "<stored spec>"))
        resolved = resolve(parse(stored_spec(stored), source), table, utc(created_at),
                           source=source)
    except InvalidInput:
        return None
    return JobRate(resolved.job.model, resolved.table)


def stored_spec(stored: dict) -> dict:
    """The job spec of a stored one ({"spec": ..., "source": ...}); {} when it has none."""
    spec = stored.get("spec") if isinstance(stored, dict) else None
    return spec if isinstance(spec, dict) else {}


def basis_words(basis: str) -> str:
    """Where a planned figure came from, in a few words."""
    if not basis:
        return "source unknown"
    if assumed_basis(basis):
        return ASSUMED_WORDS
    if basis.startswith("job spec") and " h on " in basis:
        return "the hours of work the job spec gives"
    if basis.startswith("job spec"):
        return "the job spec's throughputs"
    if basis.startswith("estimate"):
        return "an estimate"
    return basis

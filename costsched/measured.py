"""Measured speed: the steps per second a job really made, from the step it reported and
the hours it trained, and how far that is from the figure its plan used.

A job's speed on a GPU (model and count) is the steps it made there over the time it
trained there: on each placement, from the first step it reported to the last (its
`readings`), so that the boot, the setup and the data loading before its first step are
never counted as slow training. Only steps whose time is counted are: a step is read with
the time the job reported it where its instance says (the agent reads its progress file's
time), else the time it was read; never a later time for a step reported earlier, which
would pace the steps before it in less time than they took. Reading times are kept in
whole seconds, a placement's first rounded down and its last up, so that a pace is never
faster than the job made. A step whose time is not known (read off an instance found gone,
or reached by a stop after the stop was asked for) ends no placement's training. Steps a
placement trained again after a preemption (from its checkpoint) are steps it trained, in
the time it took: the speed is the pace of training, and the work lost to a preemption
is its cost, not a slower GPU; a gang's repair in place (its stall from the repair to the
gang's resume, inside one placement's readings) is left out of them before they come here
(`gang_stalls.trained_readings`), as a recovery's gap is by its new placement. Until a
running job (one with an open placement) has trained MIN_TRAINING_SECONDS between two
readings on some GPU, its speed is still being measured (`measuring`): no figure, no flag.
A job that ended before that is measured over
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

Pure: rows (or frames, made rows) and stored specs in, rows (or a frame of them) out;
`costsched.service.speeds` reads the store.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from costsched.amounts import ratio
from costsched.lazy import pandas as pd
from costsched.model import InvalidInput, utc
from costsched.optimize.decision import Overheads
from costsched.passes import memo
from costsched.throughput import ASSUMED_WORDS, ThroughputTable, assumed_basis, model_key
from costsched.work import CPU_REFERENCE, Work, assumed_work, own_steps, stored_nodes

DEFAULT_FACTOR = 1.5  # measured / planned beyond this (either way) is flagged
SPEED_COLUMNS = ["job_id", "gpu_model", "gpu_count", "hours", "planned_sps", "measured_sps",
                 "measuring"]
# Between two readings on a GPU before its speed is judged: readings come every few seconds,
# so a speed is never judged on one or two of them.
MIN_TRAINING_SECONDS = 10.0
# When a running job's speed is judged: status's words, and the report's against its estimate.
JUDGED_AFTER = (f"judged after {MIN_TRAINING_SECONDS:.0f} s of training from its first "
                "reported step (boot and setup are not counted)")
MEASURING = f"its speed is being measured, and is {JUDGED_AFTER}"
# A running job not judged yet beside its estimate (`report.estimates`, its verdict's cell:
# no ratio, and a note under the table says when it is judged, JUDGED_AFTER).
TOO_EARLY = "too early to tell"
# A job that ran less than this in all (a new instance's boot and setup, by default) may
# have spent most of it setting up: too short to be judged slow over all it ran.
SETUP_SECONDS = Overheads().restart_minutes * 60
_READ_APART = ("too short to judge. No placement of it had its step read twice "
               f"{MIN_TRAINING_SECONDS:.0f} s apart, and it ran under "
               f"{SETUP_SECONDS / 60:.0f} minutes in all, setup and restarts included")
TOO_SHORT = (f"{_READ_APART}. Over a run that short, setup weighs so much that its speed "
             "would read slower than planned whatever it was")
Rate = Callable[[str, int], float]  # steps/s on (GPU model, count) by a job's table


def too_short(stored: Mapping, ran_hours: float, step: float) -> str:
    """The words of a job that ended `TOO_SHORT` to judge: those for a job whose steps are
    its own (`work.own_steps`); for one whose work is hours on a reference GPU (given, or
    an assumed hour), no plan's speed is in its steps, so what was measured is said in its
    hours: the `ran_hours` its placements ran, of its hours of work, to `step`."""
    if own_steps(stored):
        return TOO_SHORT
    work = assumed_work(stored) or _given_hours(stored_spec(stored))
    said = "is not given" if work.assumed else "is given in hours"
    return (f"{_READ_APART}. It ran {ran_hours:.2g} h of its {work.describe()} and reached "
            f"step {step:,.0f}, in steps of its own. Its work {said}, so no plan's steps/s "
            "stand beside them")


def _given_hours(spec: Mapping) -> Work:
    """The work of a spec that gives `hours` on `reference_gpu` ('V100:2', 'CPU')."""
    hours, reference = float(spec.get("hours") or 0.0), str(spec.get("reference_gpu") or "")
    gpu, _, count = reference.partition(":")
    where = CPU_REFERENCE if gpu.upper() == "CPU" else f"{count or 1}x{gpu}"
    return Work(hours * 3600, hours, where, nodes=stored_nodes(spec))


def rate_or_nan(rate: Rate | None, gpu: str, count: int) -> float:
    """`rate(gpu, count)`, NaN when there is no rate or its table cannot estimate the GPU."""
    if rate is None:
        return math.nan
    try:
        value = float(rate(str(gpu), int(count)))
    except InvalidInput:
        return math.nan
    return value if value > 0 else math.nan


class Speed(NamedTuple):
    """A job's speed on a GPU (model, count) it ran on (`speed_rows`; SPEED_COLUMNS)."""

    job_id: int
    gpu_model: str
    gpu_count: int
    hours: float  # the time it trained there (see the module)
    planned_sps: float  # its table's figure there; NaN when it has none
    measured_sps: float  # NaN when it reported no step, or while `measuring`
    measuring: bool  # reported steps, not trained long enough on any GPU yet


class Placed(NamedTuple):
    """What a speed needs of a placement (`store.job_rows.PlacementRow` has these)."""

    id: int
    job_id: int
    gpu_model: str
    gpu_count: int
    start_at: datetime
    end_at: datetime | None  # None while open


class Reading(NamedTuple):
    """A placement's first and last step readings (`JobStore.reading_rows`): times in
    epoch seconds; `id` is the placement's."""

    id: int
    job_id: int
    first_step: float
    first_ts: float
    last_step: float
    last_ts: float


def speed_rows(placements: Sequence[Placed], steps_done: Mapping[int, float],
               read_at: Mapping[int, datetime], rates: Mapping[int, Rate | None],
               readings: Sequence[Reading] = ()) -> list[Speed]:
    """Per job and GPU (model, count) it ran on, in the order its placements first met
    each: the hours it trained there (see the module), its table's speed there and the
    speed it made. `placements`: the jobs' placements (more fields are ignored);
    `readings`: their step readings. A job without readings is measured over its
    placements' hours up to the reading of its step (`read_at`). The one computation of
    a measured speed: `speeds` is it as a frame."""
    if not placements:
        return []
    read = {int(r.job_id) for r in readings}
    if not read:
        return _over_all(placements, steps_done, read_at, rates)
    trained = _trained(placements, readings, rates, read)
    live = {int(p.job_id) for p in placements if p.end_at is None}
    short = {s.job_id for s in trained if s.measuring} - live
    trained = [s for s in trained if s.job_id not in short]
    rest = [p for p in placements if int(p.job_id) not in read - short]
    if not rest:
        return trained
    return trained + _bounded(_over_all(rest, steps_done, read_at, rates), short)


def _groups(placements: Iterable[Placed]) -> dict[tuple[int, str, int], list[Placed]]:
    """Placements by (job, GPU model, count), in the order each was first met."""
    out: dict[tuple[int, str, int], list[Placed]] = {}
    for p in placements:
        out.setdefault((int(p.job_id), str(p.gpu_model), int(p.gpu_count)), []).append(p)
    return out


def _over_all(placements: Sequence[Placed], steps_done: Mapping[int, float],
              read_at: Mapping[int, datetime], rates: Mapping[int, Rate | None]
              ) -> list[Speed]:
    """`speed_rows` of jobs without readings: over their placements' hours up to the
    reading of their step; one GPU measured exactly, several by their table's ratios."""
    def hours(p: Placed) -> float:
        reading = read_at.get(int(p.job_id))
        if reading is None:
            return 0.0
        end = reading if p.end_at is None or not p.end_at < reading else p.end_at
        return max((end - p.start_at).total_seconds(), 0.0) / 3600

    groups = [(key, sum(hours(p) for p in found))
              for key, found in _groups(placements).items()]
    by_job: dict[int, list[int]] = {}
    for i, ((job_id, _, _), _) in enumerate(groups):
        by_job.setdefault(job_id, []).append(i)
    planned = [rate_or_nan(rates.get(j), g, c) for (j, g, c), _ in groups]
    measured = [math.nan] * len(groups)
    for job_id, rows in by_job.items():
        steps = float(steps_done.get(job_id, 0.0))
        spans = [groups[i][1] for i in rows]
        if steps <= 0 or sum(spans) <= 0:
            continue
        ran = [i for i in rows if groups[i][1] > 0]
        if len(ran) == 1:  # one GPU: measured exactly; others it met after the reading
            here = steps / (groups[ran[0]][1] * 3600)  # by the table's ratio
            for i in rows:
                measured[i] = here * planned[i] / planned[ran[0]]
            measured[ran[0]] = here
            continue
        table_steps = sum(groups[i][1] * 3600 * planned[i] for i in rows)
        if math.isfinite(table_steps) and table_steps > 0:
            for i in rows:
                measured[i] = planned[i] * steps / table_steps
    return [Speed(j, g, c, h, planned[i], measured[i], False)
            for i, ((j, g, c), h) in enumerate(groups)]


def _bounded(found: list[Speed], short: set[int]) -> list[Speed]:
    """`found` (`_over_all`) with the speeds of the `short` jobs that read slower than
    planned after running less than SETUP_SECONDS taken back to unmeasured: over all such
    a job ran, its setup and the lag before its exit was seen may be most of it, so its
    speed is only a lower bound, which says "faster" truly and "slower" never (eight
    seconds of a job, setup included, read "3.2x slower")."""
    ran: dict[int, float] = {}
    for s in found:
        ran[s.job_id] = ran.get(s.job_id, 0.0) + s.hours
    out = []
    for s in found:
        slow = (s.job_id in short and ran[s.job_id] * 3600 < SETUP_SECONDS
                and not s.measured_sps >= s.planned_sps)
        out.append(s._replace(measured_sps=math.nan, measuring=True) if slow else s)
    return out


def _trained(placements: Sequence[Placed], readings: Sequence[Reading],
             rates: Mapping[int, Rate | None], read: set[int]) -> list[Speed]:
    """`speed_rows` of the jobs of `read` (with step readings): per GPU, the steps between
    each placement's first and last reading over the time between them; a GPU it has not
    trained on long enough is carried by its table's ratio from the one it trained on
    longest."""
    by_placement = {int(r.id): r for r in readings}
    groups = []
    for key, found in _groups(p for p in placements if int(p.job_id) in read).items():
        spans = [by_placement.get(int(p.id)) for p in found]
        seconds = sum(float(r.last_ts - r.first_ts) for r in spans if r is not None)
        steps = sum(float(r.last_step - r.first_step) for r in spans if r is not None)
        groups.append((key, seconds, steps))
    out = []
    for (job_id, gpu, count), seconds, steps in groups:
        enough = seconds >= MIN_TRAINING_SECONDS and steps > 0
        out.append(Speed(job_id, gpu, count, seconds / 3600,
                         rate_or_nan(rates.get(job_id), gpu, count),
                         steps / seconds if enough else math.nan, False))
    by_job: dict[int, list[int]] = {}
    for i, s in enumerate(out):
        by_job.setdefault(s.job_id, []).append(i)
    for rows in by_job.values():
        known = [i for i in rows if _enough(groups[i])]
        if not known:  # reported steps, not yet for long enough anywhere
            for i in rows:
                out[i] = out[i]._replace(measuring=True)
            continue
        ref = out[max(known, key=lambda i: (groups[i][1], -i))]  # the first of the longest
        for i in rows:
            if i not in known:
                out[i] = out[i]._replace(
                    measured_sps=ref.measured_sps * out[i].planned_sps / ref.planned_sps)
    return out


def _enough(group: tuple) -> bool:
    """Whether a GPU's readings (`_trained`'s group) span enough training to judge."""
    _, seconds, steps = group
    return seconds >= MIN_TRAINING_SECONDS and steps > 0


def trained(job_speeds: Sequence[Speed]) -> list[Speed]:
    """One job's rows of `speed_rows` on the GPUs it trained on, the longest first (the
    first met of equal hours): those with a measured speed and hours; beside another, a
    GPU trained on under MIN_TRAINING_SECONDS is left out (its speed is carried there by
    the table's ratio: no measure of it)."""
    ran = [s for s in job_speeds if not math.isnan(s.measured_sps) and s.hours > 0]
    return [s for s in sorted(ran, key=lambda s: -s.hours)
            if len(ran) < 2 or s.hours * 3600 >= MIN_TRAINING_SECONDS]


class ShownSpeed(NamedTuple):
    """A job's measured speed as every view shows it (`shown_speed`): the figure on the
    GPU it trained on longest, or the words of why there is none yet."""

    steps_per_second: float | None  # None: `words` says why
    gpu_model: str
    gpu_count: int
    nodes: int  # a gang's instances at once, each with gpu_count GPUs
    words: str  # being measured, or too short to judge (with why); '' with a figure

    @property
    def line(self) -> str:
        """'measured 30.2 steps/s on 1xL4', or its words."""
        if self.steps_per_second is None:
            return self.words
        shape = f"{self.gpu_count}x{self.gpu_model}"
        where = f"{self.nodes} nodes of {shape}" if self.nodes > 1 else shape
        return f"measured {sps(self.steps_per_second)} steps/s on {where}"


def shown_speed(job_speeds: Sequence[Speed], stored: Mapping, final: bool,
                step: float) -> ShownSpeed | None:
    """The one measured speed of a job (its rows of `speed_rows`; `stored`: its stored
    spec; `final`: it ended; `step`: its steps done) that `status`, `report` and the
    dashboard show: its speed on the GPU it trained on longest (`trained`); while it has
    not trained long enough to judge, MEASURING, or `too_short` once it ended; None when
    it has no step to measure."""
    rows = list(job_speeds)
    if not rows:
        return None
    nodes = spec_nodes(stored)  # type: ignore[arg-type]
    if measuring(rows):
        top = first_longest(rows)
        words = too_short(stored, sum(s.hours for s in rows), step) if final else MEASURING
        return ShownSpeed(None, str(top.gpu_model), int(top.gpu_count), nodes, words)
    ran = trained(rows)
    if not ran:
        return None
    top = ran[0]
    return ShownSpeed(float(top.measured_sps), str(top.gpu_model), int(top.gpu_count),
                      nodes, "")


def speeds(placements: pd.DataFrame, steps_done: Mapping[int, float],
           read_at: Mapping[int, pd.Timestamp], rates: Mapping[int, Rate | None],
           readings: pd.DataFrame | None = None) -> pd.DataFrame:
    """`speed_rows` as a frame (SPEED_COLUMNS), from frames: `placements` (id, job_id,
    gpu_model, gpu_count, start_at, end_at; end NaT while open) and `readings`
    (`JobStore.readings`)."""
    found = speed_rows(placed_rows(placements), steps_done, read_at, rates,
                       () if readings is None else reading_rows(readings))
    return speeds_frame(found)


def speeds_frame(found: Sequence[Speed]) -> pd.DataFrame:
    """`speed_rows` as a frame (SPEED_COLUMNS)."""
    if not found:
        return pd.DataFrame(columns=SPEED_COLUMNS)
    return pd.DataFrame(list(found), columns=SPEED_COLUMNS)


def placed_rows(placements: pd.DataFrame) -> list[Placed]:
    """A placement frame's rows as `speed_rows` reads them."""
    if placements.empty:
        return []
    return [Placed(int(i), int(j), str(g), int(c), s.to_pydatetime(),
                   None if pd.isna(e) else e.to_pydatetime())
            for i, j, g, c, s, e in zip(*(placements[k] for k in Placed._fields),
                                        strict=True)]


def reading_rows(readings: pd.DataFrame) -> list[Reading]:
    """A readings frame (`JobStore.readings`) as `speed_rows` reads it."""
    if readings.empty:
        return []
    return [Reading(int(i), int(j), float(f), a.timestamp(), float(last), b.timestamp())
            for i, j, f, a, last, b in zip(*(readings[k] for k in READING_FIELDS),
                                           strict=True)]


READING_FIELDS = ["id", "job_id", "first_step", "first_at", "last_step", "last_at"]


def stored_readings(rows: Iterable[tuple]) -> list[Reading]:
    """`JobStore.reading_rows` as `speed_rows` reads them."""
    return [Reading(int(i), int(j), float(f), float(a), float(last), float(b))
            for i, j, f, a, last, b in rows]


def job_speeds(found: Iterable[Speed]) -> dict[int, list[Speed]]:
    """`speed_rows` by job, in their order."""
    out: dict[int, list[Speed]] = {}
    for s in found:
        out.setdefault(s.job_id, []).append(s)
    return out


def not_judged_yet(placements: Sequence[Placed], readings: Sequence[Reading],
                   step: float) -> bool:
    """Whether a running job (its `placements`, its step `readings` and the `step` it
    reported) is not judged yet: it reported no step, or its speed is still being measured
    (`measuring`, MEASURING: readings on no GPU span MIN_TRAINING_SECONDS of training).
    The one rule of status's speed line and the report's estimate (TOO_EARLY)."""
    if step <= 0 or not placements:
        return True
    job_id = int(placements[0].job_id)
    return measuring(speed_rows(placements, {job_id: step}, {}, {}, readings))


def measuring(job_speeds: pd.DataFrame | Sequence[Speed]) -> bool:
    """Whether a job (its rows of `speeds`) reported steps but has not trained long enough
    on any GPU for a speed yet."""
    rows = _rows(job_speeds)
    return bool(rows) and all(s.measuring for s in rows)


def speed_on(job_speeds: pd.DataFrame | Sequence[Speed], gpu: str, count: int,
             rate: Rate | None) -> float:
    """The job's speed on (`gpu`, `count`): measured where it ran there, else its measured
    speed where it ran longest carried by its table's ratio between the two GPUs (`rate`);
    NaN when neither is known. `job_speeds`: one job's rows of `speeds`."""
    known = [s for s in _rows(job_speeds) if not math.isnan(s.measured_sps)]
    here = [s for s in known if s.gpu_model == gpu and int(s.gpu_count) == int(count)]
    if here:
        return float(here[0].measured_sps)
    ran = [s for s in known if s.hours > 0]
    if not ran:
        return math.nan
    ref = first_longest(ran)
    return float(ref.measured_sps * rate_or_nan(rate, gpu, count) / ref.planned_sps)


def first_longest(found: Sequence[Speed]) -> Speed:
    """The first of the rows with the most hours."""
    best = found[0]
    for s in found[1:]:
        if s.hours > best.hours:
            best = s
    return best


def _rows(found: pd.DataFrame | Sequence[Speed]) -> list[Speed]:
    """`speeds` rows, from its frame or as they are."""
    if not hasattr(found, "columns"):
        return list(found)  # type: ignore[arg-type]
    frame = found  # a frame of SPEED_COLUMNS
    return [Speed(int(j), str(g), int(c), float(h), float(p), float(m), bool(x))
            for j, g, c, h, p, m, x in zip(*(frame[k] for k in SPEED_COLUMNS), strict=True)]


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
        how = f"{ratio(r)} faster" if r >= 1 else f"{ratio(1 / r)} slower"
        return (f"measured {sps(self.measured_sps)} steps/s on {self.where}, {how} than the "
                f"{sps(self.planned_sps)} its plan used ({self.basis})"
                + ("; savings use the measured speed" if savings else ""))


def sps(value: float) -> str:
    """Steps per second in a few significant digits."""
    if not math.isfinite(value):
        return "-"
    return f"{value:,.3g}" if value < 1000 else f"{value:,.0f}"


def check(job_id: int, name: str, model: str, job_speeds: pd.DataFrame | Sequence[Speed],
          basis: str, factor: float = DEFAULT_FACTOR) -> SpeedCheck | None:
    """The job's `SpeedCheck` on the GPU it ran longest with a measured speed; None when
    it has none, or its plan's figure there is unknown."""
    top = longest(job_speeds).get(int(job_id))
    return None if top is None else checked(top, name, model, basis, factor)


def checked(top: Speed, name: str, model: str, basis: str,
            factor: float = DEFAULT_FACTOR, nodes: int = 1) -> SpeedCheck:
    """The `SpeedCheck` of a job's row of `longest` (`nodes`: its instances at once)."""
    return SpeedCheck(int(top.job_id), str(name), str(model), str(top.gpu_model),
                      int(top.gpu_count), float(top.planned_sps), float(top.measured_sps),
                      basis, float(factor), int(nodes))


def longest(found: pd.DataFrame | Sequence[Speed]) -> dict[int, Speed]:
    """Of `speeds` rows (of any number of jobs), each job's row on the GPU it ran longest
    with both speeds known (the first such of equal hours); a job with none is left
    out."""
    known = [s for s in _rows(found) if not math.isnan(s.measured_sps)
             and not math.isnan(s.planned_sps) and s.hours > 0]
    return {job_id: first_longest(rows) for job_id, rows in job_speeds(known).items()}


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

    @property
    def table(self) -> ThroughputTable:
        return self._table

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
    from costsched.jobspec import parse, resolve

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


def spec_nodes(stored: dict) -> int:
    """A job's instances at once from its stored spec (a gang's num_nodes; 1 for others),
    as its measured speed is worded: 'on 2 nodes of 1xA100-80GB'."""
    nodes = stored_spec(stored).get("num_nodes", 1)
    return nodes if isinstance(nodes, int) and not isinstance(nodes, bool) and nodes > 1 else 1


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

"""How a job's work was said, and what a plan's figures rest on because of it.

A job's work is steps (priced with its model's speeds, or the throughputs it gives), or
hours of work on a reference GPU (`hours` + `reference_gpu`; with no model, the speeds of
other GPUs are relative to the reference, 1 = as fast). A SkyPilot task that says no work
(no `costsched:` section, or one without work) is given an hour on one of its GPUs, the
slowest of its set (`unit_gpu`: the order the set is written in changes nothing): that
hour is assumed, so a plan of it can rank offerings by the cost of an hour of work but
has no total. `Work` says which, and the key of the job's file that gives the real work.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

CPU_REFERENCE = "a CPU instance"
# What every view says of the total of a job whose work is not given (`steps_total`).
NOT_KNOWN = "the work is not given, so its total is not known"
# What a running job's views say of its rest when its work is not given (`service.speeds`).
REST_NOT_PRICED = f"{NOT_KNOWN} and the rest cannot be priced"


@dataclass(frozen=True)
class Work:
    """A job's work as its file says it (or does not)."""

    steps: float
    hours: float | None = None  # hours of work on `reference` when said in hours
    reference: str = ""  # "1xV100" or CPU_REFERENCE when said in hours, else ""
    relative: bool = False  # speeds are relative to the reference (no model, no throughputs)
    assumed: bool = False  # not said: costsched's default hour on the reference
    source: str = ""  # the job's file
    nodes: int = 1  # the job's nodes (a gang's), however its work is said
    # Steps the file gives with no speed for them: the hour is assumed all the same, and
    # what is missing is the speed, not the work.
    steps_given: float | None = None

    def on(self) -> str:
        """What an hour of the work is on: the reference ('1xV100'), or a gang's nodes of it
        ('2 nodes x 1xL4'), whose pace, all nodes together, a speed is (1 = as fast): the
        hours of work of speeds relative to the reference, or assumed, are the gang's."""
        gang = self.relative or self.assumed
        if gang and self.nodes > 1 and self.reference and self.reference != CPU_REFERENCE:
            return f"{self.nodes} nodes x {self.reference}"
        return self.reference

    def describe(self) -> str:
        """'20,000 steps', '3 h of work on 1xV100', '1 h of work on 1xV100 (assumed)'."""
        if self.hours is None:
            return f"{self.steps:,.0f} steps"
        return (f"{self.hours:g} h of work on {self.on()}"
                + (" (assumed)" if self.assumed else ""))

    def unit(self) -> str:
        """What the per-hour figures of a plan of assumed work are per."""
        return f"hour of work on {self.on()}"

    def key(self) -> str:
        """The key of the job's file that gives the real work, in words."""
        where = f" in {self.source}" if self.source and not self.source.startswith("<") else ""
        if self.steps_given is not None:
            gpu = self.reference.split("x", 1)[-1] if self.reference else "GPU"
            return (f"`costsched: {{throughputs: {{{gpu}: steps/s}}}}` or `costsched: "
                    f"{{model: NAME}}` beside the steps{where} (a first run measures it: "
                    "`costsched status` shows its steps/s)")
        if self.reference == CPU_REFERENCE:
            return f"`costsched: {{hours: H}}` (hours of CPU work){where}"
        # Only a SkyPilot task's work is ever assumed: its keys are under `costsched:`.
        return (f"`costsched: {{hours: H}}` (hours of work on {self.on()}), "
                f"`costsched: {{model: NAME, steps: N}}` or `costsched: {{throughputs: "
                f"{{GPU: steps/s}}, steps: N}}`{where}")

    def assumption(self, figures: bool = True, rest: bool = False) -> str:
        """The note a plan or a launch of assumed work prints ('' when the work is given).
        `figures`: whether figures of the assumed hour are shown beside it; without (a
        running job's `status`), only what gives the total: 'a total needs the work: ...'.
        `rest`: of a running job, whose rest cannot be priced either: said in the same
        line, once (never a second line that the work is not given)."""
        if not self.assumed:
            return ""
        where = self.source if self.source and not self.source.startswith("<") else "the job"
        if self.steps_given is not None:
            needs = f"a total needs the speed: {self.key()}"
            given = (f"{where} gives the work ({self.steps_given:,.0f} steps) but no speed, "
                     "so its hours are not known"
                     + (" and the rest cannot be priced" if rest else ""))
        else:
            needs = f"a total needs the work: {self.key()}"
            given = (f"the work is not given in {where}, so its total is not known and the "
                     "rest cannot be priced" if rest else f"the work is not given in {where}")
        if not figures:
            return f"{given}; {needs}" if rest else needs
        return (f"{given}: figures are for {self.hours:g} h of work on {self.on()}; "
                f"{needs}")

    def as_dict(self) -> dict:
        """The JSON form (`plan --json`, `status --json`)."""
        # (steps that exist only because the work is assumed are no steps of the job's)
        return {"steps": None if self.assumed else self.steps, "hours": self.hours,
                "reference": self.reference or None, "nodes": self.nodes,
                "unit": self.unit() if self.hours is not None else None,
                "relative_speeds": self.relative, "assumed": self.assumed,
                "note": self.assumption() or None,
                "keys": self.keys() if self.assumed else [],
                "steps_given": self.steps_given}

    def keys(self) -> list[str]:
        """The keys that give the real work, as dotted paths of the job's file."""
        if self.reference == CPU_REFERENCE:
            return ["costsched.hours"]
        if self.steps_given is not None:
            return ["costsched.throughputs", "costsched.model"]
        return ["costsched.hours", "costsched.model + costsched.steps",
                "costsched.throughputs + costsched.steps"]


def unit_gpu(gpus: Sequence[tuple[str, int]], precision: str = "fp32") -> tuple[str, int]:
    """The GPU (model, count) of a set whose hour of work is the assumed unit of a task
    that gives no work: the slowest by the catalog's speed index times its count, then the
    first by name and count, so that the order the set is written in changes nothing. A
    GPU the catalog does not know comes after those it knows."""
    from costsched.throughput import GPU_SPECS

    def pace(gpu: tuple[str, int]) -> tuple[int, float, str, int]:
        spec = GPU_SPECS.get(gpu[0])
        if spec is None:
            return (1, 0.0, gpu[0], gpu[1])
        return (0, spec.speed_index(precision) * gpu[1], gpu[0], gpu[1])

    return min(gpus, key=pace)


def assumed_work(stored: Mapping[str, Any]) -> Work | None:
    """The assumed work of a stored job (the store keeps its spec as JSON, with its file as
    `source`); None when its work is given."""
    spec = stored.get("spec") or {}
    task = spec.get("task") or {}
    if not isinstance(task, Mapping) or not task.get("work_assumed"):
        return None
    hours, reference = spec.get("hours") or 1.0, str(spec.get("reference_gpu") or "")
    if reference.upper() == "CPU":
        reference = CPU_REFERENCE
    else:
        gpu, _, count = reference.partition(":")
        reference = f"{count or 1}x{gpu}"
    given = task.get("steps_given")
    return Work(float(hours) * 3600, float(hours), reference, True, True,
                str(stored.get("source") or ""), stored_nodes(spec),
                float(given) if isinstance(given, (int, float)) else None)


def stored_nodes(spec: Mapping[str, Any]) -> int:
    """A stored spec's nodes (its task's num_nodes; 1 when not said)."""
    task = spec.get("task") or {}
    nodes = spec.get("num_nodes") or (task.get("num_nodes") if isinstance(task, Mapping) else 1)
    return int(nodes) if isinstance(nodes, int) and nodes > 1 else 1


def steps_total(stored: Mapping[str, Any], figure: float) -> float | None:
    """A stored job's total steps: `figure` (as its record stores it), None where its work
    is not given. Its stored figure is then the assumed hour its plan ranked offerings by
    (in the reference GPU's seconds, not the job's steps): never its total, its progress,
    or a measure of the rest of it."""
    return None if assumed_work(stored) is not None else float(figure)


def own_steps(stored: Mapping[str, Any]) -> bool:
    """Whether a stored job's steps are its own (its reported step counts against its
    total, its measured steps/s against its plan's): not an assumed hour of work, nor hours
    of work on a reference GPU with no model or throughputs (whose plan's speeds are
    relative to that GPU, not in the job's steps)."""
    spec = stored.get("spec") if isinstance(stored, Mapping) else None
    spec = spec if isinstance(spec, Mapping) else {}
    return assumed_work(stored) is None and (
        bool(spec.get("model")) or bool(spec.get("throughputs")) or not spec.get("hours"))


def own_total(stored: Mapping[str, Any], total: float | None) -> float | None:
    """A stored job's total in its own steps, those it reports (`total`, its record's
    `steps_total`), where they are its own (`own_steps`); None where its work is assumed or
    given as hours on a reference GPU: its reported steps are then no share of that total
    (its record's figure stays the work its plan priced, in the reference GPU's seconds)."""
    return None if total is None or not own_steps(stored) else float(total)


def share_key(stored: Mapping[str, Any]) -> str:
    """Why a stored job's progress is its step and not a share, and the key that gives a
    share ('' where its steps are its own: a share is shown)."""
    if own_steps(stored):
        return ""
    if assumed_work(stored) is not None:
        return NOT_KNOWN
    spec = stored.get("spec") or {}
    source = str(stored.get("source") or "")
    where = f" in {source}" if source and not source.startswith("<") else ""
    reference = str(spec.get("reference_gpu") or "")
    if reference.upper() == "CPU":
        return (f"its work is given as {spec.get('hours'):g} h of CPU work, not in its own "
                "steps: its progress is the step it reports, never a share")
    gpu, _, count = reference.partition(":")
    sky = bool((spec.get("task") or {}).get("sky"))
    key = ("`costsched: {throughputs: {GPU: steps/s}, steps: N}`" if sky
           else "`steps: N` with `throughputs: {GPU: steps/s}` (or `model:`)")
    return (f"its work is given as {spec.get('hours'):g} h of work on {count or 1}x{gpu}, "
            f"not in its own steps: its progress is the step it reports, never a share; "
            f"{key}{where} instead of its hours gives one")


def ended_short(succeeded: bool, step: float, total: float | None,
                reported: bool | None = None) -> bool:
    """Whether a job that exited 0 (`succeeded`) had reported a last `step` short of its
    `total` in its own steps (`own_total`; None: no share is known). Exit 0 is done, by the
    job contract, but its progress is then the step it reported, not all of its steps. A
    job that reported no step is not short: how much it did is not known
    (`done_not_known`); one that reported step 0 did none of them.
    `reported`: whether it reported a step (0 included: a step reading is stored); None
    where that is not known, when only a step above 0 says it did."""
    if not succeeded or total is None:
        return False
    said = float(step) > 0 if reported is None else reported or float(step) > 0
    return said and float(step) < float(total)


def done_not_known(succeeded: bool, step: float, total: float | None,
                   reported: bool | None) -> bool:
    """Whether a job that exited 0 (`succeeded`) did a share of its `total` in its own
    steps (`own_total`; None: no share is known) that is not known: it reported no step,
    0 included (`reported` False: no step reading is stored, and its `step` is 0). Exit 0
    is done by the job contract, but no step it reported stands behind it: every view
    shows no share for it (never 100%) and no step 'reported', and says why
    (`not_reported_words`). None for `reported`: not known (only a step above 0 says)."""
    return succeeded and total is not None and reported is False and float(step) <= 0


def not_reported_words(total: float) -> str:
    """What every view says of a job whose share done is not known (`done_not_known`)."""
    return (f"exited 0 having reported no step: how many of its {total:,.0f} declared steps "
            f"it did is not known (a job reports its step in {PROGRESS_FILE_VARIABLE})")


# Where a job reports its step (the job contract, `launchers.agent`).
PROGRESS_FILE_VARIABLE = "$COSTSCHED_PROGRESS_FILE"


def short_words(step: float, total: float) -> str:
    """What every view says of a job that `ended_short`."""
    return (f"exited 0 at step {step:,.0f} of {total:,.0f} (the last step it reported): "
            "its declared steps were not reached")


def past_total(step: float, total: float | None) -> bool:
    """Whether a job reported a `step` beyond its `total` in its own steps (`own_total`;
    None: no share is known): it did more work than it declares."""
    return total is not None and float(step) > float(total)


def past_words(step: float, total: float, stored: Mapping[str, Any]) -> str:
    """What every view says of a job `past_total`: the steps it reported, the total it
    declares and the key of its file that declares them (a SkyPilot task's under
    `costsched:`), and what its plan's figures assumed."""
    key, where = steps_key(stored)
    return (f"reported {step:,.0f} steps, more than the {total:,.0f} declared ({key}{where}): "
            f"the plan's hours and cost assumed {total:,.0f}")


def steps_key(stored: Mapping[str, Any]) -> tuple[str, str]:
    """The key of a stored job's file that declares its steps (a SkyPilot task's under
    `costsched:`) and ' in FILE' (its file; '' where it has none, a spec given inline)."""
    spec = stored.get("spec") or {}
    task = spec.get("task") if isinstance(spec, Mapping) else None
    key = "costsched.steps" if isinstance(task, Mapping) and task.get("sky") else "steps"
    source = str(stored.get("source") or "")
    return key, (f" in {source}" if source and not source.startswith("<") else "")


def as_in_file(value: float) -> str:
    """A number as a job's file takes it, wherever a line quotes a key's value: '2000',
    '0.5', never '2,000' (a string in YAML) nor '1e+06'."""
    number = float(value)
    if number.is_integer():
        return str(int(number))
    written = repr(number)  # the shortest that reads back; an exponent YAML reads as text
    return written if "e" not in written else f"{number:.15f}".rstrip("0")


def declared_steps(stored: Mapping[str, Any], total: float) -> str:
    """The steps a stored job declares, as its file says them: 'costsched.steps: 2000 in
    short.yaml' (`steps_key`, `as_in_file`)."""
    key, where = steps_key(stored)
    return f"{key}: {as_in_file(total)}{where}"


def steps_done(step: float, total: float | None, succeeded: bool,
               reported: bool | None = None) -> float:
    """The steps a job did: its last reported `step` (past its `total` in its own steps
    where it reported more: `past_total`), or all of its total once it `succeeded`
    (`own_total`; unless it `ended_short`: `reported` says whether it reported a step, 0
    included), or that step where its total is not its own (None); NaN where it is not
    known (`done_not_known`: it exited 0 reporting none). A share done is this over its
    total, at most 1 (`share_done`)."""
    if total is None:
        return max(float(step), 0.0)
    if done_not_known(succeeded, step, total, reported):
        return math.nan
    if succeeded and not ended_short(succeeded, step, total, reported):
        return max(float(step), float(total))
    return max(float(step), 0.0)


def share_done(step: float, total: float, succeeded: bool,
               reported: bool | None = None) -> float:
    """The share of its `total` in its own steps a job did (`steps_done` over it): at most
    1, however many steps past it it reported; NaN where it is not known."""
    return min(steps_done(step, total, succeeded, reported) / total, 1.0)


def trained_span(readings: Iterable[Sequence[Any]],
                 add: Callable[[list[float]], float] = sum) -> tuple[float, float] | None:
    """(steps, seconds) a job made between its first and last step readings on each
    placement (`JobStore.reading_rows`: placement, job, first step, its time, last step,
    its time), each summed by `add` (the report passes its column sum, so that its figures
    match its tables'); None without readings that span a step and a second."""
    rows = list(readings)
    steps = add([max(float(r[4]) - float(r[2]), 0.0) for r in rows])
    seconds = add([max(float(r[5]) - float(r[3]), 0.0) for r in rows])
    return (steps, seconds) if steps > 0 and seconds > 0 else None


def trained_seconds(readings: Iterable[Sequence[Any]], step: float, total: float | None,
                    succeeded: bool, add: Callable[[list[float]], float] = sum
                    ) -> float | None:
    """The seconds a job trained: the steps it did at the pace measured between its step
    readings (`trained_span`), one rule whatever its work is given in. The steps it did
    are `steps_done`: its last reported `step`, past its `total` in its own steps where it
    reported more (`own_total`; all of them once it `succeeded`, unless it `ended_short`),
    or that step where its total is not its own (hours of work on a reference GPU). Never
    the readings' span itself: they come a watch pass apart, the first after the job
    began and the last before it ended, and miss the training before and after them. None
    without readings that span a step and a second."""
    rows = list(readings)
    span = trained_span(rows, add)
    if span is None:
        return None
    return steps_done(step, total, succeeded, reported=bool(rows)) * span[1] / span[0]

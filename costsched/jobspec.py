"""Job spec YAML (SkyPilot-like), validated with pydantic; errors name the file and field.

    name: resnet50-imagenet
    workdir: .                               # the code, packed at launch (see docs/projects.md)
    setup: pip install -r requirements.txt   # once on each new instance, before run
    run: python train.py --steps 20000
    model: ResNet-50 (batch size 64)        # or throughputs: {V100: 5.4, "K80:8": 5.7}
    steps: 20000                             # or epochs + steps_per_epoch, or hours + reference_gpu
    checkpoint: {location: s3://bucket/resnet50, size_gb: 0.2, interval_minutes: 30}
    constraints:
      deadline: 48h                          # hours, "36h", "2d", "90m" or an ISO time
      budget: 100                            # USD for the whole run
      clouds: [aws]
      regions: [us-east-1]
      markets: [spot]
      gpu_models: [K80, V100]
      gpu_counts: [1, 8]
      max_price: 10                          # USD per instance-hour
    sweep: {LR: [0.1, 0.01]}                 # optional: one job per combination, set as envs
    max_restarts_on_errors: 3                # optional: restarts after a non-zero exit (0)

A file may hold several jobs as YAML documents separated by `---`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from costsched.amounts import parse_usd
from costsched.catalog import parse_gpu
from costsched.cpu_work import CpuWork
from costsched.durations import MAX_HOURS, parse_hours, work_hours
from costsched.jobspec_amounts import amount as _amount
from costsched.jobspec_amounts import positive as _positive
from costsched.jobspec_deadlines import (  # noqa: F401 - theirs, read from here too
    deadline_value,
    passed_said,
    refuse_passed_deadline,
)
from costsched.jobspec_places import (
    AlternativeSpec,
    PlaceSpec,
    _choices,
    _Strict,
)
from costsched.model import Constraints, InvalidInput, Job, utc
from costsched.optimize import checkpoint_interval
from costsched.optimize.decision import DEFAULT_CHECKPOINT_HOURS, Overheads
from costsched.optimize.job import Workload
from costsched.spec_errors import all_errors, as_written, whole, yaml_kind
from costsched.sweep_values import SweepValues
from costsched.throughput import ASSUMED_WORK, GPU_SPECS, PRECISIONS, UNIT_CHOSEN, ThroughputTable
from costsched.work import CPU_REFERENCE, Work

# The largest amounts a spec may state: beyond them a number is a typo (or an attack), and
# the arithmetic on it would overflow or lose all precision.
MAX_STEPS = 1e12
MAX_USD = 1e9
MAX_MINUTES = 1e6
MAX_GB = 1e6  # a petabyte
MAX_STEPS_PER_SECOND = 1e9
MAX_NODES = 64  # instances in one gang
MAX_RESTARTS_ON_ERRORS = 1000


# A throughput's steps per second, checked as its own field ('throughputs.L4: 0: ...').
StepsPerSecond = Annotated[float, AfterValidator(
    lambda v: _positive(v, "number of steps per second", MAX_STEPS_PER_SECOND))]


class CheckpointSpec(_Strict):
    location: str = ""
    size_gb: float = 0.0
    # Minutes of work between checkpoints, or "auto": costsched chooses it
    # (costsched.optimize.checkpoint_interval) and tells the job.
    interval_minutes: float | str = DEFAULT_CHECKPOINT_HOURS * 60
    # Boot and set-up of a new instance; None: the configuration's ([migration]).
    restart_minutes: float | None = None

    @field_validator("size_gb")
    @classmethod
    def _size(cls, v: float) -> float:
        return _amount(v, "a size in GB", MAX_GB)

    @field_validator("interval_minutes", mode="before")
    @classmethod
    def _interval(cls, v: Any) -> float | str:
        minutes = checkpoint_interval.parse(v)
        if minutes == checkpoint_interval.AUTO:
            return minutes
        return _positive(minutes, "number of minutes", MAX_MINUTES)  # type: ignore[return-value]

    @field_validator("restart_minutes")
    @classmethod
    def _restart(cls, v: float | None) -> float | None:
        return None if v is None else _amount(v, "a number of minutes", MAX_MINUTES)


class ConstraintsSpec(PlaceSpec):
    deadline: float | datetime | None = None
    budget: float | None = None
    budget_name: str | None = Field(None, min_length=1, max_length=100)  # config budgets.named
    at_cap: Literal["stop", "move"] | None = None  # config budgets.at_cap when not given
    max_price: float | None = None
    max_migrations: int | None = Field(None, ge=0, le=1_000_000)
    # A task's alternatives whose union (the fields above) would allow more than they do.
    alternatives: list[AlternativeSpec] = []

    @field_validator("deadline", mode="before")
    @classmethod
    def _deadline(cls, v: Any) -> Any:
        return None if v is None else parse_hours(v)

    @field_validator("budget", "max_price", mode="before")
    @classmethod
    def _dollars(cls, v: Any) -> Any:
        return parse_usd(v) if isinstance(v, str) else v

    @field_validator("budget")
    @classmethod
    def _budget(cls, v: float | None) -> float | None:
        return _positive(v, "amount of USD", MAX_USD)

    @field_validator("max_price")
    @classmethod
    def _price(cls, v: float | None) -> float | None:
        return _positive(v, "USD per hour", MAX_USD)



MAX_COMMAND_BYTES = 64 * 1024  # a run command's limit (execve's is 128 KiB per argument)
# An environment variable's value: the kernel refuses a NAME=value over 128 KiB, and all of
# a process's environment and arguments share a few MiB; larger data goes in a file.
MAX_ENV_BYTES = 32 * 1024
MAX_ENVS_BYTES = 256 * 1024
MAX_NAME = 100  # characters of a job's name (the store keeps 128, a sweep adds "-N")
CPU = "CPU"  # reference_gpu of work measured on a CPU instance: no GPU at all


ENV_NAME_FORM = "letters, digits and _, not starting with a digit"


def is_env_name(key: str) -> bool:
    """Whether `key` names an environment variable as a shell reads it (`echo $STEP SLEEP`
    never reads 'STEP SLEEP'): the one rule for envs, secrets and sweeps, files and options."""
    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) is not None


def _env_name(key: str) -> None:
    if not is_env_name(key):
        raise ValueError(f"{key!r}: expected an environment variable name ({ENV_NAME_FORM})")


class MountSpec(_Strict):
    """A file mount of a SkyPilot task: a bucket (mounted or copied) or a local path
    (copied, like the workdir) at `path` on the instance."""

    path: str = Field(min_length=1)
    source: str = Field(min_length=1)
    mode: str = "COPY"  # MOUNT | COPY | MOUNT_CACHED


class TaskSpec(_Strict):
    """What a SkyPilot task says beyond where the job runs, kept for the launchers.
    Secrets and envs without a value are kept by name only here: their values are given
    at launch; an env's value is then stored with the job, a secret's never is."""

    ports: list[str] = []
    disk_size: int | None = Field(None, ge=1, le=65_536)  # GB
    disk_tier: str | None = None
    image_id: str | dict[str, str] | None = None
    network_tier: str | None = None
    labels: dict[str, str] = {}
    autostop: bool | int | str | dict | None = None
    config: dict[str, Any] = {}
    secrets: list[str] = []
    # Values the task file writes for some of its secrets (SkyPilot's): a launch uses them
    # where --secret gives none. Never stored: left out of every dump of the spec.
    written_secrets: dict[str, str] = Field(default={}, exclude=True, repr=False)
    launch_envs: list[str] = []
    mounts: list[MountSpec] = []
    checkpoint_mount: str = ""  # where the checkpoint bucket is mounted in the task
    # `ordered:` alternatives, first preferred: {clouds, regions, markets, instance_types
    # ("cloud/type"), zones}, [] for any; one dropped as read keeps its place: {"dropped": notes}
    order: list[dict[str, list[str]]] = []
    notes: list[str] = []  # what was read with a remark (an accelerator dropped, ...)
    # Why costsched narrowed a place filter beyond what the task wrote, by filter: {'clouds':
    # "the task's s3 bucket /data (s3://...) keeps it on aws (...)"}; a plan says it.
    limits: dict[str, str] = {}
    # Where the task wrote each filter ('regions': 'resources.region'): the key a job with
    # no plan is told to change (`optimize.no_plan_keys`).
    filter_keys: dict[str, str] = {}
    work_assumed: bool = False  # the task says no work: its hours are costsched's default
    # The steps a task gives with no speed (no model, no throughputs): its hours are then
    # assumed all the same (`work_assumed`), and its plan says the speed is what is missing.
    steps_given: float | None = None
    # Its hours (given or assumed) are on the GPU costsched chose, the task's slowest: no
    # reference_gpu written, so no GPU's speed is one anyone saw.
    unit_chosen: bool = False
    # Local paths (workdir, mount sources) as the file wrote them, by their absolute path:
    # what `plan --emit sky` writes back.
    as_written: dict[str, str] = {}
    # What a launch must be given first, one line each ("file_mounts./out: ${B} has no
    # value: ..."): a plan goes on without it, `launch` refuses until it is given.
    needs: list[str] = []
    num_nodes: int = Field(1, ge=1, le=MAX_NODES)  # the job's num_nodes, for the launchers
    sky: bool = False  # read from a SkyPilot task: costsched's own fields are in its section

    @field_validator("secrets", "launch_envs", "written_secrets")
    @classmethod
    def _names(cls, v: Any, info: ValidationInfo) -> Any:
        listed: Any = ()
        if info.field_name == "written_secrets":  # a listed secret's name is said once
            listed = info.data.get("secrets", v)  # (not there: said refused already)
        for key in v:  # each is set in the job's environment: one rule with `envs`
            if key not in listed:
                _env_name(key)
        return v

    def image_for(self, region: str) -> str:
        """The image for `region` ('' for the launcher's default)."""
        if isinstance(self.image_id, dict):
            return self.image_id.get(region, "")
        return self.image_id or ""

    @property
    def docker_image(self) -> str:
        """The container image setup and run run in (image_id docker:IMAGE), or ''."""
        image = self.image_id if isinstance(self.image_id, str) else ""
        return image[len("docker:"):] if image.startswith("docker:") else ""


class JobSpec(_Strict):
    name: str = Field(min_length=1, max_length=MAX_NAME)
    run: str = ""
    workdir: str | None = None  # the project's code, packed at launch (relative: to the file)
    setup: str = ""  # run once on each new instance, in the unpacked workdir, before `run`
    envs: dict[str, str] = {}
    model: str | None = None
    throughputs: dict[str, StepsPerSecond] | None = None
    precision: str = "fp32"
    steps: float | None = None
    epochs: float | None = None
    steps_per_epoch: float | None = None
    hours: float | None = None
    reference_gpu: str | None = None
    checkpoint: CheckpointSpec = CheckpointSpec()
    constraints: ConstraintsSpec = ConstraintsSpec()
    sweep: dict[str, SweepValues] | None = None
    task: TaskSpec = TaskSpec()
    # A gang: the job runs on this many instances of one offering, in one zone.
    num_nodes: int = Field(1, ge=1, le=MAX_NODES)
    # Times an instance that exits non-zero is restarted from the job's newest checkpoint
    # (SkyPilot's job_recovery.max_restarts_on_errors); 0: such a job fails.
    max_restarts_on_errors: int = Field(0, ge=0, le=MAX_RESTARTS_ON_ERRORS, strict=True)

    @model_validator(mode="before")
    @classmethod
    def _nodes_to_task(cls, data: Any) -> Any:
        """The launchers read the node count from the task (what they are given); a count
        out of range is said once, as the file wrote it (`num_nodes`)."""
        nodes = data.get("num_nodes", 1) if isinstance(data, dict) else None
        if isinstance(nodes, int) and 1 <= nodes <= MAX_NODES:
            task = data.get("task")
            task = dict(task) if isinstance(task, dict) else (
                task.model_dump() if isinstance(task, TaskSpec) else {})
            data = {**data, "task": {**task, "num_nodes": nodes}}
        return data

    @field_validator("envs", mode="before")
    @classmethod
    def _envs(cls, v: Any) -> Any:
        if not isinstance(v, dict):
            return v
        for key, value in v.items():
            if not isinstance(value, (str, int, float, bool)):
                kind = "nothing" if value is None else f"a {yaml_kind(value)}"
                raise ValueError(f"{key!r}: expected a string, number or true/false, got {kind}")
        return {str(k): str(x) for k, x in v.items()}

    @field_validator("envs")
    @classmethod
    def _env_names(cls, v: dict[str, str]) -> dict[str, str]:
        for key, value in v.items():
            _env_name(key)
            if "\0" in value:
                raise ValueError(f"{key}: a value with a NUL character; expected text")
            if len(value.encode()) > MAX_ENV_BYTES:
                raise ValueError(f"{key}: {len(value.encode()):,} bytes; expected at most "
                                 f"{MAX_ENV_BYTES:,} (put larger data in a file)")
        total = sum(len(k) + len(x.encode()) + 2 for k, x in v.items())
        if total > MAX_ENVS_BYTES:
            raise ValueError(f"{total:,} bytes in all; expected at most {MAX_ENVS_BYTES:,}")
        return v

    @field_validator("run")
    @classmethod
    def _command(cls, v: str) -> str:
        if "\0" in v:
            raise ValueError("a NUL character in the command; expected shell text")
        if len(v.encode()) > MAX_COMMAND_BYTES:
            raise ValueError(f"{len(v.encode()):,} bytes; expected at most "
                             f"{MAX_COMMAND_BYTES:,} (put a long command in a script)")
        return v

    @field_validator("sweep")
    @classmethod
    def _sweep_names(cls, v: dict | None) -> dict | None:
        for key in v or {}:
            _env_name(key)  # each sweep name becomes an environment variable
        return v

    @field_validator("precision")
    @classmethod
    def _precision(cls, v: str) -> str:
        return _choices([v], PRECISIONS)[0]

    @field_validator("throughputs")
    @classmethod
    def _throughputs(cls, v: dict[str, float] | None) -> dict[str, float] | None:
        if v is None:
            return v
        if not v:
            raise ValueError("expected at least one GPU: steps/s pair")
        out = {}
        for key, sps in v.items():
            gpu, n = parse_gpu(key)
            out[f"{gpu}:{n}"] = float(sps)
        return out

    @field_validator("reference_gpu")
    @classmethod
    def _reference(cls, v: str | None) -> str | None:
        if v is None or v.strip().upper() == CPU:
            return v if v is None else CPU
        gpu, n = parse_gpu(v)
        return f"{gpu}:{n}"

    @field_validator("steps", "epochs", "steps_per_epoch")
    @classmethod
    def _amounts(cls, v: float | None, info: ValidationInfo) -> float | None:
        v = _positive(v, "number", MAX_STEPS)
        return whole(v, "steps") if info.field_name == "steps" else v  # 2500.5: refused

    @field_validator("hours", mode="before")
    @classmethod
    def _hours_written(cls, v: Any) -> Any:
        return work_hours(v) if isinstance(v, str) else v

    @field_validator("hours")
    @classmethod
    def _work_hours(cls, v: float | None) -> float | None:
        return _positive(v, "number of hours", MAX_HOURS)

    @model_validator(mode="after")
    def _work(self) -> JobSpec:
        keys = {form: [k for k in form.split() if getattr(self, k) is not None]  # given
                for form in ("steps", "epochs steps_per_epoch", "hours reference_gpu")}
        forms = {form.split()[0]: bool(given) for form, given in keys.items()}
        if self.task.sky and not any(forms.values()) and (self.model or self.throughputs):
            given = " and ".join(k for k in ("model", "throughputs") if getattr(self, k))
            raise ValueError(f"{given} give{'s' * (' and ' not in given)} the job's speed, "
                             "not its work: give its work beside, as steps "
                             "(`costsched: {steps: N, ...}`), epochs and steps_per_epoch, or "
                             "hours (`costsched: {hours: H, ...}`, hours of work on the "
                             "task's slowest GPU)")
        if sum(forms.values()) != 1:
            got = ", ".join(k for given in keys.values() for k in given) or "none"
            hours = ("hours (of work on the task's slowest GPU, or on reference_gpu)"
                     if self.task.sky else "hours and reference_gpu")
            raise ValueError("give exactly one of: steps; epochs and steps_per_epoch; "
                             f"{hours} (got {got})")
        gpus = f"one of {', '.join(GPU_SPECS)}, e.g. V100 or V100:8"
        for key, other, what in (
                ("epochs", "steps_per_epoch", "the steps of one epoch"),
                ("steps_per_epoch", "epochs", "how many epochs"),
                ("hours", "reference_gpu", f"the GPU those hours were measured on ({gpus})"),
                ("reference_gpu", "hours", "the work in hours on that GPU")):
            if getattr(self, key) is not None and getattr(self, other) is None:
                raise ValueError(f"{key} needs {other}, {what}")
        if forms["epochs"] and self.epochs * self.steps_per_epoch > MAX_STEPS:  # type: ignore[operator]
            raise ValueError(f"epochs x steps_per_epoch: expected at most {MAX_STEPS:g} steps")
        if self.model is None and self.throughputs is None and not forms["hours"]:
            raise ValueError("give model (a bundled or measured model name) or throughputs "
                             "(GPU: steps/s, e.g. {V100: 5.0}), or the work as hours on a "
                             "reference_gpu")
        return self


@dataclass(frozen=True)
class ResolvedJob(Workload):
    """A job ready to plan: the optimizer's `Workload` (the core Job, the throughput table it
    is priced with, its checkpointing, a gang's nodes, a task's `ordered:` alternatives) and
    what the spec says beside it for the launchers and the views."""

    envs: dict[str, str]
    source: str  # the file it came from
    deadline_at: datetime | None = None
    checkpoint_auto: bool = False  # costsched chose checkpoint_hours (interval "auto")
    notes: tuple[str, ...] = ()  # remarks made reading the task (TaskSpec.notes)
    work: Work | None = None  # how the work was said (given or assumed)
    # Whether the spec names its model: a job that names none is its own model in its
    # table (its name keys its own figures), which is no model a job file may name.
    model_named: bool = True
    # Its restart: the file's checkpoint.restart_minutes (None: not given) over the
    # configuration's restart model it was resolved with (`overheads`).
    restart_minutes: float | None = None
    configured: Overheads = Overheads()
    limits: dict[str, str] = field(default_factory=dict, kw_only=True)  # TaskSpec.limits
    sky: bool = field(default=False, kw_only=True)  # read from a SkyPilot task (TaskSpec.sky)
    filter_keys: dict[str, str] = field(default_factory=dict, kw_only=True)  # TaskSpec's

    def overheads(self, configured: Overheads | None = None) -> Overheads:
        """The job's restart model, the one fact every price of its restarts and moves
        reads: `configured` (default: the configuration's it was resolved with) with its
        file's boot and set-up when given, for its nodes (`Overheads.gang`); where its
        launcher boots no instance (`start_left_out`), with no boot, warm-up or copy
        (`Overheads.booting_none`), as its start has none."""
        own = self._own(configured).gang(self.nodes)
        return own.booting_none() if self.start_left_out else own

    def launched_by(self, left_out: str) -> ResolvedJob:
        """The job as a launcher whose start costs nothing for `left_out` runs it ('': one
        that boots an instance), its restart's hours by its restart model there
        (`overheads`): none of an instance's boot where it boots none."""
        job = replace(self, start_left_out=left_out)
        return replace(job, restart_hours=job.overheads().restart_hours(job.job.checkpoint_gb))

    @property
    def boot_key(self) -> str:
        """The setting its boot and set-up come from: its file's, else the configuration's."""
        return ("checkpoint.restart_minutes in " + self.source
                if self.restart_minutes is not None else "[migration] restart_minutes")

    def restart_said(self, shown: str | None = None, first: bool = False) -> str:
        """Where `restart_hours` comes from, item by item: 'restart 0.085 h: 0.1 min boot
        and set-up (checkpoint.restart_minutes in job.yaml) + 5 min warm-up + ...';
        `shown`: the hours as the line before wrote them (one figure, one way); `first`: of
        its first start, no checkpoint copied ('first start 0.25 h: ...', `start_hours`);
        'restart left out: ...' where its launcher boots no instance (`start_left_out`)."""
        if self.start_left_out and not first:
            return f"restart left out: {self.start_left_out}"
        hours = shown or f"{self.start_hours if first else self.restart_hours:.4g}"
        return (f"{'first start' if first else 'restart'} {hours} h: "
                + self.restart_words(None, 0.0 if first else self.job.checkpoint_gb))

    def restart_words(self, configured: Overheads | None, checkpoint_gb: float) -> str:
        """The parts of a restart that copies `checkpoint_gb`, each with its setting, as
        `overheads(configured)` adds them ('10 min boot and set-up ([migration]
        restart_minutes) + 5 min warm-up ([migration] warmup_minutes)')."""
        return self._own(configured).restart_words(checkpoint_gb, self.nodes, self.boot_key)

    def _own(self, configured: Overheads | None) -> Overheads:
        base = self.configured if configured is None else configured
        if self.restart_minutes is None:
            return base
        return replace(base, restart_minutes=self.restart_minutes)

    @property
    def model_name(self) -> str | None:
        """The model the job's file names (the table's spelling); None when it names none."""
        return self.job.model if self.model_named else None

    @property
    def cpu(self) -> bool:
        """CPU work: planned on CPU instance types (prices_at's include_cpu) only."""
        return isinstance(self.table, CpuWork)

    def sibling(self, spec: JobSpec, source: str) -> ResolvedJob:
        """`spec`'s job, where `spec` differs from this job's spec in name, run and envs only
        (a sweep's other jobs): all that was resolved is shared, a gang's nodes and a task's
        `ordered:` alternatives included. Built directly: `dataclasses.replace` is 5x slower
        on 10,000 jobs."""
        j = self.job
        job = Job(name=spec.name, run=spec.run, model=j.model, steps=j.steps,
                  checkpoint=j.checkpoint, checkpoint_gb=j.checkpoint_gb,
                  constraints=j.constraints, checkpoint_hours=j.checkpoint_hours)
        return ResolvedJob(job, self.table, self.checkpoint_hours, self.restart_hours,
                           dict(spec.envs), source, self.deadline_at, self.checkpoint_auto,
                           self.notes, self.work, self.model_named, self.restart_minutes,
                           self.configured, order=self.order, nodes=self.nodes,
                           limits=self.limits, sky=self.sky, filter_keys=self.filter_keys,
                           start_left_out=self.start_left_out)


def deadline_passed(spec: JobSpec, at: datetime, source: str = "<spec>") -> str:
    """The one-line refusal of a job whose deadline, a time, is not after the planning time
    `at`; '' when it is after it, or is hours from then."""
    return passed_said(source, spec.name, spec.task.sky, spec.constraints.deadline, at)


def refuse_passed_deadlines(specs: Iterable[tuple[str, JobSpec]], at: datetime) -> None:
    """InvalidInput (`deadline_passed`) for the first job whose deadline has passed at `at`:
    said before any throughput or price is read."""
    for source, spec in specs:
        said = deadline_passed(spec, at, source)
        if said:
            raise InvalidInput(said)


def resolve(spec: JobSpec, table: ThroughputTable, at: datetime,
            source: str = "<spec>", overheads: Overheads | None = None) -> ResolvedJob:
    """The spec's job with steps, throughputs and a deadline in hours from `at`;
    `overheads`: the configuration's restart model (default: its defaults), which the
    job's file's checkpoint.restart_minutes overrides (`ResolvedJob.overheads`)."""
    where = f"{source}: job {spec.name!r}"
    said = (ASSUMED_WORK if spec.task.work_assumed
            else UNIT_CHOSEN if spec.task.unit_chosen else "given")
    if spec.reference_gpu == CPU:  # hours of CPU work, the same on any CPU instance
        table = CpuWork(spec.name, f"job spec {source}: {spec.hours} h on a CPU instance, "
                        f"{said}", table.precision)
    rows = [(spec.model or spec.name, *key.split(":"), sps, f"job spec {source}")
            for key, sps in (spec.throughputs or {}).items()]
    relative = spec.model is None and not rows and spec.reference_gpu != CPU
    if relative:  # work given as hours on a reference GPU only: speeds relative to it
        gpu, n = parse_gpu(spec.reference_gpu or "")
        gang = f"{spec.num_nodes} nodes x " if spec.num_nodes > 1 else ""  # the gang's pace
        rows = [(spec.name, gpu, n, 1.0,
                 f"job spec {source}: {spec.hours} h on {gang}{n}x{gpu}, {said}")]
    if rows:
        fields = ("model", "gpu_model", "gpu_count", "steps_per_second", "source")
        table = table.overlay([dict(zip(fields, row, strict=True)) for row in rows],
                              precision=spec.precision)
    elif spec.precision != table.precision:
        table = ThroughputTable(table.frame, precision=spec.precision)
    model = spec.model or spec.name
    try:
        model = table.canonical(model)
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: field {as_written('model', spec.task.sky)}: {exc}"
                           ) from None
    if spec.steps is not None:
        steps = spec.steps
    elif spec.epochs is not None and spec.steps_per_epoch is not None:
        steps = spec.epochs * spec.steps_per_epoch
    elif spec.reference_gpu == CPU:
        steps = (spec.hours or 0) * 3600 * CpuWork.STEPS_PER_SECOND
    else:
        gpu, n = parse_gpu(spec.reference_gpu or "")
        steps = (spec.hours or 0) * 3600 * table.get(model, gpu, n).steps_per_second
    c = spec.constraints
    deadline_at = c.deadline if isinstance(c.deadline, datetime) else None
    if deadline_at is not None:
        deadline_hours: float | None = (deadline_at - utc(at)).total_seconds() / 3600
        if deadline_hours <= 0:
            raise InvalidInput(deadline_passed(spec, at, source))
    else:
        deadline_hours = c.deadline  # type: ignore[assignment]
    constraints = Constraints(
        deadline_hours=deadline_hours, budget_usd=c.budget, clouds=tuple(c.clouds),
        regions=tuple(c.regions), markets=tuple(c.markets), gpu_models=tuple(c.gpu_models),
        gpu_counts=tuple(c.gpu_counts), max_price_per_hour=c.max_price,
        max_migrations=c.max_migrations, zones=tuple(c.zones),
        instance_types=tuple(c.instance_types),
        alternatives=tuple(a.constraints() for a in c.alternatives),
    )
    checkpoint_hours = checkpoint_interval.job_minutes(spec.checkpoint, constraints.clouds,
                                                       constraints.regions) / 60
    job = Job(name=spec.name, run=spec.run, model=model, steps=float(steps),
              checkpoint=spec.checkpoint.location, checkpoint_gb=spec.checkpoint.size_gb,
              constraints=constraints, checkpoint_hours=checkpoint_hours)
    resolved = ResolvedJob(
        job=job, table=table, checkpoint_hours=checkpoint_hours, restart_hours=0.0,
        envs=dict(spec.envs), source=source, deadline_at=deadline_at,
        checkpoint_auto=spec.checkpoint.interval_minutes == checkpoint_interval.AUTO,
        order=tuple(spec.task.order), notes=tuple(spec.task.notes), nodes=spec.num_nodes,
        work=work_of(spec, float(steps), relative, source), model_named=spec.model is not None,
        restart_minutes=spec.checkpoint.restart_minutes, configured=overheads or Overheads(),
        limits=dict(spec.task.limits), sky=spec.task.sky,
        filter_keys=dict(spec.task.filter_keys),
    )
    return replace(resolved,
                   restart_hours=resolved.overheads().restart_hours(spec.checkpoint.size_gb))


def work_of(spec: JobSpec, steps: float, relative: bool, source: str) -> Work:
    """How `spec` says its work (`steps` once resolved)."""
    if spec.hours is None or spec.reference_gpu is None:
        return Work(steps, source=source, nodes=spec.num_nodes)
    if spec.reference_gpu == CPU:
        reference = CPU_REFERENCE
    else:
        gpu, n = parse_gpu(spec.reference_gpu)
        reference = f"{n}x{gpu}"
    return Work(steps, spec.hours, reference, relative, spec.task.work_assumed, source,
                spec.num_nodes, spec.task.steps_given)


def parse(data: Any, source: str = "<spec>") -> JobSpec:
    """A JobSpec from parsed YAML; InvalidInput naming the source, job and field (as the
    file wrote it: a SkyPilot task's `costsched:` keys as such, `as_written`)."""
    if not isinstance(data, dict):
        raise InvalidInput(f"{source}: expected a mapping of job fields (name, run, model, "
                           f"steps, ...), got {yaml_kind(data)}")
    try:
        return JobSpec.model_validate(data)
    except ValidationError as exc:
        name = data.get("name")
        where = (f"{source}: job {name!r}" if isinstance(name, str) and 0 < len(name) <= MAX_NAME
                 else source)
        task = data.get("task")
        sky = isinstance(task, dict) and task.get("sky") is True
        raise InvalidInput(all_errors(where, exc, sky, JobSpec)) from None

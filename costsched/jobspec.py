"""Job spec YAML (SkyPilot-like), validated with pydantic; errors name the file and field.

    name: resnet50-imagenet
    run: python examples/train.py --steps 20000
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

A file may hold several jobs as YAML documents separated by `---`.
"""

from __future__ import annotations

import collections
import itertools
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from costsched.catalog import gpu_model_name
from costsched.model import CLOUDS, MARKETS, Constraints, InvalidInput, Job, utc
from costsched.optimize.decision import DEFAULT_CHECKPOINT_HOURS, Overheads
from costsched.throughput import GPU_SPECS, PRECISIONS, ThroughputTable
from costsched.vocabulary import choose

_DURATION = re.compile(r"^\s*(?:(\d+(?:\.\d+)?)\s*d)?\s*(?:(\d+(?:\.\d+)?)\s*h)?\s*"
                       r"(?:(\d+(?:\.\d+)?)\s*m)?\s*$")


def parse_gpu(value: str) -> tuple[str, int]:
    """'V100' -> ('V100', 1); 'v100:8' -> ('V100', 8)."""
    name, _, count = str(value).partition(":")
    n = count.strip() or "1"
    if not n.isdigit() or int(n) < 1:
        raise ValueError(f"{value!r}: expected GPU or GPU:COUNT such as V100 or V100:8")
    return gpu_model_name(name), int(n)


def parse_hours(value: Any) -> float | datetime:
    """A duration in hours (number, '36h', '2d', '90m', '1d12h') or an absolute ISO time."""
    if isinstance(value, bool):
        raise ValueError("expected hours or a time")
    if isinstance(value, (int, float)):
        hours = float(value)
    elif isinstance(value, datetime):
        return utc(value)
    else:
        text = str(value)
        m = _DURATION.match(text)
        if m and any(m.groups()):
            d, h, mins = (float(g) if g else 0.0 for g in m.groups())
            hours = 24 * d + h + mins / 60
        else:
            try:
                ts = pd.Timestamp(text)
            except (ValueError, TypeError):
                raise ValueError(f"{text!r}: expected hours (48, '36h', '2d', '90m') "
                                 "or an ISO time (2020-03-03T00:00Z)") from None
            return utc(ts.to_pydatetime())
    if not math.isfinite(hours) or hours <= 0:
        raise ValueError(f"{value!r}: expected a positive duration")
    return hours


def _positive(value: float | None, what: str) -> float | None:
    if value is not None and (not math.isfinite(value) or value <= 0):
        raise ValueError(f"{value!r}: expected a positive {what}")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CheckpointSpec(_Strict):
    location: str = ""
    size_gb: float = Field(0.0, ge=0)
    interval_minutes: float = Field(DEFAULT_CHECKPOINT_HOURS * 60, gt=0)
    restart_minutes: float = Field(Overheads().restart_minutes, ge=0)


class ConstraintsSpec(_Strict):
    deadline: float | datetime | None = None
    budget: float | None = None
    clouds: list[str] = []
    regions: list[str] = []
    markets: list[str] = []
    gpu_models: list[str] = []
    gpu_counts: list[int] = []
    max_price: float | None = None
    max_migrations: int | None = Field(None, ge=0)

    @field_validator("deadline", mode="before")
    @classmethod
    def _deadline(cls, v: Any) -> Any:
        return None if v is None else parse_hours(v)

    @field_validator("budget", "max_price", mode="before")
    @classmethod
    def _dollars(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = v.strip().lstrip("$").replace(",", "")
        return v

    @field_validator("budget")
    @classmethod
    def _budget(cls, v: float | None) -> float | None:
        return _positive(v, "amount of USD")

    @field_validator("max_price")
    @classmethod
    def _price(cls, v: float | None) -> float | None:
        return _positive(v, "USD per hour")

    @field_validator("clouds")
    @classmethod
    def _clouds(cls, v: list[str]) -> list[str]:
        return _choices(v, CLOUDS)

    @field_validator("markets")
    @classmethod
    def _markets(cls, v: list[str]) -> list[str]:
        return _choices(v, MARKETS)

    @field_validator("gpu_models")
    @classmethod
    def _gpus(cls, v: list[str]) -> list[str]:
        return [gpu_model_name(g) for g in v]

    @field_validator("gpu_counts")
    @classmethod
    def _counts(cls, v: list[int]) -> list[int]:
        if any(n < 1 for n in v):
            raise ValueError("expected whole numbers >= 1")
        return v


def _choices(values: list[str], accepted: tuple[str, ...]) -> list[str]:
    spelled, error = choose(values, accepted)
    if error is not None:
        raise ValueError(error)
    return spelled


class JobSpec(_Strict):
    name: str = Field(min_length=1)
    run: str = ""
    envs: dict[str, str] = {}
    model: str | None = None
    throughputs: dict[str, float] | None = None
    precision: str = "fp32"
    steps: float | None = None
    epochs: float | None = None
    steps_per_epoch: float | None = None
    hours: float | None = None
    reference_gpu: str | None = None
    checkpoint: CheckpointSpec = CheckpointSpec()
    constraints: ConstraintsSpec = ConstraintsSpec()
    sweep: dict[str, list[str | int | float]] | None = None

    @field_validator("envs", mode="before")
    @classmethod
    def _envs(cls, v: Any) -> Any:
        return {str(k): str(x) for k, x in v.items()} if isinstance(v, dict) else v

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
            _positive(sps, "number of steps per second")
            out[f"{gpu}:{n}"] = float(sps)
        return out

    @field_validator("reference_gpu")
    @classmethod
    def _reference(cls, v: str | None) -> str | None:
        if v is None:
            return v
        gpu, n = parse_gpu(v)
        return f"{gpu}:{n}"

    @field_validator("steps", "epochs", "steps_per_epoch", "hours")
    @classmethod
    def _amounts(cls, v: float | None) -> float | None:
        return _positive(v, "number")

    @model_validator(mode="after")
    def _work(self) -> JobSpec:
        forms = {
            "steps": self.steps is not None,
            "epochs": self.epochs is not None or self.steps_per_epoch is not None,
            "hours": self.hours is not None or self.reference_gpu is not None,
        }
        given = [k for k, v in forms.items() if v]
        if len(given) != 1:
            raise ValueError("give exactly one of: steps; epochs and steps_per_epoch; "
                             f"hours and reference_gpu (got {', '.join(given) or 'none'})")
        if forms["epochs"] and (self.epochs is None or self.steps_per_epoch is None):
            raise ValueError("epochs needs steps_per_epoch (and the other way round)")
        if forms["hours"] and (self.hours is None or self.reference_gpu is None):
            raise ValueError("hours needs reference_gpu, the GPU those hours were measured "
                             f"on (one of {', '.join(GPU_SPECS)}, e.g. V100 or V100:8)")
        if self.model is None and self.throughputs is None and not forms["hours"]:
            raise ValueError("give model (a bundled or measured model name) or throughputs "
                             "(GPU: steps/s), or the work as hours on a reference_gpu")
        return self


@dataclass(frozen=True)
class ResolvedJob:
    """A job ready to plan: the core Job, the throughput table it is priced with, and
    its checkpointing parameters."""

    job: Job
    table: ThroughputTable
    checkpoint_hours: float
    restart_hours: float
    envs: dict[str, str]
    source: str  # the file it came from
    deadline_at: datetime | None = None

    @property
    def name(self) -> str:
        return self.job.name


def resolve(spec: JobSpec, table: ThroughputTable, at: datetime,
            source: str = "<spec>") -> ResolvedJob:
    """The spec's job with steps, throughputs and a deadline in hours from `at`."""
    where = f"{source}: job {spec.name!r}"
    rows = [(spec.model or spec.name, *key.split(":"), sps, f"job spec {source}")
            for key, sps in (spec.throughputs or {}).items()]
    if spec.model is None and not rows:  # work given as hours on a reference GPU only
        gpu, n = parse_gpu(spec.reference_gpu or "")
        rows = [(spec.name, gpu, n, 1.0, f"job spec {source}: {spec.hours} h on {n}x{gpu}")]
    if rows:
        frame = pd.DataFrame(rows, columns=["model", "gpu_model", "gpu_count",
                                            "steps_per_second", "source"])
        table = table.overlay(frame, precision=spec.precision)
    elif spec.precision != table.precision:
        table = ThroughputTable(table.frame, precision=spec.precision)
    model = spec.model or spec.name
    try:
        model = table.canonical(model)
    except InvalidInput as exc:
        raise InvalidInput(f"{where}: field model: {exc}") from None
    if spec.steps is not None:
        steps = spec.steps
    elif spec.epochs is not None and spec.steps_per_epoch is not None:
        steps = spec.epochs * spec.steps_per_epoch
    else:
        gpu, n = parse_gpu(spec.reference_gpu or "")
        steps = (spec.hours or 0) * 3600 * table.get(model, gpu, n).steps_per_second
    c = spec.constraints
    deadline_at = c.deadline if isinstance(c.deadline, datetime) else None
    if deadline_at is not None:
        deadline_hours: float | None = (deadline_at - utc(at)).total_seconds() / 3600
        if deadline_hours <= 0:
            raise InvalidInput(f"{where}: field constraints.deadline: {deadline_at:%Y-%m-%dT%H:%MZ}"
                               f" is not after the planning time {utc(at):%Y-%m-%dT%H:%MZ}")
    else:
        deadline_hours = c.deadline  # type: ignore[assignment]
    constraints = Constraints(
        deadline_hours=deadline_hours, budget_usd=c.budget, clouds=tuple(c.clouds),
        regions=tuple(c.regions), markets=tuple(c.markets), gpu_models=tuple(c.gpu_models),
        gpu_counts=tuple(c.gpu_counts), max_price_per_hour=c.max_price,
        max_migrations=c.max_migrations,
    )
    job = Job(name=spec.name, run=spec.run, model=model, steps=float(steps),
              checkpoint=spec.checkpoint.location, checkpoint_gb=spec.checkpoint.size_gb,
              constraints=constraints, checkpoint_hours=spec.checkpoint.interval_minutes / 60)
    return ResolvedJob(
        job=job, table=table, checkpoint_hours=spec.checkpoint.interval_minutes / 60,
        restart_hours=Overheads(restart_minutes=spec.checkpoint.restart_minutes)
        .restart_hours(spec.checkpoint.size_gb),
        envs=dict(spec.envs), source=source, deadline_at=deadline_at,
    )


def expand_sweep(spec: JobSpec) -> list[JobSpec]:
    """One spec per combination of the sweep's values (set as envs), named name-1, ..."""
    if not spec.sweep:
        return [spec]
    names = list(spec.sweep)
    out = []
    for i, values in enumerate(itertools.product(*spec.sweep.values()), start=1):
        envs = {**spec.envs, **{k: str(v) for k, v in zip(names, values, strict=True)}}
        out.append(spec.model_copy(update={"name": f"{spec.name}-{i}", "envs": envs,
                                           "sweep": None}))
    return out


def parse(data: Any, source: str = "<spec>") -> JobSpec:
    """A JobSpec from parsed YAML; InvalidInput naming the source and field."""
    if not isinstance(data, dict):
        raise InvalidInput(f"{source}: expected a mapping of job fields (name, run, model, "
                           f"steps, ...), got {type(data).__name__}")
    try:
        return JobSpec.model_validate(data)
    except ValidationError as exc:
        raise InvalidInput(_first_error(source, exc)) from None


def _first_error(source: str, exc: ValidationError) -> str:
    errors = exc.errors()
    first = errors[0]
    field = ".".join(str(p) for p in first["loc"]) or "(job)"
    msg = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        msg = f"unknown field: expected one of {_known_fields(first['loc'])}"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{source}: field {field}: {msg}{more}"


def _known_fields(loc: tuple) -> str:
    model: type[BaseModel] = JobSpec
    for part in loc[:-1]:
        annotation = model.model_fields[str(part)].annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            model = annotation
    return ", ".join(model.model_fields)


def load(path: str | Path) -> list[JobSpec]:
    """Every job in a YAML file (one per document), sweeps expanded."""
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise InvalidInput(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path}: cannot read ({exc})") from None
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f": line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InvalidInput(f"{path}{line}: invalid YAML ({problem})") from None
    if not docs:
        raise InvalidInput(f"{path}: no job in the file: expected fields name, run, model, "
                           "steps, ...")
    specs: list[JobSpec] = []
    for i, doc in enumerate(docs, start=1):
        where = str(path) if len(docs) == 1 else f"{path} (document {i})"
        specs.extend(expand_sweep(parse(doc, where)))
    names = [s.name for s in specs]
    dupes = sorted(n for n, count in collections.Counter(names).items() if count > 1)
    if dupes:
        raise InvalidInput(f"{path}: field name: {dupes[0]!r} names more than one job")
    return specs


def refuse_duplicate_names(specs: Iterable[tuple[str, JobSpec]]) -> None:
    """InvalidInput if two jobs of one submission (from one file or several) share a name:
    jobs are found by name afterwards."""
    first: dict[str, str] = {}
    for source, spec in specs:
        if spec.name in first:
            raise InvalidInput(f"{source}: field name: {spec.name!r} is also the name of a job "
                               f"in {first[spec.name]}: give each job a name of its own")
        first[spec.name] = source

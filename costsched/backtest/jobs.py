"""The jobs of a backtest: a model, a home region and a length, from options or a YAML file.

A job's length is given in days on one V100 (the issue's convention): steps = days x 86,400
x the model's 1xV100 throughput. The YAML file (read here until the job-spec module of
the optimizer can read backtest jobs) is a list of jobs, or a mapping with a `jobs` list:

    jobs:
      - name: resnet            # optional; default model@region
        model: ResNet-50 (batch size 128)
        days: 4                 # V100-days; or `steps:` directly
        region: us-east-1       # optional; default: each --region
        checkpoint_gb: 0.3      # optional; default: the run's --checkpoint-gb
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import yaml

from costsched.model import InvalidInput, Job
from costsched.throughput import ThroughputTable

ISSUE_MODELS = (
    "A3C",
    "CycleGAN",
    "LM (batch size 80)",
    "Recommendation (batch size 8192)",
    "ResNet-50 (batch size 128)",
    "Transformer (batch size 256)",
)
JOB_FIELDS = ("name", "model", "days", "steps", "region", "checkpoint_gb")


@dataclass(frozen=True)
class BacktestJob:
    job: Job
    region: str
    v100_days: float
    starts: tuple[datetime, ...] = ()  # its own start times; else the backtest's

    @property
    def name(self) -> str:
        return self.job.name


def steps_for_days(table: ThroughputTable, model: str, days: float) -> float:
    return days * 86_400 * table.get(model, "V100", 1).steps_per_second


def jobs_for_models(models: Sequence[str], days: float, regions: Sequence[str],
                    table: ThroughputTable) -> list[BacktestJob]:
    """One job per (model, region), each `days` long on one V100."""
    if not days > 0:
        raise InvalidInput(f"--days {days}: expected a positive number of V100-days")
    out = []
    for region in regions:
        for raw in models:
            model = table.canonical(raw)
            steps = steps_for_days(table, model, days)
            out.append(BacktestJob(Job(f"{model}@{region}", "", model, steps), region, days))
    return out


def read_jobs(path: Path, regions: Sequence[str], table: ThroughputTable) -> list[BacktestJob]:
    """Jobs from a YAML file (format in the module docstring); errors name file, job, field."""
    try:
        data = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise InvalidInput(f"{path}: no such file") from None
    except yaml.YAMLError as exc:
        raise InvalidInput(f"{path}: not valid YAML ({exc})") from None
    items = data.get("jobs") if isinstance(data, dict) else data
    if not isinstance(items, list) or not items:
        raise InvalidInput(f"{path}: expected a list of jobs (or a mapping with a 'jobs' list)")
    out = []
    for i, item in enumerate(items, start=1):
        at = f"{path}: job {i}"
        if not isinstance(item, dict):
            raise InvalidInput(f"{at}: expected a mapping with fields {', '.join(JOB_FIELDS)}")
        unknown = sorted(set(item) - set(JOB_FIELDS))
        if unknown:
            raise InvalidInput(f"{at}: unknown field(s) {', '.join(unknown)}: expected "
                               f"{', '.join(JOB_FIELDS)}")
        if "model" not in item:
            raise InvalidInput(f"{at}: field model is missing")
        try:
            model = table.canonical(str(item["model"]))
        except InvalidInput as exc:
            raise InvalidInput(f"{at}: field model: {exc}") from None
        if ("days" in item) == ("steps" in item):
            raise InvalidInput(f"{at}: give exactly one of days (V100-days) or steps")
        size_field = "days" if "days" in item else "steps"
        size = _positive(item[size_field], f"{at}: field {size_field}")
        v100 = table.get(model, "V100", 1).steps_per_second
        steps = size * 86_400 * v100 if size_field == "days" else size
        checkpoint = _positive(item["checkpoint_gb"], f"{at}: field checkpoint_gb") if (
            "checkpoint_gb" in item) else 0.0
        homes = [str(item["region"])] if "region" in item else list(regions)
        if not homes:
            raise InvalidInput(f"{at}: field region is missing and no --region was given")
        for region in homes:
            name = str(item.get("name") or model)
            name = name if len(homes) == 1 else f"{name}@{region}"
            job = Job(name, "", model, steps, checkpoint_gb=checkpoint)
            out.append(BacktestJob(job, region, steps / 86_400 / v100))
    return out


def _positive(value: object, where: str) -> float:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        number = float("nan")
    if not number > 0 or number == float("inf"):
        raise InvalidInput(f"{where} {value!r}: expected a positive number")
    return number

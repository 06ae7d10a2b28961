"""The jobs of a backtest: a model, a home region and a length, from options or job specs.

From model names, a job's length is given in days on one V100 (the published analysis's
convention): steps = days x 86,400 x the model's 1xV100 throughput. From job specs: the
files of `costsched plan` (`examples/*.yaml`); "4 days on a V100" is `hours: 96` with
`reference_gpu: V100`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

from costsched import jobspec, taskfile
from costsched.model import InvalidInput, Job
from costsched.throughput import ThroughputTable

# The six models of the published trace analysis (the default jobs of a backtest).
PUBLISHED_MODELS = (
    "A3C",
    "CycleGAN",
    "LM (batch size 80)",
    "Recommendation (batch size 8192)",
    "ResNet-50 (batch size 128)",
    "Transformer (batch size 256)",
)


@dataclass(frozen=True)
class BacktestJob:
    job: Job
    region: str
    v100_days: float
    starts: tuple[datetime, ...] = ()  # its own start times; else the backtest's
    table: ThroughputTable | None = None  # its own throughputs; else the backtest's
    measured: tuple[str, ...] = ()  # the GPUs its spec measured ('T4', 'V100:8')

    @property
    def name(self) -> str:
        return self.job.name

    @property
    def asked(self) -> Job:
        """The job as the baselines rent for it: where its constraints name no GPU model
        (or count), the ones it measured its throughput on; else theirs (default 1xV100)."""
        c = self.job.constraints
        gpus = [key.split(":") for key in self.measured]
        models = c.gpu_models or tuple(dict.fromkeys(g[0] for g in gpus))
        counts = c.gpu_counts or (tuple(dict.fromkeys(int(g[1]) if len(g) > 1 else 1
                                                      for g in gpus))
                                  if not c.gpu_models else ())
        return replace(self.job, constraints=replace(c, gpu_models=models, gpu_counts=counts))


def steps_for_days(table: ThroughputTable, model: str, days: float) -> float:
    return days * 86_400 * table.get(model, "V100", 1).steps_per_second


def jobs_for_models(models: Sequence[str], days: float, regions: Sequence[str],
                    table: ThroughputTable) -> list[BacktestJob]:
    """One job per (model, region), each `days` long on one V100."""
    if not days > 0:
        raise InvalidInput(f"job length {days} days: expected a positive number of V100-days")
    out = []
    for region in regions:
        for raw in models:
            model = table.canonical(raw)
            steps = steps_for_days(table, model, days)
            out.append(BacktestJob(Job(f"{model}@{region}", "", model, steps), region, days))
    return out


def read_jobs(paths: Sequence[Path], regions: Sequence[str], table: ThroughputTable,
              at: datetime) -> list[BacktestJob]:
    """Jobs from job-spec YAML files (the format `costsched plan` reads; sweeps expand).

    A job's home regions are its `constraints.regions`, else `regions`; its
    other constraints (clouds, markets, GPU models and counts) limit every policy's
    choices. Measured `throughputs` in a spec price that job only.
    """
    out = []
    loaded = [(path, taskfile.load(path)) for path in paths]
    taskfile.refuse_duplicate_names((str(path), spec) for path, specs in loaded for spec in specs)
    for path, specs in loaded:
        # A sweep's jobs differ in their names and environments only: resolve each distinct
        # rest once (and share its throughput table, so that identical jobs replay once).
        resolved: dict[str, tuple[jobspec.ResolvedJob, float]] = {}
        for spec in specs:
            key = spec.model_dump_json(exclude={"name", "envs"})
            if key not in resolved:
                first = jobspec.resolve(spec, table, at, source=str(path))
                v100 = first.table.get(first.job.model, "V100", 1).steps_per_second
                resolved[key] = (first, v100)
            first, v100 = resolved[key]
            job = first.job
            homes = list(job.constraints.regions) or list(regions)
            if not homes:
                raise InvalidInput(f"{path}: job {spec.name!r}: field constraints.regions is "
                                   "empty and no home region was given: name a home region")
            for region in homes:
                name = spec.name if len(homes) == 1 else f"{spec.name}@{region}"
                out.append(BacktestJob(replace(job, name=name), region, job.steps / 86_400 / v100,
                                       table=first.table,
                                       measured=tuple(spec.throughputs or ())))
    return out

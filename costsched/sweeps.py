"""A job spec's sweep: one job per combination of its values, each value set as an env."""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BeforeValidator

from costsched.model import InvalidInput

if TYPE_CHECKING:  # (the job spec reads its sweep's values with `sweep_values`)
    from costsched.jobspec import JobSpec

DEFAULT_MAX_SWEEP_JOBS = 10_000


def sweep_size(spec: JobSpec) -> int:
    """How many jobs the spec makes: the product of its sweep's axis lengths."""
    return math.prod(len(values) for values in spec.sweep.values()) if spec.sweep else 1


def expand_sweep(spec: JobSpec, max_jobs: int = DEFAULT_MAX_SWEEP_JOBS,
                 source: str = "<spec>") -> list[JobSpec]:
    """One spec per combination of the sweep's values (set as envs), named name-1, ...;
    InvalidInput, before any is made, when there would be more than `max_jobs`."""
    if not spec.sweep:
        return [spec]
    size = sweep_size(spec)
    if size > max_jobs:
        raise InvalidInput(too_many(source, spec.name, size, max_jobs))
    names = list(spec.sweep)
    out = []
    for i, values in enumerate(itertools.product(*spec.sweep.values()), start=1):
        envs = {**spec.envs, **{k: str(v) for k, v in zip(names, values, strict=True)}}
        out.append(spec.model_copy(update={"name": f"{spec.name}-{i}", "envs": envs,
                                           "sweep": None}))
    return out


def sweep_values(values: Any) -> list[str | int | float]:
    """One name's values in a sweep, as the job file writes them: a non-empty list of text
    and numbers (true and false as YAML writes them, for the env's value); a one-line
    refusal, naming the item, of any other."""
    if not isinstance(values, list):
        raise ValueError(f"{_yaml(values)}: expected a list of values, such as [0.1, 0.01]")
    if not values:
        raise ValueError("an empty list: expected at least one value")
    for i, item in enumerate(values, start=1):
        if item is None or isinstance(item, (list, dict)):
            raise ValueError(f"item {i}, {_yaml(item)}: expected text or a number")
    return [_yaml(v) if isinstance(v, bool) else v for v in values]


# A job spec's sweep values of one name, read by `sweep_values`.
SweepValues = Annotated[list[str | int | float], BeforeValidator(sweep_values)]


def _yaml(value: Any) -> str:
    """A parsed value as YAML writes it (true, null), for messages and envs."""
    import yaml

    return yaml.safe_dump(value, default_flow_style=True, width=1_000).removesuffix(
        "\n...\n").strip()


def too_many(source: str, name: str, size: int, most: int) -> str:
    """The one-line refusal of a file whose sweeps would make more than `most` jobs."""
    return (f"{source}: job {name!r}: field sweep: {size:,} combinations: expected at most "
            f"{most:,} jobs (launch.max_sweep_jobs in the config)")

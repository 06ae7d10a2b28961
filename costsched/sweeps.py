"""A job spec's sweep: one job per combination of its values, each value set as an env."""

from __future__ import annotations

import itertools
import math
from typing import TYPE_CHECKING

from costsched.model import InvalidInput

if TYPE_CHECKING:
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


def too_many(source: str, name: str, size: int, most: int) -> str:
    """The one-line refusal of a file whose sweeps would make more than `most` jobs."""
    return (f"{source}: job {name!r}: field sweep: {size:,} combinations: expected at most "
            f"{most:,} jobs (launch.max_sweep_jobs in the config)")

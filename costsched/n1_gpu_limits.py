"""GCP's limits on the N1 machine types its GPUs attach to: per GPU model and count, the
most vCPUs and memory an N1 machine may have (costsched/data/gcp_n1_gpu_limits.csv, with
its source). The catalog builder pairs N1 machine types with GPUs by them; a task naming a
pair over them is told which limit it passes."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

LIMITS_FILE = "gcp_n1_gpu_limits.csv"


@dataclass(frozen=True)
class N1Limit:
    gpu_model: str
    gpu_count: int
    max_vcpus: int
    max_memory_gb: float

    def takes(self, vcpus: float, memory_gb: float) -> bool:
        """Whether an N1 machine of that many vCPUs and GB may have these GPUs attached."""
        return vcpus <= self.max_vcpus and memory_gb <= self.max_memory_gb


def read_limits(path: Path | None = None) -> dict[tuple[str, int], N1Limit]:
    """(GPU model, count) -> its limit, from `path` (the bundled file by default)."""
    if path is None:
        with resources.files("costsched.data").joinpath(LIMITS_FILE).open("r") as fh:
            rows = list(csv.DictReader(fh))
    else:
        with path.open("r", newline="") as fh:
            rows = list(csv.DictReader(fh))
    return {(r["gpu_model"], int(r["gpu_count"])): N1Limit(
        r["gpu_model"], int(r["gpu_count"]), int(r["max_vcpus"]), float(r["max_memory_gb"]))
        for r in rows}


@cache
def limits() -> dict[tuple[str, int], N1Limit]:
    return read_limits()


def is_n1(machine_type: str) -> bool:
    return machine_type.startswith("n1-")


def over_limit(machine_type: str, vcpus: float, memory_gb: float,
               gpus: list[tuple[str, int]]) -> str:
    """Words saying which of `gpus` GCP does not attach to this N1 machine type and why;
    '' when it is not an N1 type or every one fits."""
    if not is_n1(machine_type):
        return ""
    said = []
    for gpu, count in gpus:
        limit = limits().get((gpu, count))
        if limit is not None and not limit.takes(vcpus, memory_gb):
            said.append(f"GCP attaches {gpu}:{count} to N1 machine types of at most "
                        f"{limit.max_vcpus} vCPUs and {limit.max_memory_gb:g} GB, and "
                        f"{machine_type} has {vcpus:g} vCPUs and {memory_gb:g} GB")
    return "; ".join(said)

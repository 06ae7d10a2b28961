"""The host a job gets when it names only its GPUs: per GPU model and count, the provider's
default host. The catalog lists every N1 machine size GCP attaches each T4, V100, P100 or P4
count to (n1-highcpu-4 with a T4); a job that names only `T4:1` is offered its default host,
n1-standard-4 (costsched/data/gcp_n1_default_hosts.csv), as GCP and SkyPilot give it. The
other sizes are offered only to a job that names its host (an instance type, or a SkyPilot
task's cpus or memory): a cheaper 1- or 2-vCPU host would otherwise rank first and starve
the GPU's data loading.

    other_host("n1-highcpu-4+1xnvidia-tesla-t4")   # True: T4:1's default is n1-standard-4
    other_host("n1-standard-4+1xnvidia-tesla-t4")   # False
    other_host("g4dn.xlarge")                       # False: not a machine + GPUs pair
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from functools import cache
from importlib import resources

from costsched.clouds.gcp import GCP
from costsched.lazy import pandas as pd

DEFAULTS_FILE = "gcp_n1_default_hosts.csv"
# Why `rank` leaves such an offering out (a value of a ranking's `excluded`).
OTHER_HOST = "other host size than its GPUs' default"
_PAIR = re.compile(r"(n1-[a-z]+-\d+)\+(\d+)x(.+)")  # n1-highcpu-4+1xnvidia-tesla-t4


@cache
def defaults() -> dict[tuple[str, int], str]:
    """(GPU model, count) -> the N1 machine type GCP's users get it on by default."""
    with resources.files("costsched.data").joinpath(DEFAULTS_FILE).open("r",
                                                                       newline="") as fh:
        return {(r["gpu_model"], int(r["gpu_count"])): r["machine_type"]
                for r in csv.DictReader(fh)}


@cache
def _models() -> dict[str, str]:
    """GCP's accelerator names -> the catalog's GPU models."""
    return {api: model for model, api in GCP.accelerators.items()}


@cache
def other_host(instance_type: str) -> bool:
    """Whether a catalog type is GPUs on another N1 size than their default host."""
    pair = _PAIR.fullmatch(instance_type)
    if pair is None:
        return False
    machine, count, accelerator = pair.groups()
    default = defaults().get((_models().get(accelerator, ""), int(count)))
    return default is not None and machine != default


def other_hosts(instance_types: pd.Series) -> pd.Series:
    """`other_host` of each row (a frame's instance_type column)."""
    names = instance_types.astype(str)
    return names.isin([n for n in names.unique() if other_host(n)])


def names_a_host(instance_types: Iterable[str]) -> bool:
    """Whether a job's instance types name a host of their own: some type is on another
    host than its GPUs' default (SkyPilot's cpus or memory list those that fit). A job that
    names none is offered the default hosts only."""
    return any(other_host(str(t)) for t in instance_types)

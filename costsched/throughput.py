"""Throughput: training steps per second of a model on a GPU model at a GPU count.

The bundled table (`costsched/data/throughputs.csv`) holds published measurements
(Gavel, OSDI 2020: 26 model configurations on K80, P100 and V100; multi-GPU entries from
its multi-GPU table). Lookups say whether a value was measured or estimated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources

import pandas as pd

from costsched.model import InvalidInput

COLUMNS = ["model", "gpu_model", "gpu_count", "steps_per_second", "source"]


@dataclass(frozen=True, slots=True)
class Throughput:
    steps_per_second: float
    estimated: bool
    basis: str  # where the figure comes from, or the rule that estimated it


def model_key(name: str) -> str:
    """A spelling-insensitive key: 'ResNet-50 (batch size 64)' == 'resnet50 bs64'."""
    key = re.sub(r"batch\s*size", "bs", name.lower())
    return re.sub(r"[^a-z0-9]", "", key)


@cache
def bundled() -> pd.DataFrame:
    with resources.files("costsched.data").joinpath("throughputs.csv").open("r") as fh:
        return pd.read_csv(fh)


class ThroughputTable:
    """A throughput table: measured rows, looked up by model, GPU model and GPU count."""

    def __init__(self, frame: pd.DataFrame | None = None) -> None:
        self.frame = (bundled() if frame is None else frame)[COLUMNS].reset_index(drop=True)
        self._index = {
            (model_key(r.model), r.gpu_model, int(r.gpu_count)): (float(r.steps_per_second),
                                                                   r.source)
            for r in self.frame.itertuples()
        }
        self._names = {model_key(m): m for m in self.frame["model"]}

    def models(self) -> list[str]:
        return sorted(set(self.frame["model"]))

    def canonical(self, model: str) -> str:
        """The table's name of a model; InvalidInput listing the known ones if absent."""
        try:
            return self._names[model_key(model)]
        except KeyError:
            raise InvalidInput(
                f"unknown model {model!r}: expected one of {', '.join(self.models())} "
                "(or give measured throughputs)"
            ) from None

    def get(self, model: str, gpu_model: str, gpu_count: int = 1) -> Throughput:
        """The measured throughput; InvalidInput when the table has no such measurement."""
        found = self._index.get((model_key(model), gpu_model, int(gpu_count)))
        if found is None:
            raise InvalidInput(
                f"no measured throughput for {model!r} on {gpu_count}x{gpu_model}"
            )
        return Throughput(found[0], estimated=False, basis=found[1])

"""The throughput table of a CPU job: work that needs no GPU.

A CPU job (a SkyPilot task without accelerators: data preparation, evaluation) states its
length in hours; costsched knows no speed difference between CPU instance types, so an
hour of work is an hour on any of them (one step per second, `hours x 3600` steps) and
offerings rank by price. GPU instance types have no throughput for it, so the ranking,
recovery and moves never place it on a GPU, through the same table interface a GPU job's
throughputs use.
"""

from __future__ import annotations

from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.model import InvalidInput
from costsched.throughput import Throughput, ThroughputTable


class CpuWork(ThroughputTable):
    """One step per second on every CPU instance type (GPU count 0); none on GPUs."""

    STEPS_PER_SECOND = 1.0

    def __init__(self, model: str, basis: str, precision: str = "fp32") -> None:
        # Not the bundled GPU table: nothing of it applies to a CPU job.
        self.precision = precision
        self._model = model
        self._basis = basis

    @property
    def frame(self) -> pd.DataFrame:
        return pd.DataFrame([{"model": self._model, "gpu_model": "", "gpu_count": 0,
                              "steps_per_second": self.STEPS_PER_SECOND,
                              "source": self._basis}])

    def models(self) -> list[str]:
        return [self._model]

    def canonical(self, model: str) -> str:
        return model

    def overlay(self, rows: object, precision: str | None = None) -> ThroughputTable:
        raise InvalidInput(f"job {self._model}: a CPU job has no GPU throughputs")

    def measured(self, model: str, gpu_model: str, gpu_count: int = 1) -> Throughput | None:
        return self._throughput() if int(gpu_count) == 0 else None

    def get(self, model: str, gpu_model: str, gpu_count: int = 1, *,
            estimate: bool = True) -> Throughput:
        if int(gpu_count) != 0:
            raise InvalidInput(f"job {self._model} is CPU work: it does not run on "
                               f"{gpu_count}x{gpu_model}")
        return self._throughput()

    def lookup(self, model: str, gpu_models: np.ndarray | pd.Series,
               gpu_counts: np.ndarray | pd.Series) -> tuple[np.ndarray, np.ndarray]:
        counts = np.asarray(gpu_counts, dtype=int)
        sps = np.where(counts == 0, self.STEPS_PER_SECOND, np.nan)
        return sps, np.zeros(len(counts), dtype=bool)

    def sources(self, model: str, gpu_models: np.ndarray | pd.Series,
                gpu_counts: np.ndarray | pd.Series) -> np.ndarray:
        counts = np.asarray(gpu_counts, dtype=int)
        return np.where(counts == 0, self._basis, "")

    def _throughput(self) -> Throughput:
        return Throughput(self.STEPS_PER_SECOND, False, self._basis)

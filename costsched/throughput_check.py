"""How good the GPU model rule is: leave-one-out over the bundled published rows.

For every published 1-GPU row (model, GPU) whose model was also published on another GPU
model, the row is removed from the table and estimated by the rule from what is left; the
ratio estimate / published says how far the rule is off, and which way (above 1: it
promises more speed than was measured, a plan would be optimistic). docs/throughput.md
reports the summary; `costsched.throughput` keeps the rule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from costsched.throughput import COLUMNS, ThroughputTable, bundled, model_key


@dataclass(frozen=True)
class LeaveOneOut:
    rows: pd.DataFrame  # model, gpu_model, published, estimated, ratio, basis
    precision: str

    @property
    def error_factor(self) -> float:
        """Geometric mean of max(ratio, 1/ratio): x1.3 means off by 30% on average."""
        return math.exp(self.rows["ratio"].map(lambda r: abs(math.log(r))).mean())

    @property
    def optimistic_share(self) -> float:
        """Share of rows the rule estimates faster than published."""
        return float((self.rows["ratio"] > 1).mean())

    def by_pair(self) -> pd.DataFrame:
        """Per (estimated GPU, reference GPU): rows, median ratio, error factor."""
        frame = self.rows.assign(ref=self.rows["basis"].str.extract(r"from (\S+) \(")[0],
                                 err=self.rows["ratio"].map(lambda r: abs(math.log(r))))
        grouped = frame.groupby(["gpu_model", "ref"])
        return pd.DataFrame({"rows": grouped.size(), "median_ratio": grouped["ratio"].median(),
                             "error_factor": grouped["err"].mean().map(math.exp)})


def leave_one_out(frame: pd.DataFrame | None = None, precision: str = "fp32") -> LeaveOneOut:
    """The rule checked on `frame` (default: the bundled published rows)."""
    rows = (bundled() if frame is None else frame)[COLUMNS]
    keys = rows["model"].map(model_key)
    singles = rows[rows["gpu_count"] == 1]
    out = []
    for r in singles.itertuples():
        key = model_key(r.model)
        others = singles[(singles["model"].map(model_key) == key)
                         & (singles["gpu_model"] != r.gpu_model)]
        if others.empty:
            continue
        kept = rows[~((keys == key) & (rows["gpu_model"] == r.gpu_model))]
        estimate = ThroughputTable(kept, precision=precision).get(r.model, r.gpu_model, 1)
        out.append((r.model, r.gpu_model, float(r.steps_per_second),
                    estimate.steps_per_second, estimate.steps_per_second / r.steps_per_second,
                    estimate.basis))
    table = pd.DataFrame(out, columns=["model", "gpu_model", "published", "estimated",
                                       "ratio", "basis"])
    return LeaveOneOut(table, precision)

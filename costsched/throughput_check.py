"""How good the GPU model rule is: leave-one-out over the bundled published rows.

For every published 1-GPU row (model, GPU) whose model was also published on another GPU
model, the row is removed from the table and estimated by the rule from what is left; the
ratio estimate / published says how far the rule is off, and which way (above 1: it
promises more speed than was measured, a plan would be optimistic). docs/throughput.md
reports the summary; `costsched.throughput` keeps the rule.

The rule's factor (RULE_SCALE) is fitted here, `fit_scale`: the RULE_QUANTILE-th quantile
of published / unfitted estimate, at most 1, so that most estimates fall below what was
published. Its own error is checked the same way, nested: each held-out row is estimated
with the factor fitted on the other rows only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from costsched.throughput import (
    COLUMNS,
    RULE_QUANTILE,
    ThroughputTable,
    bundled,
    model_key,
)


def fit_scale(published_over_estimate: pd.Series, quantile: float = RULE_QUANTILE) -> float:
    """The factor that puts the rule's estimates below the published figures in about
    1 - `quantile` of the rows: that quantile of published / estimate, at most 1 (the
    factor only ever slows an estimate down)."""
    return min(1.0, float(published_over_estimate.quantile(quantile)))


@dataclass(frozen=True)
class LeaveOneOut:
    # model, gpu_model, published, unfitted (the rule without its factor), unfitted_ratio,
    # scale (fitted without the row), estimated (unfitted x scale), ratio, basis
    rows: pd.DataFrame
    precision: str

    @property
    def error_factor(self) -> float:
        """Geometric mean of max(ratio, 1/ratio): x1.3 means off by 30% on average."""
        return _error_factor(self.rows["ratio"])

    @property
    def optimistic_share(self) -> float:
        """Share of rows the rule estimates faster than published."""
        return float((self.rows["ratio"] > 1).mean())

    @property
    def unfitted_error_factor(self) -> float:
        """`error_factor` of the rule without its fitted factor."""
        return _error_factor(self.rows["unfitted_ratio"])

    @property
    def unfitted_optimistic_share(self) -> float:
        return float((self.rows["unfitted_ratio"] > 1).mean())

    def fitted_scale(self) -> float:
        """The factor fitted on every row (what RULE_SCALE holds for the bundled rows)."""
        return fit_scale(1 / self.rows["unfitted_ratio"])

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
        estimate = ThroughputTable(kept, precision=precision, rule_scale=1.0).get(
            r.model, r.gpu_model, 1)
        out.append((r.model, r.gpu_model, float(r.steps_per_second),
                    estimate.steps_per_second, estimate.steps_per_second / r.steps_per_second,
                    estimate.basis))
    table = pd.DataFrame(out, columns=["model", "gpu_model", "published", "unfitted",
                                       "unfitted_ratio", "basis"])
    inverse = 1 / table["unfitted_ratio"]
    table["scale"] = [fit_scale(inverse.drop(i)) if len(table) > 1 else 1.0
                      for i in table.index]
    table["estimated"] = table["unfitted"] * table["scale"]
    table["ratio"] = table["estimated"] / table["published"]
    return LeaveOneOut(table, precision)


def _error_factor(ratios: pd.Series) -> float:
    return math.exp(ratios.map(lambda r: abs(math.log(r))).mean())

"""Summaries of backtest results: cost relative to `static`, as a frame, markdown or a chart."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from costsched.model import InvalidInput

BASELINE = "static"


def relative_costs(results: pd.DataFrame, baseline: str = BASELINE) -> pd.DataFrame:
    """Per (model, region) and policy: how many times cheaper than `baseline` it was.

    The factor is the baseline's total cost over the policy's, summed over the start
    times where both ran (what running one such job from each start would have cost).
    Columns: model, region, policy, reduction, saving_pct, runs, migrations (mean).
    """
    if baseline not in set(results["policy"]):
        raise InvalidInput(f"relative costs need the {baseline!r} policy in the run")
    keys = ["job", "start"]
    base = results[results["policy"] == baseline].set_index(keys)["cost_usd"]
    frame = results.join(base.rename("base_usd"), on=keys)
    frame = frame[frame["cost_usd"].notna() & frame["base_usd"].notna()]
    grouped = frame.groupby(["model", "region", "policy"], sort=False)
    out = grouped.agg(cost_usd=("cost_usd", "sum"), base_usd=("base_usd", "sum"),
                      runs=("cost_usd", "size"), migrations=("migrations", "mean"))
    out["reduction"] = out["base_usd"] / out["cost_usd"]
    out["saving_pct"] = 100 * (1 - out["cost_usd"] / out["base_usd"])
    return out.reset_index()[["model", "region", "policy", "reduction", "saving_pct", "runs",
                              "migrations"]]


def reduction_table(summary: pd.DataFrame) -> pd.DataFrame:
    """Rows (model, region), columns policies in run order, cells the reduction factor."""
    order = list(dict.fromkeys(summary["policy"]))
    table = summary.pivot_table(index=["model", "region"], columns="policy",
                                values="reduction", sort=False)
    return table[order]


def to_markdown(summary: pd.DataFrame) -> str:
    table = reduction_table(summary)
    header = ["model", "region", *table.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for (model, region), row in table.iterrows():
        cells = [f"{v:.2f}x" if np.isfinite(v) else "-" for v in row]
        lines.append("| " + " | ".join([model, region, *cells]) + " |")
    return "\n".join(lines)


def plot(summary: pd.DataFrame, path: Path) -> Path:
    """A bar chart of the reduction factor per model and policy, one panel per region."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = reduction_table(summary)
    regions = list(dict.fromkeys(table.index.get_level_values("region")))
    fig, axes = plt.subplots(len(regions), 1, figsize=(11, 3.6 * len(regions)), squeeze=False)
    for ax, region in zip(axes[:, 0], regions, strict=True):
        part = table.xs(region, level="region")
        x = np.arange(len(part.index))
        width = 0.8 / len(part.columns)
        for i, policy in enumerate(part.columns):
            ax.bar(x + i * width - 0.4 + width / 2, part[policy], width, label=policy)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_xticks(x, [m.replace(" (batch size ", "\n(bs ") for m in part.index], fontsize=8)
        ax.set_ylabel("cost reduction vs static (x)")
        ax.set_title(f"Home region {region}")
    handles, names = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, names, loc="upper center", ncols=len(names), fontsize=8)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.25 / (3.6 * len(regions))))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path

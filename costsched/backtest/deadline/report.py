"""Summaries of deadline backtests: cost relative to on-demand, misses, and the share of
the greedy-to-optimum gap each policy closes, as a frame, markdown or a chart."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

BASELINE = "on-demand"
GREEDY = "greedy"
OPTIMUM = "optimum"
HOME_OPTIMUM = "optimum (home zone)"  # the optimum without leaving the run's home zone
SETTING = ["deadline_hours", "restart_minutes"]
SUMMARY_COLUMNS = [*SETTING, "policy", "runs", "misses", "cost_usd", "vs_on_demand",
                   "vs_optimum", "gap_closed", "gap_closed_home"]


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    """Per setting and policy: runs, misses, total cost, and totals relative to on-demand
    and to the optimum over the same runs (what running one job from each start in each
    home zone costs); gap_closed: (greedy - policy) / (greedy - optimum); gap_closed_home:
    the same against the optimum over each run's home zone alone (NaN without it)."""
    grouped = runs.groupby([*SETTING, "policy"], sort=False)
    out = grouped.agg(runs=("cost_usd", "size"), misses=("met", lambda m: int((~m).sum())),
                      cost_usd=("cost_usd", "sum")).reset_index()
    totals = out.set_index([*SETTING, "policy"])["cost_usd"]

    def total(policy: str) -> pd.Series:
        keys = pd.MultiIndex.from_frame(out[SETTING].assign(policy=policy))
        return pd.Series(totals.reindex(keys).to_numpy(), index=out.index)

    base, best, greedy = total(BASELINE), total(OPTIMUM), total(GREEDY)
    out["vs_on_demand"] = out["cost_usd"] / base
    out["vs_optimum"] = out["cost_usd"] / best
    with np.errstate(divide="ignore", invalid="ignore"):
        out["gap_closed"] = (greedy - out["cost_usd"]) / (greedy - best)
        out["gap_closed_home"] = (greedy - out["cost_usd"]) / (greedy - total(HOME_OPTIMUM))
    return out[SUMMARY_COLUMNS]


def per_window(runs: pd.DataFrame) -> pd.DataFrame:
    """Per setting, start and policy: the mean cost of its runs (one per home zone), the
    ratio to the optimum from the same start, the runs that missed their deadline, and
    the mean moves across regions and egress USD of a run."""
    grouped = runs.groupby([*SETTING, "start", "policy"], sort=False)
    out = grouped.agg(cost_usd=("cost_usd", "mean"),
                      misses=("met", lambda m: int((~m).sum())),
                      region_moves=("region_moves", "mean"),
                      egress_usd=("egress_usd", "mean")).reset_index()
    best = out[out["policy"] == OPTIMUM].set_index([*SETTING, "start"])["cost_usd"]
    keys = pd.MultiIndex.from_frame(out[[*SETTING, "start"]])
    out["vs_optimum"] = out["cost_usd"].to_numpy() / best.reindex(keys).to_numpy()
    return out


def to_markdown(summary: pd.DataFrame) -> str:
    """One row per setting and policy: cost vs on-demand and vs the optimum, gap closed,
    misses."""
    lines = ["| deadline | restart | policy | cost vs on-demand | vs optimum | "
             "greedy-to-optimum gap closed | misses |", "|---|---|---|---|---|---|---|"]
    for row in summary.itertuples(index=False):
        gap = f"{row.gap_closed:.0%}" if np.isfinite(row.gap_closed) else "-"
        lines.append(f"| {row.deadline_hours:g} h | {row.restart_minutes:g} min | "
                     f"{row.policy} | {row.vs_on_demand:.3f} | {row.vs_optimum:.3f} | "
                     f"{gap} | {row.misses} |")
    return "\n".join(lines)


def plot(summary: pd.DataFrame, path: Path) -> Path:
    """Bars of cost relative to on-demand per policy, one group per setting."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    settings = summary[SETTING].drop_duplicates().to_numpy()
    policies = list(dict.fromkeys(summary["policy"]))
    fig, ax = plt.subplots(figsize=(10, 4))
    width = 0.8 / len(policies)
    x = np.arange(len(settings))
    for i, policy in enumerate(policies):
        part = summary[summary["policy"] == policy].set_index(SETTING)["vs_on_demand"]
        values = [part.get(tuple(s), np.nan) for s in settings]
        ax.bar(x + i * width - 0.4 + width / 2, values, width, label=policy)
    ax.set_xticks(x, [f"deadline {d:g} h\nrestart {r:g} min" for d, r in settings])
    ax.set_ylabel("cost relative to on-demand")
    ax.axhline(1.0, color="black", linewidth=0.8)
    ax.legend(fontsize=8, ncols=len(policies))
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path

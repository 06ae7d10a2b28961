"""Summaries of backtest results: cost relative to the baselines (`static`, `cheapest-hourly`),
as a frame, markdown or a chart; and how the estimates made at each start held up against
the replay (`calibration`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from costsched.model import InvalidInput
from costsched.report.estimates import summary as ratio_summary

BASELINE = "static"
# What every summary compares each policy with: the plain choice, and a price-only launcher.
BASELINES = (BASELINE, "cheapest-hourly")


def suffix(baseline: str) -> str:
    """The column suffix of figures against `baseline` ('' for static, as ever)."""
    return "" if baseline == BASELINE else "_vs_" + baseline.replace("-", "_")


def _baseline_usd(results: pd.DataFrame, baseline: str) -> pd.Series:
    """Per run, the cost of the same job from the same start under `baseline`."""
    if baseline not in set(results["policy"]):
        raise InvalidInput(f"relative costs need the {baseline!r} policy in the run")
    keys = ["job", "start"]
    base = results[results["policy"] == baseline].set_index(keys)["cost_usd"]
    return results.join(base.rename("base_usd"), on=keys)["base_usd"]


def relative_costs(results: pd.DataFrame, baseline: str = BASELINE) -> pd.DataFrame:
    """Per (model, region) and policy: how many times cheaper than `baseline` it was.

    The factor is the baseline's total cost over the policy's, summed over the start
    times where both ran (what running one such job from each start would have cost),
    each run counted `jobs` times (the identical jobs it stands for).
    Columns: model, region, policy, reduction, saving_pct, runs, migrations (mean).
    """
    weight = results["jobs"] if "jobs" in results.columns else 1
    frame = results.assign(base_usd=_baseline_usd(results, baseline), w=weight)
    frame = frame[frame["cost_usd"].notna() & frame["base_usd"].notna()]
    frame = frame.assign(cost_usd=frame["cost_usd"] * frame["w"],
                         base_usd=frame["base_usd"] * frame["w"],
                         migrations=frame["migrations"] * frame["w"])
    grouped = frame.groupby(["model", "region", "policy"], sort=False)
    out = grouped.agg(cost_usd=("cost_usd", "sum"), base_usd=("base_usd", "sum"),
                      runs=("w", "sum"), migrations=("migrations", "sum"))
    out["migrations"] = out["migrations"] / out["runs"]
    out["reduction"] = out["base_usd"] / out["cost_usd"]
    out["saving_pct"] = 100 * (1 - out["cost_usd"] / out["base_usd"])
    return out.reset_index()[["model", "region", "policy", "reduction", "saving_pct", "runs",
                              "migrations"]]


def summarize(results: pd.DataFrame, baselines: Sequence[str] = BASELINES) -> pd.DataFrame:
    """Per (model, region, policy): what the policy's replayed runs cost (`cost_usd` summed,
    `runs` replayed and `failed` without a usable offering, each run counted `jobs`
    times; `hours` and `migrations` per replayed run), and `reduction<suffix>` and
    `saving_pct<suffix>` against each baseline (`suffix`: '' for static,
    '_vs_cheapest_hourly'), over the runs both replayed: NaN where none did. A baseline
    that never ran leaves the others' figures, and the comparison with the other
    baseline, as they are."""
    keys = ["model", "region", "policy"]
    weight = results["jobs"] if "jobs" in results.columns else 1
    frame = results.assign(w=weight, ran=results["cost_usd"].notna())
    frame = frame.assign(
        runs=frame["w"] * frame["ran"], failed=frame["w"] * ~frame["ran"],
        cost_usd=(frame["cost_usd"] * frame["w"]).where(frame["ran"], 0.0),
        hours=(frame["hours"] * frame["w"]).where(frame["ran"], 0.0),
        migrations=(frame["migrations"] * frame["w"]).where(frame["ran"], 0.0))
    out = frame.groupby(keys, sort=False)[["runs", "failed", "cost_usd", "hours",
                                           "migrations"]].sum()
    ran = out["runs"].where(out["runs"] > 0)
    out["cost_usd"] = out["cost_usd"].where(out["runs"] > 0)
    out["hours"] = out["hours"] / ran
    out["migrations"] = out["migrations"] / ran
    out = out.reset_index()
    for baseline in baselines:
        if baseline not in set(results["policy"]):
            continue
        extra = relative_costs(results, baseline)[[*keys, "reduction", "saving_pct"]]
        out = out.merge(extra.rename(columns={"reduction": f"reduction{suffix(baseline)}",
                                              "saving_pct": f"saving_pct{suffix(baseline)}"}),
                        on=keys, how="left")
    for baseline in baselines:  # a baseline not replayed at all: no figures against it
        for column in (f"reduction{suffix(baseline)}", f"saving_pct{suffix(baseline)}"):
            if column not in out.columns:
                out[column] = np.nan
    return out


def per_run(results: pd.DataFrame, baselines: Sequence[str] = BASELINES) -> pd.DataFrame:
    """The runs with `reduction<suffix>` per baseline: its cost of the same job and start
    over the run's."""
    return results.assign(**{f"reduction{suffix(b)}": _baseline_usd(results, b)
                             / results["cost_usd"] for b in baselines})


def reduction_table(summary: pd.DataFrame, baseline: str = BASELINE) -> pd.DataFrame:
    """Rows (model, region), columns policies in run order, cells the reduction factor
    against `baseline`; rows and policies with no comparison left out."""
    order = list(dict.fromkeys(summary["policy"]))
    table = summary.pivot_table(index=["model", "region"], columns="policy",
                                values=f"reduction{suffix(baseline)}", sort=False)
    return table[[p for p in order if p in table.columns]]


def to_markdown(summary: pd.DataFrame, baseline: str = BASELINE) -> str:
    """The reduction table against `baseline` as a markdown table."""
    table = reduction_table(summary, baseline)
    header = ["model", "region", *table.columns]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for (model, region), row in table.iterrows():
        cells = [f"{v:.2f}x" if np.isfinite(v) else "-" for v in row]
        lines.append("| " + " | ".join([model, region, *cells]) + " |")
    return "\n".join(lines)


def plot(summary: pd.DataFrame, path: Path, baseline: str = BASELINE) -> Path:
    """A bar chart of the reduction factor against `baseline` per model and policy, one
    panel per region."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = reduction_table(summary, baseline)
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
        ax.set_ylabel(f"cost reduction vs {baseline} (x)")
        ax.set_title(f"Home region {region}")
    handles, names = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, names, loc="upper center", ncols=len(names), fontsize=8)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.25 / (3.6 * len(regions))))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


CALIBRATION_COLUMNS = ["model", "gpu", "policy", "runs", "median_hours_ratio",
                       "worst_hours_ratio", "median_usd_ratio", "worst_usd_ratio"]


def calibration(results: pd.DataFrame) -> pd.DataFrame:
    """Estimate versus actual over the replayed runs, as `costsched report` shows it for
    real jobs: per (model, GPU of the first offering, policy), the median and worst (the
    furthest from 1) ratio of the run's hours and cost to what a plan at its start
    predicted on that offering (its price then, held). Above 1: the run took longer or
    cost more than planned. Runs without an estimate (errors) are left out."""
    need = {"expected_hours", "expected_usd", "first_gpu"}
    if not need <= set(results.columns):
        return pd.DataFrame(columns=CALIBRATION_COLUMNS)
    runs = results[results["expected_usd"].notna() & results["cost_usd"].notna()]
    runs = runs.assign(hours_ratio=runs["hours"] / runs["expected_hours"],
                       usd_ratio=runs["cost_usd"] / runs["expected_usd"])
    rows = []
    for (model, gpu, policy), group in runs.groupby(["model", "first_gpu", "policy"],
                                                    sort=False):
        rows.append((model, gpu, policy, len(group), *ratio_summary(group["hours_ratio"]),
                     *ratio_summary(group["usd_ratio"])))
    return pd.DataFrame(rows, columns=CALIBRATION_COLUMNS)

"""Rendering the collection backtest: cost per approach, deadline misses, moves, and the
instances the collection shared."""

from __future__ import annotations

import math

from rich.console import Console

from costsched.amounts import usd_all
from costsched.cli.common import frame_records, table
from costsched.service.collection_backtest import CollectionBacktestResult
from costsched.vocabulary import counted

DESCRIPTIONS = {
    "collection": "the collection planner, re-run every period",
    "alone": "each job's own best offering at the start, kept",
    "alone-daily": "each job's own best offering, re-chosen every period",
    "cheapest-hourly": "the job's accelerator at the lowest $/h, kept",
}


def print_collection_backtest(result: CollectionBacktestResult, console: Console) -> None:
    w, c = result.window, result.config
    starts = (f"{w['starts']} starts, {w['first_start']:%Y-%m-%d %H:%M} to "
              f"{w['last_start']:%Y-%m-%d %H:%M} UTC" if w["starts"] > 1 else
              f"1 start, {w['first_start']:%Y-%m-%d %H:%M} UTC")
    console.print(f"{counted(len(result.jobs), 'job')} ({', '.join(result.jobs)}) from {starts}, "
                  f"re-planned every "
                  f"{w['replan_hours']:g} h"
                  + (", instances shared" if c.share_instances else ""),
                  highlight=False, soft_wrap=True, markup=False)
    s = result.summary
    if s.empty:  # one line saying why, not an empty table
        first = result.errors.iloc[0] if len(result.errors) else None
        console.print("[yellow]No approach could be compared[/yellow]: " + (
            "no start saw every approach run" if first is None else
            f"{counted(len(result.errors), 'run')} found no usable offering, e.g.: "
            f"{first['approach']} "
            f"from {first['start']:%Y-%m-%d %H:%M}: {first['error']}"),
            highlight=False, soft_wrap=True, markup=True)
        return
    ratio = next((col for col in s.columns if col.startswith("vs_")), None)
    costs = usd_all(*s["cost_usd"])  # one precision: the approaches compare
    rows = [[r.approach, DESCRIPTIONS.get(r.approach, ""), cost,
             f"{getattr(r, ratio):.2f}x" if ratio and math.isfinite(getattr(r, ratio))
             else "-", str(int(r.deadline_misses)),
             str(int(r.moves)), str(int(r.shared_instances)), str(int(r.runs))]
            for r, cost in zip(s.itertuples(), costs, strict=True)]
    against = ratio[3:].replace("_", "-") if ratio else ""
    console.print(table("Collection backtest: total cost over the starts",
                        ["approach", "chooses", "total $", f"vs {against}", "deadline misses",
                         "moves", "shared instances", "starts"], rows))
    shared = result.instances[(result.instances["approach"] == "collection")
                              & result.instances["jobs"].str.contains(", ", regex=False)]
    if len(shared):
        counts = shared.groupby(["offering", "gpus_used"]).size().reset_index(name="n")
        rows = [[r.offering, str(r.gpus_used), str(r.n)]
                for r in counts.sort_values("n", ascending=False).itertuples()]
        console.print(table("Instances the collection shared (instance-periods)",
                            ["offering", "GPUs used", "times"], rows))
    for r in result.errors.itertuples():
        console.print(f"  {r.approach} from {r.start:%Y-%m-%d %H:%M}: {r.error}",
                      highlight=False, soft_wrap=True, markup=False)


def collection_backtest_json(result: CollectionBacktestResult) -> dict:
    """Summary, runs and instances as records (one schema for scripts)."""
    return {"jobs": result.jobs, "window": result.window,
            "share_instances": result.config.share_instances,
            "summary": frame_records(result.summary), "runs": frame_records(result.runs),
            "instances": frame_records(result.instances)}

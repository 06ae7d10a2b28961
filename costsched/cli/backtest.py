"""`costsched backtest`: replay stored prices for jobs x start times through the policies."""

from __future__ import annotations

import math
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from costsched import clouds
from costsched.backtest import PUBLISHED_MODELS, REPLAY_POLICIES, plot, reduction_table
from costsched.cli.common import (
    DbOption,
    JsonOption,
    console,
    err_console,
    frame_records,
    friendly_errors,
    options,
    print_json,
    split_csv,
    table,
)
from costsched.model import InvalidInput
from costsched.optimize.decision import Overheads
from costsched.service import BacktestResult
from costsched.service import backtest as run_backtest
from costsched.service.backtest import FIT_LENGTHS

FLAGS = {"days": "--days", "starts": "--starts", "first_start": "--first-start",
         "every_hours": "--every-hours", "period_hours": "--period-hours", "margin": "--margin"}


@friendly_errors
def backtest_cmd(
    jobs_files: Annotated[list[Path] | None, typer.Option(
        "--jobs", help="Job spec YAML file(s), as for `costsched plan`; home regions from "
        "their constraints, else --region.")] = None,
    models: Annotated[list[str] | None, typer.Option(
        "--models", help="Model names (comma-separated; `costsched throughput show` lists "
        "them); default: the six of the published trace analysis: "
        f"{', '.join(PUBLISHED_MODELS)}.")] = None,
    days: Annotated[float, typer.Option(help="Job length in days on one V100.")] = 4.0,
    region: Annotated[list[str] | None, typer.Option(
        "--region", help="Home region(s) of the jobs (comma-separated).")] = None,
    starts: Annotated[int, typer.Option(help="Number of start times.")] = 30,
    first_start: Annotated[str | None, typer.Option(
        help="First start time (ISO 8601); default: the latest whole day such that the "
        f"last start is {FIT_LENGTHS:g} job lengths before the end of the trace.",
        show_default=False)] = None,
    every_hours: Annotated[float, typer.Option(help="Hours between start times.")] = 24.0,
    period_hours: Annotated[float, typer.Option(help="Hours between decisions.")] = 24.0,
    policies: Annotated[list[str] | None, typer.Option(
        "--policies",
        help=f"Policies (comma-separated): {', '.join(REPLAY_POLICIES)}; default all.",
        show_default=False)] = None,
    margin: Annotated[float, typer.Option(
        help="dynamic-aware's hysteresis: the saving must exceed the migration cost by "
        "this fraction of the cost of staying.")] = 0.05,
    restart_minutes: Annotated[float, typer.Option(help="Boot and set-up per move.")] = 10.0,
    warmup_minutes: Annotated[float, typer.Option(help="Warm-up per move.")] = 5.0,
    lost_work_minutes: Annotated[float | None, typer.Option(
        help="Work redone per move (default: half the job's checkpoint interval).",
        show_default=False)] = None,
    overlap_minutes: Annotated[float, typer.Option(
        help="Minutes the old instance runs on while it checkpoints.")] = 0.0,
    checkpoint_gb: Annotated[float, typer.Option(
        help="Checkpoint size (egress) of jobs whose spec gives none.")] = 1.0,
    free_migrations: Annotated[bool, typer.Option(
        "--free-migrations", help="Charge nothing for moves, as the published trace "
        "analysis assumed.")] = False,
    plot_path: Annotated[Path | None, typer.Option("--plot", help="Write a bar chart (PNG).")]
    = None,
    csv_path: Annotated[Path | None, typer.Option("--csv", help="Write every run (CSV).")]
    = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Replay stored prices: cost, hours and migrations of each policy, relative to static."""
    for name, value in (("--restart-minutes", restart_minutes), ("--margin", margin),
                        ("--warmup-minutes", warmup_minutes), ("--checkpoint-gb", checkpoint_gb),
                        ("--lost-work-minutes", lost_work_minutes),
                        ("--overlap-minutes", overlap_minutes)):
        if value is not None and value < 0:
            raise InvalidInput(f"{name} {value}: expected a number >= 0")
    if period_hours <= 0 or every_hours <= 0:
        raise InvalidInput("--period-hours and --every-hours: expected positive numbers")
    overheads = Overheads.free() if free_migrations else Overheads(
        restart_minutes=restart_minutes, warmup_minutes=warmup_minutes,
        overlap_minutes=overlap_minutes, lost_work_minutes=lost_work_minutes)
    with Progress(TextColumn("[bold]backtest"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err_console, disable=json_out,
                  transient=True) as progress, options(**FLAGS):
        task = progress.add_task("", total=None)
        result = run_backtest(
            db, models=split_csv(models), job_files=jobs_files or (), days=days,
            regions=split_csv(region) or ["us-east-1"], starts=starts, first_start=first_start,
            every_hours=every_hours, period_hours=period_hours, policies=split_csv(policies),
            margin=margin, overheads=overheads, checkpoint_gb=checkpoint_gb,
            progress=lambda done, total: progress.update(task, completed=done, total=total))
    if csv_path is not None:
        result.results.to_csv(csv_path, index=False)
    if plot_path is not None:
        plot(result.summary, plot_path)
    if json_out:
        print_json({"window": result.window,
                    "migration_costs": _costs_dict(result.overheads, checkpoint_gb),
                    "margin": result.margin, "summary": frame_records(result.summary),
                    "runs": frame_records(result.results)})
        return
    _print_summary(result)
    if plot_path is not None:
        console.print(f"chart written to {plot_path}")
    if csv_path is not None:
        console.print(f"{len(result.results)} runs written to {csv_path}")


def _costs_dict(overheads: Overheads, checkpoint_gb: float) -> dict:
    out = {k: (None if isinstance(v, float) and math.isinf(v) else v)
           for k, v in asdict(overheads).items()}
    out["checkpoint_gb"] = checkpoint_gb if overheads.egress else 0.0
    out["egress_usd_per_gb"] = {
        name: {"internet": c.egress.internet_usd_per_gb,
               "inter_region": c.egress.inter_region_usd_per_gb, "source": c.egress.source}
        for name, c in clouds.CLOUDS.items()}
    return out


def _print_summary(result: BacktestResult) -> None:
    summary, window = result.summary, result.window
    reductions = reduction_table(summary)
    migrations = summary.pivot_table(index=["model", "region"], columns="policy",
                                     values="migrations", sort=False)
    columns = ["model", "region", *reductions.columns]
    rows = []
    for key, row in reductions.iterrows():
        cells = []
        for policy, value in row.items():
            moves = migrations.loc[key, policy]
            cells.append(f"{value:.2f}x" + (f" ({moves:.1f} mig)" if moves > 0 else ""))
        rows.append([*key, *cells])
    fmt = "%Y-%m-%d %H:%M"
    title = (f"Cost reduction vs static (static cost / policy cost over {window['starts']} "
             f"starts, {window['first_start']:{fmt}} to {window['last_start']:{fmt}} UTC)")
    console.print(table(title, columns, rows))
    console.print(f"trace ends {window['trace_end']:{fmt}} UTC; {result.runs_after_trace} of "
                  f"{len(result.results)} runs ran past it (prices held at their last value)",
                  highlight=False)
    errors = result.errors
    if not errors.empty:
        console.print(f"[yellow]{len(errors)} runs had no usable offering[/yellow], e.g.: "
                      f"{errors['error'].iloc[0]}", highlight=False)

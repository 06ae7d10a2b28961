"""`costsched backtest`: replay stored prices for jobs x start times through the policies."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from costsched.backtest import (
    ISSUE_MODELS,
    REPLAY_POLICIES,
    BacktestConfig,
    PriceTrace,
    jobs_for_models,
    plot,
    read_jobs,
    reduction_table,
    regular_starts,
    relative_costs,
    replay_policy_name,
    run_backtest,
)
from costsched.cli.common import (
    DbOption,
    JsonOption,
    console,
    err_console,
    frame_records,
    friendly_errors,
    parse_time,
    print_json,
    split_csv,
    table,
)
from costsched.migration_costs import EGRESS, MigrationCosts
from costsched.model import InvalidInput
from costsched.store import PriceStore
from costsched.throughput import ThroughputTable

# Without --first-start, the window ends this many job lengths (V100-days) before the
# trace's last observation: runs on cheaper, slower GPUs take up to ~3.3x as long.
FIT_LENGTHS = 3.5


@friendly_errors
def backtest_cmd(
    jobs_files: Annotated[list[Path] | None, typer.Option(
        "--jobs", help="Job spec YAML file(s), as for `costsched plan`; home regions from "
        "their constraints, else --region.")] = None,
    models: Annotated[list[str] | None, typer.Option(
        "--models", help="Model names (comma-separated); default: the issue's six.")] = None,
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
    lost_work_minutes: Annotated[float, typer.Option(help="Work redone per move.")] = 15.0,
    overlap_minutes: Annotated[float, typer.Option(
        help="Minutes the old instance runs on while it checkpoints.")] = 0.0,
    checkpoint_gb: Annotated[float, typer.Option(help="Checkpoint size (egress).")] = 1.0,
    free_migrations: Annotated[bool, typer.Option(
        "--free-migrations", help="Charge nothing for moves (the published analysis).")] = False,
    plot_path: Annotated[Path | None, typer.Option("--plot", help="Write a bar chart (PNG).")]
    = None,
    csv_path: Annotated[Path | None, typer.Option("--csv", help="Write every run (CSV).")]
    = None,
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Replay stored prices: cost, hours and migrations of each policy, relative to static."""
    names = [replay_policy_name(p) for p in split_csv(policies)] or list(REPLAY_POLICIES)
    if "static" not in names:
        names.insert(0, "static")  # the baseline of every comparison
    regions = split_csv(region) or ["us-east-1"]
    costs = MigrationCosts.free() if free_migrations else MigrationCosts(
        restart_minutes, warmup_minutes, lost_work_minutes, overlap_minutes, checkpoint_gb)
    for name, value in (("--restart-minutes", restart_minutes), ("--margin", margin),
                        ("--warmup-minutes", warmup_minutes), ("--checkpoint-gb", checkpoint_gb),
                        ("--lost-work-minutes", lost_work_minutes),
                        ("--overlap-minutes", overlap_minutes)):
        if value < 0:
            raise InvalidInput(f"{name} {value}: expected a number >= 0")
    if period_hours <= 0 or every_hours <= 0:
        raise InvalidInput("--period-hours and --every-hours: expected positive numbers")

    table_ = ThroughputTable()
    if jobs_files:
        # Specs resolve against a time only for absolute deadlines, which replays ignore.
        at = parse_time(first_start, "--first-start") if first_start else parse_time(None)
        jobs = read_jobs(jobs_files, regions, table_, at)
    else:
        jobs = jobs_for_models(split_csv(models) or list(ISSUE_MODELS), days, regions, table_)
    store = PriceStore(db)
    trace = PriceTrace.from_store(store, os=["linux", "linux-vpc"])
    longest = max(j.v100_days for j in jobs)
    first = (parse_time(first_start, "--first-start") if first_start
             else _default_first(trace, starts, every_hours, longest))
    times = regular_starts(first, starts, every_hours)
    config = BacktestConfig(period_hours=period_hours, costs=costs, margin=margin)

    total = len(jobs) * len(times) * len(names)
    with Progress(TextColumn("[bold]backtest"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err_console, disable=json_out,
                  transient=True) as progress:
        task = progress.add_task("", total=total)
        results = run_backtest(trace, jobs, times, names, config, table_,
                               progress=lambda n: progress.advance(task, n))
    summary = relative_costs(results)
    if csv_path is not None:
        results.to_csv(csv_path, index=False)
    if plot_path is not None:
        plot(summary, plot_path)
    window = {"first_start": times[0], "last_start": times[-1], "starts": len(times),
              "every_hours": every_hours, "trace_end": _utc(trace.end),
              "period_hours": period_hours}
    after = results["hours_after_trace"].fillna(0) > 0
    errors = results[results["error"].notna()]
    if json_out:
        print_json({"window": window, "migration_costs": _costs_dict(costs), "margin": margin,
                    "summary": frame_records(summary), "runs": frame_records(results)})
        return
    _print_summary(summary, window, int(after.sum()), len(results), errors)
    if plot_path is not None:
        console.print(f"chart written to {plot_path}")
    if csv_path is not None:
        console.print(f"{len(results)} runs written to {csv_path}")


def _default_first(trace: PriceTrace, starts: int, every_hours: float,
                   days: float) -> datetime:
    end = _utc(trace.end)
    last = end - timedelta(days=FIT_LENGTHS * days)
    first = last - timedelta(hours=every_hours * (starts - 1))
    first = first.replace(hour=0, minute=0, second=0, microsecond=0)
    begin = _utc(trace.start)
    if first < begin:
        first = (begin + timedelta(days=1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return first


def _utc(epoch_seconds: int) -> datetime:
    return datetime.fromtimestamp(epoch_seconds, timezone.utc)


def _costs_dict(costs: MigrationCosts) -> dict:
    return {"restart_minutes": costs.restart_minutes, "warmup_minutes": costs.warmup_minutes,
            "lost_work_minutes": costs.lost_work_minutes,
            "overlap_minutes": costs.overlap_minutes, "checkpoint_gb": costs.checkpoint_gb,
            "transfer_gbps": costs.transfer_gbps,
            "egress_usd_per_gb": {c: {"internet": e.internet_usd_per_gb,
                                      "inter_region": e.inter_region_usd_per_gb,
                                      "source": e.source} for c, e in EGRESS.items()}}


def _print_summary(summary: pd.DataFrame, window: dict, after: int, runs: int,
                   errors: pd.DataFrame) -> None:
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
    console.print(f"trace ends {window['trace_end']:{fmt}} UTC; {after} of {runs} runs ran "
                  "past it (prices held at their last value)", highlight=False)
    if not errors.empty:
        console.print(f"[yellow]{len(errors)} runs had no usable offering[/yellow], e.g.: "
                      f"{errors['error'].iloc[0]}", highlight=False)

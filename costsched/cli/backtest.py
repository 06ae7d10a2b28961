"""`costsched backtest`: replay stored prices for jobs x start times through the policies."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import pandas as pd
import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from costsched.amounts import usd_all
from costsched.backtest import (
    BASELINES,
    PUBLISHED_MODELS,
    REPLAY_POLICIES,
    per_run,
    plot,
    reduction_table,
)
from costsched.backtest.report import calibration
from costsched.cli.common import (
    AS_TYPED,
    DbOption,
    JsonOption,
    WideOption,
    bar_hidden,
    console,
    err_console,
    friendly_errors,
    options,
    print_json,
    report_cells,
    split_csv,
    table,
    user_text,
)
from costsched.model import InvalidInput
from costsched.optimize.decision import Overheads
from costsched.service import BacktestResult
from costsched.service import backtest as run_backtest
from costsched.service.backtest import FIT_LENGTHS, json_payload
from costsched.vocabulary import counted

FLAGS = {"days": "--days", "starts": "--starts", "first_start": "--first-start",
         "every_hours": "--every-hours", "period_hours": "--period-hours", "margin": "--margin"}


@friendly_errors
def backtest_cmd(
    jobs: Annotated[list[Path] | None, typer.Argument(
        help="Job spec YAML file(s), as for `costsched plan`; home regions from their "
        "constraints, else --region.", show_default=False)] = None,
    jobs_files: Annotated[list[Path] | None, typer.Option(
        "--jobs", help="Job spec YAML file (the same as naming it as an argument).",
        show_default=False)] = None,
    models: Annotated[list[str] | None, typer.Option(
        "--models", help="Model names (comma-separated; `costsched throughput show` lists "
        "them); default: the six of the published trace analysis: "
        f"{', '.join(PUBLISHED_MODELS)}.")] = None,
    days: Annotated[float, typer.Option(help="Job length in days on one V100.", **AS_TYPED)] = 4.0,
    region: Annotated[list[str] | None, typer.Option(
        "--region", help="Home region(s) of the jobs (comma-separated).")] = None,
    starts: Annotated[int, typer.Option(help="Number of start times.")] = 30,
    first_start: Annotated[str | None, typer.Option(
        help="First start time (ISO 8601); default: the latest whole day such that the "
        f"last start is {FIT_LENGTHS:g} job lengths before the newest stored price (or now), "
        "else the earliest whole day the stored prices hold every start in. Every start "
        "must lie within the stored prices.",
        show_default=False)] = None,
    every_hours: Annotated[float, typer.Option(help="Hours between start times.",
                                               **AS_TYPED)] = 24.0,
    period_hours: Annotated[float, typer.Option(help="Hours between decisions.",
                                                **AS_TYPED)] = 24.0,
    policies: Annotated[list[str] | None, typer.Option(
        "--policies",
        help=f"Policies (comma-separated): {', '.join(REPLAY_POLICIES)}; default all.",
        show_default=False)] = None,
    margin: Annotated[float, typer.Option(
        help="dynamic-aware's hysteresis: a move must save, its own cost counted, more "
        "than this fraction of the next period's expected cost where the job is.",
        **AS_TYPED)] = 0.05,
    restart_minutes: Annotated[float, typer.Option(help="Boot and set-up per move.",
                                                   **AS_TYPED)] = 10.0,
    warmup_minutes: Annotated[float, typer.Option(help="Warm-up per move.", **AS_TYPED)] = 5.0,
    lost_work_minutes: Annotated[float | None, typer.Option(
        help="Work redone per move (default: half the job's checkpoint interval).",
        show_default=False, **AS_TYPED)] = None,
    overlap_minutes: Annotated[float, typer.Option(
        help="Minutes the old instance runs on while it checkpoints.", **AS_TYPED)] = 0.0,
    checkpoint_gb: Annotated[float, typer.Option(
        help="Checkpoint size (egress) of jobs whose spec gives none.", **AS_TYPED)] = 1.0,
    free_migrations: Annotated[bool, typer.Option(
        "--free-migrations", help="Charge nothing for moves, as the published trace "
        "analysis assumed.")] = False,
    share_instances: Annotated[bool, typer.Option(
        "--share-instances", help="A 1-GPU job may take one GPU of a multi-GPU instance at "
        "its price / GPU count (other jobs assumed to fill the rest), as the published trace "
        "analysis priced them; static, gpu-type and cheapest-hourly rent whole "
        "instances.")] = False,
    collection: Annotated[bool, typer.Option(
        "--collection", help="Replay the jobs (--jobs, else 8 jobs over --models, each due "
        "in twice its length) as one collection: the collection planner re-run every "
        "--period-hours (packing jobs onto multi-GPU instances with --share-instances), "
        "against each job alone and cheapest-hourly.")]
    = False,
    plot_path: Annotated[Path | None, typer.Option("--plot", help="Write a bar chart (PNG).")]
    = None,
    csv_path: Annotated[Path | None, typer.Option("--csv", help="Write every run (CSV).")]
    = None,
    db: DbOption = None,
    wide: WideOption = False,  # read by common.table
    json_out: JsonOption = False,
) -> None:
    """Replay stored prices: cost, hours and migrations of each policy, relative to static
    and to cheapest-hourly."""
    jobs_files = [*(jobs or []), *(jobs_files or [])] or None
    for name, value in (("--restart-minutes", restart_minutes), ("--margin", margin),
                        ("--warmup-minutes", warmup_minutes), ("--checkpoint-gb", checkpoint_gb),
                        ("--lost-work-minutes", lost_work_minutes),
                        ("--overlap-minutes", overlap_minutes)):
        if value is not None and not (value >= 0 and math.isfinite(value)):
            raise InvalidInput(f"{name} {value}: expected a finite number >= 0")
    for name, value in (("--period-hours", period_hours), ("--every-hours", every_hours)):
        if not value > 0:
            raise InvalidInput(f"{name} {value}: expected a positive number of hours")
    overheads = Overheads.free() if free_migrations else Overheads(
        restart_minutes=restart_minutes, warmup_minutes=warmup_minutes,
        overlap_minutes=overlap_minutes, lost_work_minutes=lost_work_minutes)
    if collection:
        _collection(jobs_files, models, days, region, starts, first_start, every_hours,
                    period_hours, share_instances, overheads, checkpoint_gb, db, json_out)
        return
    with Progress(TextColumn("[bold]backtest"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err_console, disable=bar_hidden(json_out),
                  transient=True) as progress, options(**FLAGS):
        task = progress.add_task("", total=None)
        result = run_backtest(
            db, models=split_csv(models), job_files=jobs_files or (), days=days,
            regions=split_csv(region) or ["us-east-1"], starts=starts, first_start=first_start,
            every_hours=every_hours, period_hours=period_hours, policies=split_csv(policies),
            margin=margin, overheads=overheads, checkpoint_gb=checkpoint_gb,
            share_instances=share_instances,
            progress=lambda done, total: progress.update(task, completed=done, total=total))
    if csv_path is not None:
        _write(csv_path, lambda: per_run(result.results).to_csv(csv_path, index=False))
    if plot_path is not None:
        _write(plot_path, lambda: plot(result.summary, plot_path))
    if json_out:
        print_json(json_payload(result))
        return
    _print_summary(result)
    if plot_path is not None:
        console.print(f"chart written to {user_text(plot_path)}", highlight=False)
    if csv_path is not None:
        console.print(f"{counted(len(result.results), 'row')} written to {user_text(csv_path)}",
                      highlight=False)


def _collection(jobs_files: list[Path] | None, models: list[str] | None, days: float,
                region: list[str] | None, starts: int, first_start: str | None,
                every_hours: float, period_hours: float, share_instances: bool,
                overheads: Overheads, checkpoint_gb: float, db: str | None,
                json_out: bool) -> None:
    from costsched.cli.collection_backtest import (
        collection_backtest_json,
        print_collection_backtest,
    )
    from costsched.service.collection_backtest import collection_backtest

    with Progress(TextColumn("[bold]collection backtest"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err_console, disable=bar_hidden(json_out),
                  transient=True) as progress, options(**FLAGS, replan_hours="--period-hours"):
        task = progress.add_task("", total=None)
        result = collection_backtest(
            db, job_files=jobs_files or (), models=split_csv(models), days=days,
            regions=split_csv(region), starts=starts, first_start=first_start,
            every_hours=every_hours, replan_hours=period_hours,
            share_instances=share_instances, overheads=overheads,
            checkpoint_gb=checkpoint_gb,
            progress=lambda done, total: progress.update(task, completed=done, total=total))
    if json_out:
        print_json(collection_backtest_json(result))
    else:
        print_collection_backtest(result, console)


def _write(path: Path, write: Callable[[], object]) -> None:
    try:
        write()
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot write it ({exc.strerror or exc}): expected a "
                           "writable file path") from None


def _print_summary(result: BacktestResult) -> None:
    summary, window = result.summary, result.window
    migrations = summary.pivot_table(index=["model", "region"], columns="policy",
                                     values="migrations", sort=False)
    fmt = "%Y-%m-%d %H:%M"
    over = ((f"over {window['starts']} starts, {window['first_start']:{fmt}} to "
             f"{window['last_start']:{fmt}} UTC" if window["starts"] > 1 else
             f"from 1 start, {window['first_start']:{fmt}} UTC")
            + (", instances shared per GPU" if result.share_instances else ""))
    errors = result.errors
    for baseline, said in result.baselines.items():
        console.print(f"{baseline} rents {'; '.join(said)}", highlight=False, markup=False)
    for baseline in BASELINES:
        reductions = reduction_table(summary, baseline)
        if reductions.empty:
            # Nothing to compare with: one line saying why, not an empty table.
            console.print(f"[yellow]No cost reduction vs {baseline}[/yellow] ({over}): "
                          f"{_why_none(summary, errors, baseline)}", highlight=False, markup=True)
            continue
        rows = []
        for key, row in reductions.iterrows():
            cells = []
            for policy, value in row.items():
                moves = migrations.loc[key, policy] if baseline == BASELINES[0] else 0
                cells.append("-" if not math.isfinite(value) else
                             f"{value:.2f}x" + (f" ({moves:.1f} mig)" if moves > 0 else ""))
            rows.append([*key, *cells])
        title = (f"Cost reduction vs {baseline} ({baseline} cost / policy cost {over})")
        console.print(table(title, ["model", "region", *reductions.columns], rows))
    _print_costs(summary, over)
    console.print(f"trace ends {window['trace_end']:{fmt}} UTC; {result.runs_after_trace:,} "
                  f"of {counted(result.runs, 'run')} ran past it (prices held at their last value)",
                  highlight=False, markup=False)
    if result.runs > len(result.results):
        console.print(f"identical jobs replayed once: "
                      f"{counted(len(result.results), 'replay')} stand for "
                      f"{counted(result.runs, 'run')}", highlight=False, markup=False)
    _print_calibration(calibration(result.results))
    for policy, own in errors.groupby("policy", sort=False):
        n = int(own["jobs"].sum())
        console.print(f"[yellow]{policy}: {n} run{'s' if n != 1 else ''} had no usable "
                      f"offering[/yellow], e.g.: {user_text(own['error'].iloc[0])}",
                      highlight=False, markup=True)


def _print_costs(summary: pd.DataFrame, over: str) -> None:
    """What each policy's replayed runs cost, and how many found no usable offering."""
    if not (summary["runs"] > 0).any():
        return
    rows = []
    ran_rows = summary[summary["runs"] > 0]  # each money column at one precision
    costs = dict(zip(ran_rows.index, usd_all(*ran_rows["cost_usd"]), strict=True))
    each = dict(zip(ran_rows.index, usd_all(*(ran_rows["cost_usd"] / ran_rows["runs"])),
                    strict=True))
    for i, r in zip(summary.index, summary.itertuples(), strict=True):
        ran = r.runs > 0
        rows.append([r.model, r.region, r.policy, f"{int(r.runs):,}", f"{int(r.failed):,}",
                     costs[i] if ran else "-", each[i] if ran else "-",
                     f"{r.hours:,.1f}" if ran else "-",
                     f"{r.migrations:.1f}" if ran else "-"])
    console.print(table(f"What each policy cost ({over})",
                        ["model", "region", "policy", "runs", "no offering", "total",
                         "per run", "hours per run", "migrations per run"], rows,
                        detail=["migrations per run", "hours per run", "no offering"]))


def _why_none(summary: pd.DataFrame, errors: pd.DataFrame, baseline: str) -> str:
    """Why no run could be compared with `baseline`: its runs' error, else that no other
    policy replayed a job and start it did."""
    own = errors[errors["policy"] == baseline]
    ran = summary.loc[summary["policy"] == baseline, "runs"].sum()
    if ran > 0:
        return (f"its {counted(int(ran), 'run')} replayed, but no other policy replayed the "
                "same job from the same start")
    if own.empty:
        return f"no run of {baseline} was replayed"
    return (f"none of its {int(own['jobs'].sum())} runs found a usable offering, e.g.: "
            f"{user_text(own['error'].iloc[0])}")


def _print_calibration(frame: pd.DataFrame) -> None:
    """Estimate at start versus the replay, per model, first GPU and policy."""
    if frame.empty:
        return
    headings, rows = report_cells(frame, list(frame.columns))
    # Where the page is narrow, the hours and the worst go first; the median cost stays.
    keep = {"model", "policy", "median cost ratio"}
    console.print(table("Estimate at start versus the replay (ratio = replay / estimate)",
                        headings, rows, detail=[h for h in reversed(headings)
                                                if h not in keep]))

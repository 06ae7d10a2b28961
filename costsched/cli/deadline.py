"""`costsched backtest-deadline --deadline HOURS[,HOURS...]`: jobs with a deadline replayed
over the stored spot availability through the deadline policies, against the hindsight
optimum."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from costsched.backtest.deadline import plot
from costsched.backtest.deadline.report import OPTIMUM
from costsched.cli.common import (
    AS_TYPED,
    DbOption,
    JsonOption,
    OptionValue,
    WideOption,
    bar_hidden,
    console,
    err_console,
    frame_records,
    friendly_errors,
    options,
    print_json,
    split_csv,
    table,
    typed_number,
)
from costsched.model import InvalidInput
from costsched.policies.deadline import DEADLINE_POLICIES
from costsched.service.deadline import (
    DEFAULT_CHECKPOINT_MINUTES,
    DeadlineBacktestResult,
    deadline_backtest,
)
from costsched.service.deadline_blocks import blocks_from

FLAGS = {"deadline_hours": "--deadline", "restart_minutes": "--restart-minutes",
         "job_hours": "--job-hours", "starts": "--starts", "checkpoint_minutes":
         "--checkpoint-minutes", "checkpoint_gb": "--checkpoint-gb", "spot_price":
         "--spot-price", "on_demand_price": "--on-demand-price", "zone": "--zones",
         "windows": "--windows", "optimum_step": "--optimum-step",
         "egress_rates": "--egress-rates", "history": "--history", "block": "--block"}


def numbers(values: list[str] | None, flag: str) -> list[float]:
    """Comma-separated numbers of an option ('52,70'), each echoed as typed."""
    out = []
    for value in split_csv(values):
        try:
            out.append(typed_number(value))
        except OptionValue:
            raise InvalidInput(f"{flag} {value!r}: expected numbers such as 52,70") from None
    return out


def hours_of(values: list[str] | None, flag: str) -> list[float]:
    """Comma-separated durations of an option, in hours, as every deadline is written
    ('52,70', '36h,2d', '90m')."""
    from costsched.durations import parse_hours

    out = []
    for value in split_csv(values):
        try:
            hours = parse_hours(value)
        except ValueError as exc:
            raise InvalidInput(f"{flag} {exc}") from None
        if not isinstance(hours, float):  # a time: each start has its own deadline
            raise InvalidInput(f"{flag} {value!r}: expected durations after each start "
                               "such as 52,70 (hours) or 36h,2d,90m, not a time")
        out.append(hours)
    return out


@friendly_errors
def deadline_backtest_cmd(
    deadline: Annotated[list[str], typer.Option(
        "--deadline", help="Deadline(s) after each start, comma-separated: hours (52) or "
        "durations (36h, 2d).")],
    job_hours: Annotated[float, typer.Option(help="Work of each job in hours.",
                                             **AS_TYPED)] = 48.0,
    restart_minutes: Annotated[list[str] | None, typer.Option(
        "--restart-minutes", help="Restart overhead(s) in minutes (comma-separated).")]
    = None,
    checkpoint_minutes: Annotated[str, typer.Option(
        help="Minutes of work between checkpoints, or auto (costsched chooses it from the "
             "checkpoint's write time and the trace's preemption rate).")]
    = f"{DEFAULT_CHECKPOINT_MINUTES:g}",
    checkpoint_gb: Annotated[float, typer.Option(
        help="Checkpoint size, for egress between regions.", **AS_TYPED)] = 1.0,
    zones: Annotated[list[str] | None, typer.Option(
        "--zones", help="Zones the jobs may use (comma-separated); default: all stored.")]
    = None,
    instance_type: Annotated[str, typer.Option(help="Instance type.")] = "p3.2xlarge",
    starts: Annotated[int, typer.Option(help="Start times spread over the trace.")] = 20,
    policies: Annotated[list[str] | None, typer.Option(
        "--policies", help=f"Policies (comma-separated): {', '.join(DEADLINE_POLICIES)}; "
        "default all.", show_default=False)] = None,
    spot_price: Annotated[float | None, typer.Option(
        help="Spot USD/h in every zone (default: stored prices, else 30% of on-demand).",
        show_default=False, **AS_TYPED)] = None,
    on_demand_price: Annotated[float | None, typer.Option(
        help="On-demand USD/h (default: stored prices, else the catalog's list price).",
        show_default=False, **AS_TYPED)] = None,
    windows: Annotated[list[str] | None, typer.Option(
        "--windows", help="Start times of the runs (ISO 8601, comma-separated), or a file "
        "of them (one a line, or a CSV with a start column); default: --starts spread "
        "over the trace.", show_default=False)] = None,
    optimum_step: Annotated[str | None, typer.Option(
        help="The optimum's precision: exact, or seconds of waste per state (coarser: a "
             "lower bound, faster); default: exact up to 1,000 states, then coarser.",
        show_default=False)] = None,
    egress_rates: Annotated[Path | None, typer.Option(
        help="CSV of from_region,to_region,usd_per_gb for moves between regions (default: "
             "the clouds' published rates).", show_default=False)] = None,
    history: Annotated[str, typer.Option(
        help="What the policies know of the market before each run: full (the stored "
             "trace before its start) or none (only the run's own ticks, as a job meets "
             "a market never watched).")] = "full",
    block: Annotated[list[str] | None, typer.Option(
        "--block", help="A capacity block each run may buy at its start: INSTANCE_TYPE,"
        "ZONE,START_HOURS,HOURS,UPFRONT_USD (START_HOURS after the run's start), or a CSV "
        "file of them (that header); every policy is replayed again with each.",
        show_default=False)] = None,
    plot_path: Annotated[Path | None, typer.Option("--plot", help="Write a bar chart (PNG).")]
    = None,
    db: DbOption = None,
    wide: WideOption = False,
    json_out: JsonOption = False,
) -> None:
    """Replay jobs with a deadline over stored spot availability: cost against on-demand,
    deadline misses and the share of the greedy-to-optimum gap each policy closes."""
    deadlines = hours_of(deadline, "--deadline")
    restarts = numbers(restart_minutes, "--restart-minutes") or [3.0, 12.0]
    with Progress(TextColumn("[bold]deadline backtest"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err_console, disable=bar_hidden(json_out),
                  transient=True) as bar, options(**FLAGS):
        task = bar.add_task("", total=None)
        result = deadline_backtest(
            db, zones=split_csv(zones) or None, instance_type=instance_type,
            job_hours=job_hours, deadline_hours=deadlines, restart_minutes=restarts,
            checkpoint_minutes=checkpoint_minutes, checkpoint_gb=checkpoint_gb,
            starts=starts, policies=split_csv(policies), spot_price=spot_price,
            on_demand_price=on_demand_price, windows=window_starts(windows) or None,
            optimum_step=optimum_step,
            egress_usd_per_gb=read_egress(egress_rates) if egress_rates else None,
            history=history,
            blocks=blocks_from(block or []),
            progress=lambda done, total: bar.update(task, completed=done, total=total))
    if plot_path is not None:
        plot(result.summary, plot_path)
    if json_out:
        print_json({"trace": result.trace, "optimum_step_seconds": result.optimum_steps,
                    "summary": frame_records(result.summary),
                    "windows": frame_records(result.windows),
                    "runs": frame_records(result.results)})
        return
    render(result, wide)
    if plot_path is not None:
        console.print(f"chart written to {plot_path}", markup=False)


def window_starts(values: list[str] | None) -> list[str]:
    """Start times from the option: each value a file of them or comma-separated times."""
    out: list[str] = []
    for value in values or []:
        path = Path(value)
        if not path.is_file():
            out.extend(split_csv([value]))
            continue
        lines = [line.strip() for line in path.read_text().splitlines()]
        lines = [line for line in lines if line and not line.startswith("#")]
        if lines and "start" in [c.strip() for c in lines[0].split(",")]:
            column = [c.strip() for c in lines[0].split(",")].index("start")
            lines = [line.split(",")[column].strip() for line in lines[1:]]
        if not lines:
            raise InvalidInput(f"windows {path}: expected start times, one a line")
        out.extend(lines)
    return out


def read_egress(path: Path) -> dict[tuple[str, str], float]:
    """(from, to) region -> USD/GB from a CSV of from_region,to_region,usd_per_gb."""
    import pandas as pd

    try:
        frame = pd.read_csv(path)
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"egress_rates {path}: {exc}") from None
    need = ["from_region", "to_region", "usd_per_gb"]
    if list(frame.columns[:3]) != need and not set(need) <= set(frame.columns):
        raise InvalidInput(f"egress_rates {path}: expected columns {','.join(need)}")
    rates = pd.to_numeric(frame["usd_per_gb"], errors="coerce")
    bad = frame.index[~(rates >= 0)]
    if len(bad):
        raise InvalidInput(f"egress_rates {path} row {int(bad[0]) + 2}: usd_per_gb "
                           f"{frame['usd_per_gb'].iloc[bad[0]]!r}: expected USD >= 0")
    return {(str(a), str(b)): float(r) for a, b, r in
            zip(frame["from_region"], frame["to_region"], rates, strict=True)}


def render(result: DeadlineBacktestResult, wide: bool = False) -> None:
    """The summary table and what it rests on."""
    rows = []
    for row in result.summary.itertuples(index=False):
        gap = f"{row.gap_closed:.0%}" if row.gap_closed == row.gap_closed else "-"
        rows.append([f"{row.deadline_hours:g} h", f"{row.restart_minutes:g} min", row.policy,
                     f"{row.vs_on_demand:.3f}", f"{row.vs_optimum:.3f}", gap,
                     str(row.misses), str(row.runs)])
    info = result.trace
    title = (f"Deadline backtest: {info['starts']} starts x {len(info['zones'])} home zones "
             f"({', '.join(info['zones'])})")
    console.print(table(title, ["deadline", "restart", "policy", "cost vs on-demand",
                                "vs optimum", "gap closed", "misses", "runs"], rows,
                        detail=["runs", "gap closed", "vs optimum"], wide=wide))
    if info.get("windows") or info["starts"] <= 12:
        render_windows(result, wide)
    steps = ", ".join(f"{k}: {v} s" for k, v in result.optimum_steps.items())
    console.print(f"prices: {info['prices']}; optimum over all zones, waste step {steps} "
                  f"(a step above the exact one gives a lower bound)",
                  highlight=False, markup=False)
    egress = info.get("egress_usd_per_gb") or []
    if egress:
        pairs = ", ".join(f"{e['from_region']} -> {e['to_region']} ${e['usd_per_gb']:g}"
                          for e in egress)
        console.print(f"moves between regions: {info['checkpoint_gb']:g} GB checkpoint x "
                      f"{info['egress_basis']} per GB ({pairs})", highlight=False, markup=False)
    if info.get("checkpoint_basis", "given") != "given":
        console.print(f"checkpoints: {info['checkpoint_basis']}", highlight=False, markup=False)
    if info.get("history") == "none":
        console.print("market history: none before each run (the policies know only the "
                      "run's own ticks)", highlight=False)
    for b in info.get("blocks") or []:
        console.print(f"{b['label']}: bought at each run's start, its price in the run's "
                      f"cost; the job leaves it {b['hours'] - b['usable_hours']:g} h before its "
                      "end", highlight=False, markup=False)
    if info.get("coverage"):
        console.print(f"{info['coverage']}; runs start only where every zone is covered "
                      f"to the deadline", highlight=False, markup=False)


def render_windows(result: DeadlineBacktestResult, wide: bool = False) -> None:
    """Per window (start time) and setting, each policy's cost (the mean over the home
    zones) and its distance from the optimum from the same start, then the mean."""
    frame = result.windows
    policies = list(dict.fromkeys(frame["policy"]))
    rows = []
    for (deadline, restart), part in frame.groupby(["deadline_hours", "restart_minutes"],
                                                   sort=False):
        by = part.set_index(["start", "policy"])
        for start in dict.fromkeys(part["start"]):
            for p in policies:
                row = by.loc[(start, p)]
                rows.append([f"{deadline:g} h", f"{restart:g} min",
                             f"{start:%Y-%m-%d %H:%M}", p, f"{row['cost_usd']:.2f}",
                             f"{row['vs_optimum'] - 1:+.1%}", str(int(row["misses"]))])
        means = part.groupby("policy", sort=False)["cost_usd"].mean()
        for p in policies:
            rows.append([f"{deadline:g} h", f"{restart:g} min", "mean", p,
                         f"{means[p]:.2f}", f"{means[p] / means[OPTIMUM] - 1:+.1%}",
                         str(int(part.loc[part["policy"] == p, "misses"].sum()))])
    console.print(table("Per window: USD per run (mean over the home zones)",
                        ["deadline", "restart", "window start", "policy", "USD",
                         "vs optimum", "late"], rows, detail=["late"], wide=wide))

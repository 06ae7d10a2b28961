"""`costsched prices ...`: import, show, history and export of the price history."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pandas as pd
import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from costsched.amounts import derived_prices, stored_prices
from costsched.bundled_prices import age_text
from costsched.cli.availability import availability_cmd
from costsched.cli.common import (
    DbOption,
    JsonOption,
    ListPricesDbOption,
    NewStoreOption,
    WideOption,
    WritesDbOption,
    announce_new_store,
    bar_hidden,
    console,
    err_console,
    fail,
    frame_records,
    friendly_errors,
    options,
    parse_time,
    print_json,
    say_list_prices,
    split_csv,
    table,
    user_text,
    writes_store,
)
from costsched.cli.gpus import SUPERSEDED_MARK, SUPERSEDED_NOTE
from costsched.clouds.hints import collect_hint
from costsched.model import InvalidInput
from costsched.service import export_prices, import_prices, price_history, prices
from costsched.service.prices import check_paths
from costsched.vocabulary import counted, word

app = typer.Typer(help="Price history: import recorded logs, show prices as of a time, export.",
                  no_args_is_help=True)

# Spot histories record changes only, but a price not seen for a week more likely means
# the collection stopped than that the price held still.
STALE_SPOT_AGE = pd.Timedelta(days=7)
GpuOption = Annotated[list[str] | None, typer.Option("--gpu", help="GPU model(s), e.g. V100.")]
CloudOption = Annotated[list[str] | None, typer.Option("--cloud", help="aws, gcp, azure.")]
RegionOption = Annotated[list[str] | None, typer.Option("--region", help="Region(s).")]


def _existing(typed: list[str]) -> list[Path]:
    """The paths to import, checked before the store is opened (or made). An empty one is
    refused: as a Path it would be the current folder, read whole."""
    try:
        if any(not p for p in typed):
            raise InvalidInput("paths '': expected a file or a directory of recorded logs")
        paths = [Path(p) for p in typed]
        check_paths(paths)
    except InvalidInput as exc:
        fail(exc)
    return paths


@app.command("import")
@friendly_errors
def import_(
    paths: Annotated[list[str], typer.Argument(help="Files or directories of recorded logs.",
                                               callback=_existing, is_eager=True)],
    trace_start: Annotated[str | None, typer.Option(
        "--trace-start", help="Start of spot traces whose folder names no day (ISO 8601); "
        "default midnight UTC of the day their folder names (aws-02-15-2023).",
        show_default=False)] = None,
    partial: Annotated[bool, typer.Option(
        "--partial", help="The files update some of a cloud's spot prices: the bundled spot "
        "offerings they do not list stay in plans. Prices of the files stored before are "
        "marked so too: importing a file again with --partial takes back its standing for "
        "the whole market. Without --partial or --whole, a cloud's imported spot prices "
        "stand for its whole spot market only if they list more than half of its bundled "
        "spot offerings.")] = False,
    whole: Annotated[bool, typer.Option(
        "--whole", help="The files hold each cloud's whole spot market, as a collection "
        "does: the bundled spot offerings they do not list are not offered. Prices of the "
        "files stored before as a partial update stand for the whole market too.")] = False,
    db: WritesDbOption = None,
    new_store: NewStoreOption = False,
    json_out: JsonOption = False,
) -> None:
    """Import recorded price logs (AWS spot history JSON, Azure daily CSV, exports), spot
    availability (spot traces, probe logs *.out) and booked capacity (EC2
    DescribeCapacityBlockOfferings and DescribeCapacityReservations JSON bodies)."""
    db = writes_store(db, new_store)
    if partial and whole:
        fail(InvalidInput("--partial and --whole ask for opposite readings of the files: give "
                          "one or neither (neither: whole only where they list most of a "
                          "cloud's bundled spot offerings)"))
    announce_new_store(db)
    with Progress(TextColumn("[bold]reading"), BarColumn(), MofNCompleteColumn(),
                  TextColumn("{task.description}"), TimeElapsedColumn(),
                  console=err_console, disable=bar_hidden(json_out), transient=True) as progress:
        task = progress.add_task("", total=None)

        def advance(done: int, total: int, path: Path) -> None:
            progress.update(task, completed=done, total=total,
                            description=user_text(path.name))

        with options(**{"trace start": "--trace-start"}):
            result = import_prices(db, paths, progress=advance, trace_start=trace_start,
                                   partial=True if partial else False if whole else None)
    summary = result.to_dict()
    hidden = []
    if result.inserted or result.marked_partial or result.marked_whole:  # what they hide
        from costsched.service.prices import hidden_snapshot

        hidden = [h for h in hidden_snapshot(db) if h.cloud in result.clouds]
    if json_out:
        print_json({**summary, "bundled_spot_left_out": [
            {"cloud": h.cloud, "offerings": h.offerings, "newest": h.dated} for h in hidden]})
    else:
        for error in result.errors:
            err_console.print(f"[red]error:[/red] {user_text(error)}", highlight=False,
                              soft_wrap=True)
        new = counted(result.inserted, "new row")
        if result.read or not (result.availability or result.booked_files):
            console.print(f"Imported {counted(result.files, 'file')}: "
                          f"{counted(result.read, 'observation')}, {new}, "
                          f"{result.unchanged:,} unchanged"
                          f"{_marked(result.marked_partial, result.marked_whole)}; "
                          f"{counted(len(result.errors), 'file')} rejected.",
                          highlight=False, markup=False)
        elif result.errors:
            console.print(f"{counted(len(result.errors), 'file')} rejected.", highlight=False,
                          markup=False)
        read = [r.note() for r in result.spot_readings] if result.inserted else []
        repriced = result.repriced_line()
        for note in [*(n for n in read if n), *(left.note() for left in hidden),
                     *([f"the import {repriced}"] if repriced else [])]:
            console.print(f"[yellow]note:[/yellow] {user_text(note)}", highlight=False,
                          soft_wrap=True)
        if result.availability:
            console.print(f"Spot availability: {counted(len(result.availability), 'file')}, "
                          f"{counted(result.intervals, 'interval')}, "
                          f"{result.intervals_inserted:,} new.",
                          highlight=False, markup=False)
        if result.booked_files:
            console.print(f"Booked capacity: {counted(len(result.booked_files), 'file')}, "
                          f"{counted(result.booked, 'offering')}, {result.booked_inserted:,} new "
                          "(`costsched plan` weighs them).", highlight=False, markup=False)
    if result.errors:  # bad input when no file was imported, else done in part
        raise typer.Exit(1 if result.files else 2)


def _marked(rows: int, whole: int = 0) -> str:
    """The import's words for stored prices it marked as a partial update (`rows`) or took
    that mark off (`whole`), if any."""
    if whole:
        return (f" ({whole:,} of them, stored as a partial update, now stand for their "
                "cloud's whole spot market)")
    if not rows:
        return ""
    return (f" ({rows:,} of them marked as a partial update: they no longer stand for "
            "their cloud's whole spot market)")


@app.command()
@friendly_errors
def show(
    gpu: GpuOption = None,
    cloud: CloudOption = None,
    region: RegionOption = None,
    market: Annotated[str | None, typer.Option(help="spot or on-demand.")] = None,
    at: Annotated[str | None, typer.Option(help="As of this time (ISO 8601); default now.")] = None,
    top: Annotated[int, typer.Option(help="Show at most this many rows (0: all).",
                                     min=0)] = 30,
    cheapest_per_gpu: Annotated[
        bool, typer.Option("--cheapest-per-gpu", help="Only the cheapest offering per GPU model.")
    ] = False,
    db: ListPricesDbOption = None,
    json_out: JsonOption = False,
    wide: WideOption = False,
) -> None:
    """Offerings sorted by price per GPU-hour, with the spot discount against on-demand."""
    when = parse_time(at)
    say_list_prices(db)
    with options(cloud="--cloud", market="--market", region="--region"):
        frame = prices(db, when, gpu_models=split_csv(gpu), clouds=split_csv(cloud),
                       regions=split_csv(region), markets=[market] if market else [],
                       cheapest_per_gpu=cheapest_per_gpu)
    if top:
        frame = frame.head(top)
    if json_out:
        print_json(frame_records(frame))
        return
    if frame.empty:
        asked = [f"{name} {', '.join(values)}" for name, values in (
            ("GPU", split_csv(gpu)), ("cloud", split_csv(cloud)), ("region", split_csv(region)),
            ("market", [market] if market else [])) if values]
        console.print(f"No prices match{' ' + user_text('; '.join(asked)) if asked else ''} "
                      f"as of {when:%Y-%m-%d %H:%M} UTC. `costsched prices import` or "
                      f"{user_text(collect_hint(split_csv(cloud)))} adds prices; `costsched "
                      "catalog` lists the "
                      "known offerings.", highlight=False, soft_wrap=True)
        return
    per_hour = stored_prices(list(frame["usd_per_hour"]))
    per_gpu = derived_prices(list(frame["usd_per_gpu_hour"]), list(frame["usd_per_hour"]))
    rows = [
        [f"{r.cloud} {r.zone or r.region}", r.instance_type, r.market.replace("_", "-"),
         f"{r.gpu_count}x{r.gpu_model}", price, gpu_price,
         "-" if pd.isna(r.spot_discount) else f"{r.spot_discount:.0%}",
         age_text(r.age_days) + (SUPERSEDED_MARK if r.superseded else ""),
         r.effective_at.strftime("%Y-%m-%d")]
        for r, price, gpu_price in zip(frame.itertuples(), per_hour, per_gpu, strict=True)
    ]
    title = (f"Prices as of {when:%Y-%m-%d %H:%M} UTC, current before superseded, cheapest "
             "per GPU-hour first")
    console.print(table(title, ["where", "instance type", "market", "GPUs", "$/h", "$/GPU-h",
                                "spot disc.", "age", "since"], rows,
                        detail=["since", "spot disc.", "GPUs"], wide=wide), soft_wrap=wide)
    if frame["superseded"].any():
        console.print(SUPERSEDED_NOTE, highlight=False, soft_wrap=True, markup=False)
    stale = frame[(frame["market"] == "spot")
                  & (pd.Timestamp(when) - frame["effective_at"] > STALE_SPOT_AGE)]
    if len(stale):
        console.print(f"[yellow]note:[/yellow] {counted(len(stale), 'spot price')} "
                      f"{'was' if len(stale) == 1 else 'were'} last observed "
                      f"more than {STALE_SPOT_AGE.days} days before this time (see 'since'); "
                      f"{user_text(collect_hint(sorted(set(stale['cloud']))))} refreshes them.",
                      highlight=False, markup=True)


@app.command()
@friendly_errors
def history(
    instance: Annotated[str, typer.Option("--instance", help="Instance type, e.g. p3.2xlarge.")],
    region: RegionOption = None,
    market: Annotated[str | None, typer.Option(help="spot or on-demand.")] = None,
    since: Annotated[str | None, typer.Option(help="From this time (ISO 8601).")] = None,
    until: Annotated[str | None, typer.Option(help="Up to this time (ISO 8601).")] = None,
    bundled: Annotated[bool, typer.Option(
        "--bundled/--stored-only", help="With the bundled catalog's dated prices, or only "
        "the store's.")] = True,
    db: ListPricesDbOption = None,
    json_out: JsonOption = False,
    wide: WideOption = False,
) -> None:
    """Every known price change of an instance type, oldest first: the store's and the
    bundled catalog's dated prices, each with its source."""
    if since and until and parse_time(since, "--since") >= parse_time(until, "--until"):
        raise InvalidInput(f"--since {since}: expected a time before --until {until} (the end "
                           "of the period)")
    say_list_prices(db)
    with options(since="--since", until="--until", market="--market", region="--region"):
        frame = price_history(db, instance, regions=split_csv(region),
                              markets=[market] if market else [], since=since or None,
                              until=until or None, bundled=bundled)
    if json_out:
        print_json(frame_records(frame))
        return
    if frame.empty:
        from costsched.catalog import instance_types
        from costsched.vocabulary import did_you_mean

        types = instance_types()["instance_type"]
        if instance in set(types):  # a known type: say where it has prices instead
            elsewhere = (sorted(set(price_history(db, instance, bundled=bundled)["region"]))
                         if region else [])
            hint = (f"; it has prices in {', '.join(elsewhere)}" if elsewhere else
                    f"; `costsched prices import` or {collect_hint()} adds prices")
        else:
            hint = did_you_mean(instance, types)
        raise InvalidInput(f"no {'known' if bundled else 'stored'} prices for instance type "
                           f"{instance!r}"
                           + (f" in {', '.join(split_csv(region))}" if region else "") + hint)
    rows = [[r.effective_at.strftime("%Y-%m-%d %H:%M:%S"), r.cloud, r.region, r.zone or "-",
             word(r.market), price,
             "" if r.last_seen_at == r.effective_at else r.last_seen_at.strftime("%Y-%m-%d"),
             r.source] for r, price in zip(frame.itertuples(),
                                           stored_prices(list(frame["usd_per_hour"])),
                                           strict=True)]
    console.print(table(f"Price history of {instance} ({counted(len(frame), 'change')})",
                        ["time (UTC)", "cloud", "region", "zone", "market", "$/h",
                         "seen until", "source"],
                        rows, detail=["source", "cloud", "seen until"], wide=wide),
                  soft_wrap=wide)


@app.command()
@friendly_errors
def export(
    path: Annotated[str, typer.Argument(help="Output file: .csv or .parquet.")],
    db: DbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Write the whole price history to a CSV or Parquet file that `prices import` reads."""
    if not path:
        raise InvalidInput("path '': expected a .csv or .parquet path")
    rows = export_prices(db, path)
    if json_out:
        print_json({"path": str(path), "rows": rows})
    else:
        console.print(f"Wrote {counted(rows, 'observation')} to {user_text(path)}", highlight=False)


app.command("availability")(availability_cmd)

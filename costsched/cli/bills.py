"""`costsched bills ...`: the clouds' billing exports, read into the store and matched to the
jobs' placements."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from costsched.amounts import CHARGED, decimals, stored_prices, total_as_written, usd, usd_all
from costsched.cli.common import (
    DbOption,
    JsonOption,
    NewStoreOption,
    WideOption,
    WritesDbOption,
    announce_new_store,
    console,
    fail,
    frame_records,
    friendly_errors,
    options,
    parse_time,
    print_json,
    report_cells,
    table,
    user_text,
    writes_store,
)
from costsched.model import InvalidInput
from costsched.service.stores import using
from costsched.vocabulary import counted, word

if TYPE_CHECKING:
    import pandas as pd

    from costsched.report.billed import BilledReport

app = typer.Typer(help="The clouds' billing exports: import them and match them to the jobs "
                  "(`report --billed` sets them beside the estimates).", no_args_is_help=True)


@app.command("import")
@friendly_errors
def import_(
    location: Annotated[str, typer.Argument(
        help="The export: s3://BUCKET/PREFIX (AWS Data Exports / CUR, CSV or Parquet), "
        "PROJECT.DATASET.gcp_billing_export_resource_v1_<ACCOUNT> (GCP's BigQuery export) "
        "or https://ACCOUNT.blob.core.windows.net/CONTAINER/PREFIX (Azure cost exports; a "
        "shared access signature in $AZURE_STORAGE_SAS_TOKEN), or an export file on this "
        "machine (a CUR file, .csv, .csv.gz or .parquet, or an Azure cost export's CSV).",
        show_default=False)],
    since: Annotated[str | None, typer.Option(
        help="BigQuery: the usage from this time (ISO 8601); default 35 days before --until.",
        show_default=False)] = None,
    until: Annotated[str | None, typer.Option(
        help="BigQuery: the usage before this time (ISO 8601); default now.",
        show_default=False)] = None,
    db: WritesDbOption = None,
    new_store: NewStoreOption = False,
    json_out: JsonOption = False,
) -> None:
    """Read a cloud's billing export into the store (the same export read again replaces
    what it stored, and per billing period only the newest delivery of an export that
    writes the period again on each run counts: nothing is counted twice), match every
    stored line to the jobs' placements (by instance, then costsched's tags or labels, then
    time; the unmatched are kept and counted), and record the billed compute rates that
    differ from the stored prices (bills.correct_prices)."""
    from costsched.bills.imports import import_export

    db = writes_store(db, new_store)
    for name, value in (("--since", since), ("--until", until)):
        if value is not None:
            parse_time(value, name)  # before the export is listed
    announce_new_store(db)
    with options(since="--since", until="--until"), using(db) as store:
        result = import_export(store, location, since=since, until=until)
    recorded = result.rates[result.rates["recorded"]] if len(result.rates) else result.rates
    if json_out:
        print_json({"cloud": result.cloud, "files": [{"source": s, "lines": n}
                                                      for s, n in result.files],
                    "lines": result.lines, "usd": result.usd, "matched": result.matched,
                    "unmatched": result.unmatched, "unmatched_usd": result.unmatched_usd,
                    "tagged": result.tagged,
                    "skipped": result.skipped, "dropped": result.dropped,
                    "dropped_lines": result.dropped_lines,
                    "rates": frame_records(result.rates)})
        return
    for source, count in result.files:
        console.print(Text(f"read {counted(count, 'line')} from {user_text(source)}"),
                      highlight=False)
    if result.skipped:
        console.print(Text(f"skipped {counted(len(result.skipped), 'superseded file')}: older "
                           "deliveries of a billing period whose newest delivery was read"),
                      highlight=False)
    if result.dropped:
        console.print(Text(f"dropped {counted(result.dropped_lines, 'stored line')} of "
                           f"{counted(len(result.dropped), 'file')} of older deliveries, "
                           "superseded by "
                           "the newest"), highlight=False)
    matched = ", ".join(f"{n} by {rule}" for rule, n in result.matched.items())
    billed, unmatched = usd_all(result.usd, result.unmatched_usd)
    console.print(Text(
        f"{result.cloud}: {counted(result.lines, 'line')}, {billed} billed; the store's "
        f"lines matched {matched}; {result.unmatched} unmatched ({unmatched}), kept"),
        highlight=False)
    if result.unmatched and not result.tagged:
        console.print(Text("no line carries costsched's tags or labels: on AWS, activate "
                           "costsched-job and costsched-attempt as cost allocation tags in "
                           "the Billing console"), highlight=False)
    if len(recorded):
        records = recorded.to_dict("records")
        estimated = stored_prices([r["estimated_usd_per_hour"] for r in records])
        billed_rates = stored_prices([r["billed_usd_per_hour"] for r in records])
        rows = [[Text(str(r["placement_id"])), Text(f"{r['cloud']} {r['region']} "
                                                     f"{r['instance_type']} {word(r['market'])}"),
                 Text(e), Text(b)]
                for r, e, b in zip(records, estimated, billed_rates, strict=True)]
        console.print(table("Billed compute rates recorded as prices (source bill)",
                            ["placement", "offering", "estimated $/h", "billed $/h"], rows))


_LINE_SHOWN = ["usage_start", "cloud", "category", "resource_id", "usage_type", "usd",
               "currency", "job_id", "matched_by", "source"]


@app.command("lines")
@friendly_errors
def lines_cmd(
    since: Annotated[str | None, typer.Option(
        help="Lines whose usage starts at or after this time (ISO 8601).",
        show_default=False)] = None,
    until: Annotated[str | None, typer.Option(
        help="Lines whose usage starts before this time (ISO 8601).", show_default=False)
    ] = None,
    unmatched: Annotated[bool, typer.Option(
        "--unmatched", help="Only the lines matched to no job.")] = False,
    limit: Annotated[int, typer.Option(
        help="At most this many lines, the largest in USD first (0: all).", min=0)] = 50,
    db: DbOption = None,
    wide: WideOption = False,  # read by common.table
    json_out: JsonOption = False,
) -> None:
    """The stored bill lines, the largest first, with the job each was matched to and by
    which rule (instance, tags, time)."""
    from costsched.service.values import as_time
    from costsched.store.bills import BillStore

    with options(since="--since", until="--until"), using(db) as store:
        found = BillStore(store.engine).lines(
            since=None if since is None else as_time(since, "since"),
            until=None if until is None else as_time(until, "until"))
    if unmatched:
        found = found[found["placement_id"].isna()]
    total = len(found)
    found = found.reindex(found["usd"].abs().sort_values(ascending=False).index)
    shown = found.head(limit) if limit else found
    if json_out:
        print_json({"lines": total, "shown": frame_records(shown)})
        return
    # Billed money reads as the cost report's charges do (CHARGED, zero too), the total
    # the sum of the lines as written.
    from costsched.report.html import table_places

    places = table_places(found[_LINE_SHOWN])
    places["usd"] = max(places["usd"], CHARGED.usd)
    billed = usd(total_as_written(list(found["usd"]), places["usd"]) if total else 0.0,
                 places["usd"])
    console.print(Text(f"{counted(total, 'line')}, {billed}"
                       + (f"; the {len(shown)} largest" if len(shown) < total else "")),
                  highlight=False)
    if shown.empty:
        return
    headings, rows = report_cells(shown, _LINE_SHOWN, places)
    console.print(table("Bill lines", headings, rows, detail=list(reversed(headings[4:]))))


# --- report --billed ------------------------------------------------------------------

_BILLED_TABLES = [  # (attribute, title, columns left out of the terminal)
    ("jobs", "Billed against estimated, per job (flagged past {threshold:.0%})", []),
    ("days", "Billed against estimated, per job and day (UTC)", ["job_id"]),
    ("unmatched", "Billed lines matched to no job, kept", []),
    ("rates", "Billed compute rate per placement", ["job_id", "zone", "os", "gpu_model",
                                                    "gpu_count", "start_at", "end_at",
                                                    "recorded"]),
]


def _line_places(built: BilledReport, figures: list[float]) -> int:
    """The decimals of the totals line: its own (`usd_all`'s), no fewer than the tables
    it sums (the jobs', the unmatched lines'), so that it reads against their figures
    ('$0.0612' above a column of '$0.0541' and '$0.0071', not '$0.06'), nor than the
    cost report's scale (`_scaled`)."""
    places = [decimals(figures)] + ([] if built.scale is None else [built.scale.usd])
    for frame in (built.jobs, built.unmatched):
        if not frame.empty:
            places.append(_scaled(built, frame)["usd"])
    return max(places)


def _scaled(built: BilledReport, frame: pd.DataFrame) -> dict[str, int]:
    """A table's precision (`table_places`), its money at no fewer decimals than the cost
    report's scale (`Report.scale`): the estimate is the report's charges, written as the
    report writes them ('$0.00651', never '$0.01' beside a report at five decimals)."""
    from costsched.report.html import table_places

    places = table_places(frame)
    if built.scale is not None:
        places["usd"] = max(places["usd"], built.scale.usd)
    return places


def _nothing_compared(imported: int) -> str:
    """Why `report --billed` compares nothing, and what imports the bills it needs."""
    if not imported:
        return ("nothing compared: no bills are imported; `costsched bills import` imports "
                "the clouds' exports")
    return ("nothing compared: no imported export covers a day of this period; "
            "`costsched bills import` imports newer exports")


def print_billed(db: str | None, *, since: str | None, until: str | None, job: str | None,
                 json_out: bool, html: Path | None = None) -> None:
    """`report --billed`: the bill beside the estimate, per job and day, itemised."""
    if html is not None:
        fail(InvalidInput("--html: not with --billed; expected one of them"))
    from costsched.report.billed import build_billed
    from costsched.report.cells import period_words

    with options(since="--since", until="--until", job="--job"), using(db) as store:
        built = build_billed(store, since=since, until=until, job=job)
    if json_out:
        print_json({"since": built.since, "until": built.until, "placed": built.placed,
                    "threshold": built.threshold, "totals": built.totals,
                    **{name: frame_records(getattr(built, name))
                       for name, _, _ in _BILLED_TABLES}})
        return
    totals = built.shown_totals  # the estimate as the cost report writes it
    since = None if built.since is None else f"{built.since:%Y-%m-%d %H:%M}"
    console.print(Text("Billed against estimated: " + period_words(
        since, f"{built.until:%Y-%m-%d %H:%M} UTC", built.placed)), highlight=False)
    figures = [totals[k] for k in ("estimated_usd", "billed_usd", "difference_usd",
                                   "unmatched_usd")]
    estimated, billed, difference, unmatched = (usd(v, _line_places(built, figures))
                                                for v in figures)
    if built.jobs.empty and built.unmatched.empty:  # no bill line in the period: why
        console.print(Text(_nothing_compared(built.imported)), highlight=False)
    else:
        console.print(Text(
            f"estimated {estimated}, billed {billed}, difference {difference}; "
            f"{counted(totals['flagged_jobs'], 'job')} flagged; "
            f"{counted(totals['unmatched_lines'], 'line')} "
            f"({unmatched}) matched to no job"), highlight=False)
    if totals["not_covered_usd"]:
        covered = usd(totals["not_covered_usd"], _line_places(built, figures))
        console.print(Text(f"not compared: {covered} estimated on "
                           "days no imported export covers"), highlight=False)
    if totals["other_currency_lines"]:
        other = counted(totals["other_currency_lines"], "line")
        console.print(Text(f"not added: {other} billed in another currency than USD"),
                      highlight=False)
    for name, title, hidden in _BILLED_TABLES:
        frame = built.shown(name)
        if frame.empty:
            continue
        shown = [c for c in frame.columns if c not in hidden]
        headings, rows = report_cells(frame, shown, _scaled(built, frame[shown]))
        console.print(table(title.format(threshold=built.threshold), headings, rows,
                            detail=list(reversed(headings[3:]))))

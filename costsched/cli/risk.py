"""`costsched risk ...`: the published spot risk signals in the store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from costsched.cli.common import (
    EmptyDbOption,
    JsonOption,
    NewStoreOption,
    WritesDbOption,
    announce_new_store,
    console,
    frame_records,
    friendly_errors,
    options,
    print_json,
    say_no_store,
    table,
    user_text,
    writes_store,
)
from costsched.model import InvalidInput
from costsched.service import signals as service

app = typer.Typer(help="Published spot risk signals: Spot Instance Advisor buckets, spot "
                  "placement scores, Azure eviction rates.", no_args_is_help=True)


@app.command("import")
@friendly_errors
def import_(
    path: Annotated[str, typer.Argument(help="A saved signal document.")],
    kind: Annotated[str, typer.Option(help="advisor (spot-advisor-data.json) | placement "
                                      "(GetSpotPlacementScores answers with InstanceType) | "
                                      "eviction (a Resource Graph answer).")],
    at: Annotated[str | None, typer.Option(help="When the document was published (ISO "
                                           "8601; default now).", show_default=False)] = None,
    db: WritesDbOption = None,
    new_store: NewStoreOption = False,
    json_out: JsonOption = False,
) -> None:
    """Store a saved signal document's observations (history is kept)."""
    db = writes_store(db, new_store)
    if not path:  # as a Path, the current folder
        raise InvalidInput("path '': expected a saved JSON document")
    with options(kind="--kind", at="--at"):
        frame = service.read_signals(Path(path), kind, at)
    announce_new_store(db)  # (a document refused above makes none)
    read, added = len(frame), service.add_signals(db, frame)
    if json_out:
        print_json({"file": str(path), "read": read, "added": added})
        return
    console.print(f"{user_text(path)}: {read} observations, {added} new", highlight=False)


@app.command("show")
@friendly_errors
def show(
    at: Annotated[str | None, typer.Option(help="As of this time (default now).",
                                           show_default=False)] = None,
    cloud: Annotated[str | None, typer.Option(help="One cloud: aws, gcp or azure (any case).",
                                              show_default=False)] = None,
    history: Annotated[bool, typer.Option("--history", help="Every stored observation.")
                       ] = False,
    db: EmptyDbOption = None,
    json_out: JsonOption = False,
) -> None:
    """The newest signal per offering and kind, with the prior rate it maps to."""
    with options(at="--at", cloud="--cloud"):
        frame = service.signals(db, at, history=history, cloud=cloud)
    say_no_store(db)
    if json_out:
        print_json({"signals": frame_records(frame)})
        return
    if frame.empty:  # an empty table tells nothing of where signals come from
        console.print("No spot risk signals stored"
                      + (f" for {cloud}" if cloud else "")
                      + (f" as of {at}" if at else "" if cloud else " yet")
                      + "; `costsched risk import FILE --kind KIND` stores a saved document: "
                      "advisor (Spot Instance Advisor), placement (spot placement scores) or "
                      "eviction (Azure eviction rates).",
                      highlight=False, markup=False)
        return
    rows = [[r.cloud, r.region + (f" {r.zone}" if r.zone else ""), r.instance_type, r.os,
             r.kind, r.label, f"{r.prior_per_hour:.4f}", f"{r.observed_at:%Y-%m-%d %H:%M}",
             r.source] for r in frame.itertuples()]
    console.print(table(f"Spot risk signals: {len(frame)}",
                        ["cloud", "where", "type", "OS", "kind", "bucket", "prior/h",
                         "observed", "source"], rows))

"""`costsched collect`: today's prices from AWS, GCP and Azure, into the price store."""

from __future__ import annotations

import logging
import sys
from collections.abc import Sequence
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from costsched.cli.collect_store import NewStore
from costsched.cli.common import (
    JsonOption,
    NewStoreOption,
    WritesDbOption,
    bar_hidden,
    console,
    err_console,
    friendly_errors,
    options,
    print_json,
    say_error,
    split_csv,
    table,
    user_text,
    writes_store,
)
from costsched.service.collect import collect_request, run_collection
from costsched.vocabulary import counted

FLAGS = {"cloud": "--cloud", "region": "--region", "since": "--since", "workers": "--workers"}


@friendly_errors
def collect(
    cloud: Annotated[list[str] | None, typer.Option(
        "--cloud", help="aws, gcp, azure (comma-separated or repeated; default: all).")] = None,
    region: Annotated[list[str] | None, typer.Option(
        "--region", help="Only these regions (us-east-1, us-central1, eastus...).")] = None,
    gpu: Annotated[list[str] | None, typer.Option(
        "--gpu", help="Only the instance types of these GPU models (V100, A100...).")] = None,
    since: Annotated[str | None, typer.Option(
        help="AWS spot history from this time (ISO 8601); default: the newest stored time "
             "of each region, or 7 days ago.")] = None,
    gcp_project: Annotated[str | None, typer.Option(
        "--gcp-project", help="Project whose accelerator availability is read "
                              "(default: GOOGLE_CLOUD_PROJECT or the credentials').")] = None,
    workers: Annotated[int, typer.Option(help="Regions collected at once, per cloud.")] = 32,
    booked: Annotated[bool, typer.Option(
        "--booked", help="Also the booked capacity: EC2 capacity blocks on sale that fit "
        "the running jobs and the --gpu models, and the reservations the account and the "
        "GCP project hold.")] = False,
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="Log every rejected price and failed region.")] = False,
    db: WritesDbOption = None,
    new_store: NewStoreOption = False,
    json_out: JsonOption = False,
) -> None:
    """Collect current on-demand and spot GPU prices and store what is new.

    Exit code 0 when every cloud and region was collected, 1 when some failed (the
    others are stored), 2 for bad options.
    """
    db = writes_store(db, new_store)
    clouds, regions, gpus = split_csv(cloud), split_csv(region), split_csv(gpu)
    with options(**FLAGS):
        request = collect_request(clouds=clouds, regions=regions, gpus=gpus, since=since,
                                  gcp_project=gcp_project, workers=workers)
    # The options checked first: a refusal makes no store; nor does a collection that
    # stores nothing (kept: said once it stored something).
    new = NewStore(db)
    logger = logging.getLogger("price_collectors")
    level = logger.level
    handler = _log_to_stderr(logger) if verbose else None
    try:
        with Progress(TextColumn("[bold]{task.fields[cloud]:<6}"), BarColumn(),
                      MofNCompleteColumn(), TextColumn("{task.description}"),
                      TimeElapsedColumn(), console=err_console, disable=bar_hidden(json_out),
                      transient=False) as progress:
            tasks = {name: progress.add_task("planning...", total=None, cloud=name)
                     for name in request.clouds}
            failures: dict[str, int] = dict.fromkeys(request.clouds, 0)

            def planned(name: str, units: Sequence[str]) -> None:
                progress.update(tasks[name], total=len(units), description="")

            def advanced(name: str, unit: str, error: str | None) -> None:
                failures[name] += error is not None
                failed = f" [red]{failures[name]} failed[/red]" if failures[name] else ""
                progress.update(tasks[name], advance=1,
                                description=f"{user_text(unit)}{failed}")

            summary = run_collection(db, request, progress=advanced, planned=planned)
            for name, task in tasks.items():
                error = summary.clouds[name].error
                if error:
                    progress.update(task, total=1, completed=0, description="[red]not run")
    finally:
        if handler:
            logger.removeHandler(handler)
            logger.setLevel(level)

    found = _collect_booked(db, request, gpus) if booked else None
    kept = new.settle(bool(summary.inserted or summary.unchanged or found and found.added
                           or any(r.read for r in summary.quotas.values())))
    if json_out:
        out = summary.to_dict()
        if not kept:  # a store not kept is named by no path: the note says so instead
            out["store"] = None
        out["store_note"] = None if kept else new.not_kept()
        print_json({**out, **({"booked": found.to_dict()} if found else {})})
        if not kept:
            err_console.print(new.not_kept(), highlight=False, markup=False, soft_wrap=True)
    else:
        _print_summary(summary, None if kept else new.not_kept())
        if found is not None:
            said = {c.error for c in summary.clouds.values() if c.error}
            for line in (e for e in found.errors if e not in said):  # each line said once
                err_console.print(f"[red]failed:[/red] {user_text(line)}", highlight=False,
                                  soft_wrap=True)
            console.print(f"Booked capacity: {counted(found.offerings, 'offering')} found in "
                          f"{counted(found.asked, 'ask')}, {found.added:,} new",
                          highlight=False, markup=False)
    if not summary.ok:
        nothing = _nothing_collected(summary, clouds, regions, gpus)
        if nothing:
            say_error(nothing)
        raise typer.Exit(1)


def _nothing_collected(summary, clouds: list[str], regions: list[str],  # noqa: ANN001 - runner.RunSummary
                       gpus: list[str]) -> str:
    """The last line of a collection that could run no cloud asked because none has its
    SDK installed here: that nothing was collected, and the install, then the same
    collect, that works; '' otherwise (each cloud's line says why it failed)."""
    from costsched.clouds.hints import PRICES_WITH, collect_command, lacking

    asked = list(summary.clouds)
    offline = _offline(summary)
    if offline:
        return (f"nothing collected: {offline}; check this machine's network, DNS and proxy "
                "(HTTPS_PROXY), then collect again")
    if not asked or any(not c.error for c in summary.clouds.values()) \
            or lacking(asked, PRICES_WITH) != asked:
        return ""
    named = " or ".join([", ".join(asked[:-1]), asked[-1]] if len(asked) > 1 else asked)
    return (f"nothing collected: no SDK of {named} is installed here; "
            f"`{collect_command(clouds, regions, gpus)}` collects")


def _offline(summary) -> str:  # noqa: ANN001 - runner.RunSummary
    """'no network: prices.azure.com does not resolve (DNS)' (each host once) where nothing
    was collected and every failure was a host that did not resolve; '' otherwise."""
    from price_collectors.network import offline

    if any(c.collected for c in summary.clouds.values()):
        return ""
    return offline([c.error for c in summary.clouds.values() if c.error]
                   + [m for c in summary.clouds.values() for m in c.failed.values()]) or ""


def _collect_booked(db, request, gpus: list[str]):  # noqa: ANN001, ANN202
    """`collect_booked` of the clouds and regions asked for (GCP's reservations in the
    project collected)."""
    from costsched.service.booked_collect import collect_booked
    from costsched.service.values import as_time

    gce = None
    if "gcp" in request.clouds:
        def gce():  # noqa: ANN202 - the project's reservations, every zone
            from costsched.clouds.gcp import credentials_and_project, reservations_client

            credentials, project = credentials_and_project(request.gcp_project)
            return reservations_client(credentials).aggregated_list(project=project)
    aws_regions = request.regions.get("aws", [])
    return collect_booked(db, at=as_time(None), regions=aws_regions, gpus=gpus,
                          clouds=[c for c in request.clouds if c in ("aws", "gcp")],
                          gce_reservations=gce)


def _print_summary(summary, not_kept: str | None = None) -> None:  # noqa: ANN001 - runner.RunSummary
    """The collection's table and lines; `not_kept`: why no store was made, said where
    the store's path is."""
    rows = []
    for name, c in summary.clouds.items():
        rejected = ", ".join(f"{k} {v}" for k, v in c.rejected_by_reason.items())
        rows.append([name, str(len(c.regions)), f"{c.collected:,}",
                     f"{c.rejected:,}" + (f" ({rejected})" if rejected else ""),
                     str(len(c.failed)) if not c.error else "-", _status(c)])
    console.print(table("Collected prices", ["cloud", "regions", "prices", "rejected", "failed",
                                             "status"], rows))
    for name, c in summary.clouds.items():
        if c.error:
            err_console.print(f"[red]error:[/red] {user_text(c.error)}", highlight=False,
                              soft_wrap=True)
        for message, units in by_cause(c.failed).items():  # each cause said once
            err_console.print(f"[red]failed:[/red] {user_text(f'{name} {units}: {message}')}",
                              highlight=False, soft_wrap=True)
    for name, read in summary.quotas.items():
        if read.error:
            from costsched.service.quotas import read_problem

            err_console.print(user_text(read_problem(name, read.error, read.fix or "")),
                              highlight=False, soft_wrap=True)
        else:
            console.print(f"quotas: {name}: {read.read:,} read", highlight=False, markup=False)
    collected = sum(c.collected for c in summary.clouds.values())
    new = (f"{summary.inserted:,} new rows" if summary.inserted
           else "0 new rows (nothing changed since the last collection)" if collected
           else "0 new rows")
    console.print(f"Stored {new}, {summary.unchanged:,} unchanged, {summary.rejected:,} "
                  f"rejected; {user_text(not_kept or f'store: {summary.store}')}",
                  highlight=False)


UNITS_NAMED = 3  # the failed units a line of one cause names (the rest counted)


def by_cause(failed: dict[str, str]) -> dict[str, str]:
    """The failed units of a cloud by cause (their message): message -> 'H100', 'A100, H100
    and L4', 'A100, H100, L4 and 3 more'."""
    grouped: dict[str, list[str]] = {}
    for unit, message in failed.items():
        grouped.setdefault(message, []).append(unit)
    out = {}
    for message, units in grouped.items():
        named, more = units[:UNITS_NAMED], len(units) - UNITS_NAMED
        out[message] = (", ".join(named) + f" and {more} more" if more > 0 else
                        " and ".join([", ".join(named[:-1]), named[-1]]) if len(named) > 1
                        else named[0])
    return out


def _status(c) -> str:  # noqa: ANN001 - runner.CloudSummary
    if c.error:
        return "not run"
    if not c.failed:
        return "ok"
    return "failed" if len(c.failed) == c.units else "partial"


def _log_to_stderr(logger: logging.Logger) -> logging.Handler:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    return handler

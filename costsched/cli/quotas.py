"""`costsched quotas`: the accounts' quotas GPU instances draw on, per region, with limit,
use and age (as `collect` last read them, or read now with --refresh); `check` shows the
same table in short."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import pandas as pd
import typer

from costsched.amounts import age
from costsched.cli.collect_store import NewStore
from costsched.cli.common import (
    IN_MEMORY,
    JsonOption,
    NewStoreOption,
    WritesDbOption,
    console,
    err_console,
    friendly_errors,
    options,
    print_json,
    reads_store,
    split_csv,
    table,
    user_text,
    writes_store,
)
from costsched.clouds.hints import CLOUD_NAMES, QUOTAS_WITH, collect_hint, lacking
from costsched.service.quotas import (
    QuotaFacts,
    none_read,
    read_problem,
    refresh,
    refresh_line,
)
from costsched.service.stores import open_store
from costsched.service.values import as_time
from costsched.vocabulary import counted

TABLE_COLUMNS = ["cloud", "region", "quota", "unit", "limit", "used", "free", "age h", "refused"]


@friendly_errors
def quotas(
    cloud: Annotated[list[str] | None, typer.Option(
        "--cloud", help="aws, gcp, azure (comma-separated or repeated; default: all).")] = None,
    region: Annotated[list[str] | None, typer.Option(
        "--region", help="Only these regions (and the project-wide quotas).")] = None,
    refresh_now: Annotated[bool, typer.Option(
        "--refresh", help="Read the quotas from the clouds now (else: as `costsched collect` "
                          "last read them).")] = False,
    every: Annotated[bool, typer.Option(
        "--all", help="Every quota read: those at 0 too, and the standard and CPU families "
                      "GPU instances do not draw on.")] = False,
    gcp_project: Annotated[str | None, typer.Option(
        "--gcp-project", help="With --refresh: the project whose quotas are read (default: "
                              "GOOGLE_CLOUD_PROJECT or the credentials').",
        show_default=False)] = None,
    db: WritesDbOption = None,
    new_store: NewStoreOption = False,
    json_out: JsonOption = False,
) -> None:
    """The accounts' quotas that GPU instances draw on, per region and market, with their
    limit, use and age (as `collect` read them, or now with --refresh); plans rank
    offerings over quota behind those that fit.

    Those at 0 are counted (--all lists them). A cloud whose quotas could not be read says
    why in one line (the permission that is missing, the SDK to install). Exit code 0 when
    the quotas of at least one cloud asked for were read (now with --refresh, else as
    last read), 1 when none could be."""
    # Without --refresh it only reads: a --db that does not exist is a typo, as for `status`.
    db = writes_store(db, new_store) if refresh_now or db is None else reads_store(db)
    clouds, regions = split_csv(cloud), split_csv(region)
    with options(cloud="--cloud", region="--region"):
        from costsched.service.collect import route_regions

        route_regions(regions, clouds)  # the names checked as `collect` checks them, first
    # A store made only to be kept: by a refresh that read quotas (none yet: none read).
    new = NewStore(db)
    store = open_store(db if refresh_now or new.path is None else IN_MEMORY)
    read: dict = {}
    if refresh_now:
        with options(cloud="--cloud", region="--region"):
            read = refresh(store, clouds=clouds, regions=regions, gcp_project=gcp_project)
    now = as_time(None)
    facts = QuotaFacts.of(store)
    if refresh_now and new.path is not None:
        store.dispose()  # (its facts are read)
        new.settle(any(r.read for r in read.values()))
    shown = facts.table(now, clouds=clouds, regions=regions, every=True)
    if json_out:
        print_json({"at": now, "quotas": quota_records(shown),
                    "reads": read_records(facts, clouds),
                    "refreshed": {c: r.to_dict() for c, r in read.items()}})
    elif facts.quotas.empty and facts.reads.empty:
        also = ("" if lacking(clouds or CLOUD_NAMES, QUOTAS_WITH)  # (the install said once)
                else f" (and {collect_hint(clouds)} with the prices)")
        console.print(f"No quotas read yet; {refresh_line(clouds)}{also}.", highlight=False,
                      markup=False)
    else:
        print_table(facts, now, clouds=clouds, regions=regions, every=every)
    if none_read(read_records(facts, clouds)):  # (those read now, with --refresh)
        raise typer.Exit(1)


def quota_records(frame: pd.DataFrame) -> list[dict]:
    """The table's rows as JSON records (times ISO 8601, unknown figures null)."""
    out = []
    for r in frame.to_dict("records"):
        out.append({k: (None if v is None or (not isinstance(v, str) and pd.isna(v)) else v)
                    for k, v in r.items()})
    return out


def read_records(facts: QuotaFacts, clouds: list[str]) -> list[dict]:
    """How each cloud's quotas were last read (and, for one never read, that it was not)."""
    reads = facts.reads
    if clouds:
        reads = reads[reads["cloud"].isin(clouds)]
    return quota_records(reads)


def print_table(facts: QuotaFacts, at: datetime, *, clouds: list[str] = (),
                regions: list[str] = (), every: bool = False, title: str = "Quotas") -> None:
    """The quotas GPU instances draw on (`every`: all of them, those at 0 too), then one
    line per cloud whose quotas could not be read or were never read."""
    frame = facts.table(at, clouds=clouds, regions=regions, every=every)
    zero = (frame["limit"].fillna(0) <= 0) & (frame["used"].fillna(0) <= 0) \
        & frame["refused"].isna()
    hidden = int(zero.sum()) if not every else 0
    shown = frame if every else frame[~zero]
    rows = [[r.cloud, r.scope, f"{r.name} ({r.code})" if r.name and r.name != r.code
             else r.code, r.unit, _figure(r.limit), _figure(r.used), _figure(r.free),
             _figure(r.age_hours), _refused(r.refused, r.refused_at, r.observed_at, at)]
            for r in shown.itertuples()]
    if rows:
        console.print(table(title, TABLE_COLUMNS, rows, detail=["refused", "unit"]))
    if hidden:
        console.print(f"  {counted(hidden, 'quota')} at 0 not shown (`costsched quotas --all` "
                      "lists them)", highlight=False, markup=False)
    for _, line in cloud_lines(facts, clouds):
        err_console.print(user_text(line), highlight=False, soft_wrap=True)


def cloud_lines(facts: QuotaFacts, clouds: list[str] = ()) -> list[tuple[str, str]]:
    """(cloud, line) for each cloud whose last reading failed (in part), and for each one
    asked for that was never read."""
    out = []
    reads = facts.reads.set_index("cloud") if len(facts.reads) else None
    for cloud in clouds or sorted(set(facts.reads["cloud"])):
        if reads is None or cloud not in reads.index:
            out.append((cloud, f"{cloud} quotas: never read; {refresh_line([cloud])}"))
            continue
        r = reads.loc[cloud]
        if r["error"]:
            out.append((cloud, read_problem(cloud, r["error"], r["fix"] or "")))
    return out


def _figure(value: object) -> str:
    return "-" if value is None or pd.isna(value) else f"{float(value):,.6g}"


def _refused(value: object, when: object, read: object, at: datetime) -> str:
    """A launch the quota refused since it was read ('' when none did)."""
    if when is None or pd.isna(when) or (read is not None and not pd.isna(read)
                                         and when <= read):
        return ""
    seconds = (pd.Timestamp(at) - pd.Timestamp(when)).total_seconds()
    size = "" if value is None or pd.isna(value) else f"{float(value):g} "
    return f"{size}at launch {age(seconds)} ago"

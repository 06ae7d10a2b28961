"""`bills import`: read a cloud's billing export, store its lines (replacing what the same
export stored before), match every stored line to the placements, and record the billed
compute rates that correct the stored prices."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import pandas as pd

from costsched.bills import match as matching
from costsched.bills import rates
from costsched.bills.deliveries import Scan
from costsched.model import InvalidInput
from costsched.store import PriceStore
from costsched.store.bills import BillStore, stored_source
from costsched.validation import as_time

DEFAULT_DAYS = 35  # a BigQuery window without --since: the last month and some


@dataclass(frozen=True)
class ImportResult:
    """What an import read and matched. files: (source, lines read) each; matched: lines
    per rule over every stored line; rates: the placements' billed compute rates
    (`rates.RATE_COLUMNS`, `recorded` where a price was stored); skipped, dropped: the
    files of older deliveries of a billing period left unread, and those whose stored
    lines were deleted (`costsched.bills.deliveries`)."""

    cloud: str
    files: list[tuple[str, int]]
    lines: int
    usd: float
    matched: dict[str, int]
    unmatched: int
    unmatched_usd: float
    rates: pd.DataFrame = field(repr=False)
    tagged: int = 0  # lines read that carry costsched's tags or labels
    # Cumulative exports: files of older deliveries of a billing period, not read, and the
    # stored files of older deliveries whose lines were deleted (with how many lines).
    skipped: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    dropped_lines: int = 0


def cloud_of(location: str) -> str:
    """The cloud whose export `location` is: s3:// (AWS), a BigQuery table (GCP), an
    https:// storage container (Azure), or 'file' for an export file on this machine
    (`bills.local`: its columns say whose)."""
    from costsched.bills.local import is_local

    if is_local(location):
        return "file"
    if location.startswith("s3://"):
        return "aws"
    if location.startswith(("https://", "http://")):
        return "azure"
    if "gcp_billing_export" in location:
        return "gcp"
    raise InvalidInput(f"export {location!r}: expected s3://BUCKET/PREFIX (AWS Data "
                       "Exports), PROJECT.DATASET.gcp_billing_export_resource_v1_<ACCOUNT> "
                       "(GCP's BigQuery export), https://ACCOUNT.blob.core.windows.net/"
                       "CONTAINER/PREFIX (Azure cost exports) or an export file on this "
                       "machine (a CUR or an Azure cost export: .csv, .csv.gz, .parquet)")


def import_export(store: PriceStore, location: str, *, since: datetime | str | None = None,
                  until: datetime | str | None = None, now: datetime | str | None = None,
                  correct_prices: bool | None = None, rate_tolerance: float | None = None,
                  client: Any = None) -> ImportResult:
    """Import the export at `location` (see `cloud_of`). A file export (in a bucket, a
    container or on this machine) is read whole; a BigQuery export over the usage that
    started in [since, until) (default: the last 35 days to `now`). `client`: the
    cloud's client to read through (an S3 client, a BigQuery client, a requests session);
    default: one from the environment's credentials.
    `correct_prices`, `rate_tolerance`: whether and past what share a billed compute rate is
    stored as a price (default: the configuration's `bills` section)."""
    cloud = cloud_of(location)
    if correct_prices is None or rate_tolerance is None:
        from costsched.config import effective

        settings = effective().bills
        correct_prices = settings.correct_prices if correct_prices is None else correct_prices
        rate_tolerance = settings.rate_tolerance if rate_tolerance is None else rate_tolerance
    at = pd.Timestamp(as_time(now, "now"))
    bills = BillStore(store.engine)
    read: list[tuple[str, int]] = []
    skipped: list[str] = []
    dropped: list[str] = []
    dropped_lines = 0
    if cloud == "file":  # read as the cloud's own export is
        from costsched.bills.local import read_file

        cloud, source, lines = read_file(location)
        bills.replace(source, lines, at=at.to_pydatetime())
        read.append((source, len(lines)))
    elif cloud == "gcp":
        from costsched.bills.gcp import read_bigquery

        hi = pd.Timestamp(as_time(until, "until")) if until is not None else at
        lo = pd.Timestamp(as_time(since, "since")) if since is not None else \
            hi - timedelta(days=DEFAULT_DAYS)
        if lo >= hi:
            raise InvalidInput(f"since {lo:%Y-%m-%dT%H:%MZ}: expected a time before "
                               f"{hi:%Y-%m-%dT%H:%MZ} (the end of the window)")
        lines = read_bigquery(location, lo.to_pydatetime(), hi.to_pydatetime(), client)
        source = f"bigquery:{location.strip('`')}"
        bills.replace(source, lines.assign(source=source), at=at.to_pydatetime(),
                      window=(lo.to_pydatetime(), hi.to_pydatetime()))
        read.append((source, len(lines)))
    else:
        # Every file is read and checked before any is stored: a bad file stores nothing.
        scan = _scan(cloud, location, client)
        files = list(scan.lines())
        for source, lines in files:
            bills.replace(source, lines, at=at.to_pydatetime())
            read.append((source, len(lines)))
        skipped = scan.skipped
        dropped, dropped_lines = _drop_superseded(bills, scan.current)
    stored = bills.lines()
    mine = stored[stored["source"].isin([stored_source(s) for s, _ in read])]
    matched = _rematch(store, bills, stored, at)
    found = stored.assign(**{c: matched[c].to_numpy() for c in
                             ("placement_id", "job_id", "matched_by")})
    billed = rates.billed_rates(store, found, store.jobs.placements(), at)
    if correct_prices and not billed.empty:
        billed = rates.correct(store, billed, rate_tolerance)
    counts = matched["matched_by"].value_counts().to_dict()
    loose = found[found["placement_id"].isna()]
    return ImportResult(
        cloud=cloud, files=read, lines=len(mine), usd=float(mine["usd"].sum()),
        matched={r: int(counts.get(r, 0)) for r in ("instance", "tags", "time")},
        unmatched=len(loose), unmatched_usd=float(loose["usd"].sum()), rates=billed,
        tagged=int(((mine["job_tag"] != "") | (mine["attempt_tag"] != "")).sum()),
        skipped=skipped, dropped=dropped, dropped_lines=dropped_lines)


def rematch(store: PriceStore, now: datetime | str | None = None) -> pd.DataFrame:
    """Match every stored line again (placements made after an import are then found);
    `match.MATCH_COLUMNS` per line."""
    bills = BillStore(store.engine)
    return _rematch(store, bills, bills.lines(), pd.Timestamp(as_time(now, "now")))


def _rematch(store: PriceStore, bills: BillStore, stored: pd.DataFrame,
             at: pd.Timestamp) -> pd.DataFrame:
    placed = store.jobs.placements()
    moves = store.moves.of_jobs(sorted(set(placed["job_id"]))) if len(placed) else {}
    found = matching.match(stored, placed, moves, at, store.moves.scope)
    before = stored.set_index("id")[["placement_id", "matched_by"]]
    after = found.set_index("id")[["placement_id", "matched_by"]]
    changed = ~((before["placement_id"].fillna(-1).astype("int64")
                 == after["placement_id"].fillna(-1).astype("int64"))
                & (before["matched_by"] == after["matched_by"]))
    bills.set_matches(found[changed.to_numpy()])
    return found


def _drop_superseded(bills: BillStore, current: dict[str, frozenset[str]]
                     ) -> tuple[list[str], int]:
    """Delete the stored lines of the files under each period folder that are not of its
    newest delivery (imported before a newer delivery came): (those files, lines deleted)."""
    stale: list[str] = []
    for folder, newest in current.items():
        keep = {stored_source(s) for s in newest}  # as stored: a long name is cut
        stale += [s for s in bills.sources(stored_source(folder)) if s not in keep]
    stale.sort()
    return stale, bills.drop(stale)


def _scan(cloud: str, location: str, client: Any) -> Scan:
    if cloud == "aws":
        from costsched.bills.aws import scan_s3

        return scan_s3(location, client)
    from costsched.bills.azure import scan_container

    return scan_container(location, client)

"""The accounts' quotas for the commands and the deciders: read them now (`refresh`), what
is known of them (`QuotaFacts`: every quota as last read, and how each cloud's reading
went), their table with ages (`QuotaFacts.table`), and what a plan says, once, of the
clouds whose quotas are not known (`QuotaFacts.unknown_note`).

Which quotas an offering draws on is `costsched.clouds.quotas`'; whether they hold it,
`costsched.optimize.quotas`'.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from costsched.clouds import aws as aws_cloud
from costsched.clouds.hints import quotas_hint
from costsched.clouds.quotas import GLOBAL, request_line, where
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.optimize.quotas import attach
from costsched.passes import memo
from costsched.service.check_result import AWS_EXTRA, AZURE_EXTRA, GCP_EXTRA
from costsched.service.collect import route_regions
from costsched.service.stores import StoreLike, using
from costsched.service.values import as_time
from costsched.store import PriceStore
from costsched.store.quotas import refusals_recorded
from costsched.vocabulary import unprefixed


def refresh_line(clouds: Sequence[str] = ()) -> str:
    """'`costsched quotas --refresh` reads them', after the install its clouds need here."""
    return f"{quotas_hint(clouds)} reads them"


NOT_READ = "quotas not read"


def read_problem(cloud: str, error: str, fix: str = "") -> str:
    """One cloud's failed quota reading in one line: 'azure quotas not read: why; fix: what'
    (the cloud and 'quotas not read' said once, however often the message passed through
    hands that named them; the fix left out where the reason gives it already)."""
    reason = _reason(cloud, error)
    line = f"{cloud} {NOT_READ}: {reason}"
    return line + (f"; fix: {fix}" if fix and fix not in reason else "")


_EXTRAS = {"aws": AWS_EXTRA, "gcp": GCP_EXTRA, "azure": AZURE_EXTRA}
_NO_MODULE = re.compile(r"(?:ModuleNotFoundError|ImportError): No module named '([\w.]+)'")


def _reason(cloud: str, error: str) -> str:
    """Why `cloud`'s quotas were not read, without the cloud or 'quotas not read' the line
    around it says; a missing module in the words `collect` uses for a missing SDK
    ("botocore is not installed: pip install 'costsched[aws]'"), never Python's."""
    reason = unprefixed(error, cloud, NOT_READ)
    missing = _NO_MODULE.search(reason)
    if missing and cloud in _EXTRAS:
        return f"{missing.group(1).split('.')[0]} is not installed: {_EXTRAS[cloud]}"
    return reason
# What `check` and `costsched quotas` show by default: the quotas of GPU instances (not the
# standard families' or the CPU-only ones, which `--all` adds).
_STANDARD = {aws_cloud.QUOTA_FAMILIES["c"][1], aws_cloud.QUOTA_FAMILIES["c"][2]}
TABLE_COLUMNS = ["cloud", "scope", "code", "name", "unit", "limit", "used", "free",
                 "observed_at", "age_hours", "refused", "refused_at", "refused_detail",
                 "account", "source"]


def refresh(store: StoreLike, *, clouds: Sequence[str] = (), regions: Sequence[str] = (),
            gcp_project: str | None = None, readers: Mapping[str, Any] | None = None,
            at: datetime | str | None = None) -> dict:
    """Read the quotas of `clouds` (default all) in `regions` (default those the store has
    prices of, else all of the cloud's) now and store them: cloud -> `QuotasRead` (quotas
    stored; what was not read, one line)."""
    from price_collectors.quotas import read_quotas

    routed = route_regions(regions, clouds)
    with using(store) as opened:
        for cloud, named in routed.items():
            if not named:
                routed[cloud] = sorted(set(opened.offerings(cloud=cloud)["region"]))
        return read_quotas(opened, routed, gcp_project=gcp_project, readers=readers,
                           at=as_time(at) if at is not None else None)


def none_read(reads: Iterable[Mapping[str, Any]]) -> bool:
    """Whether no cloud of `reads` (how each one's quotas were last read: `QuotaStore.reads`
    records) could be read: each reading failed whole, storing no quota. False when there
    is none (never read is not a failure) or when one cloud's were read, in part too."""
    done = [bool(r["quotas"]) or not r["error"] for r in reads]
    return bool(done) and not any(done)


@dataclass(frozen=True)
class QuotaFacts:
    """Every quota as last read or refused (`QuotaStore.current`), and how each cloud's
    were last read (`QuotaStore.reads`)."""

    quotas: pd.DataFrame
    reads: pd.DataFrame

    @classmethod
    def of(cls, store: PriceStore) -> QuotaFacts:
        """The store's, read once per pass (`costsched.passes`)."""
        return memo(("quota-facts", store.url, refusals_recorded()),
                    lambda: cls(store.quotas.current(), store.quotas.reads()), shared=True)

    def attach(self, offerings: pd.DataFrame) -> pd.DataFrame:
        """`offerings` with the quota that binds each (`optimize.quotas.attach`)."""
        return attach(offerings, self.quotas)

    def unknown(self, clouds: Iterable[str]) -> dict[str, str]:
        """The clouds of `clouds` none of whose quotas is known, and why: the last
        reading's error, or that they were never read."""
        known = set(self.quotas["cloud"])
        errors = dict(zip(self.reads["cloud"], self.reads["error"], strict=True))
        return {c: (errors.get(c) or "never read") for c in sorted(set(clouds))
                if c not in known}

    def unknown_note(self, clouds: Iterable[str]) -> str:
        """One line: the clouds of `clouds` whose quotas are not known, why, and that their
        offerings are ranked as if they fit ('' when every one's are known)."""
        unknown = self.unknown(clouds)
        if not unknown:
            return ""
        why = "; ".join(f"{c}: {_short(_reason(c, reason))}" for c, reason in unknown.items())
        return (f"quotas not known ({why}): offerings there are ranked as if the account's "
                f"quotas held them; {refresh_line(list(unknown))}")

    def table(self, at: datetime, *, clouds: Sequence[str] = (), regions: Sequence[str] = (),
              every: bool = False) -> pd.DataFrame:
        """The quotas as last read (TABLE_COLUMNS), with what is free and their age in
        hours: those of GPU instances, or `every` one read; of `clouds` and `regions`
        (a region's table keeps the project-wide quotas)."""
        frame = self.quotas
        if clouds:
            frame = frame[frame["cloud"].isin(list(clouds))]
        if regions:
            frame = frame[frame["scope"].isin([*regions, GLOBAL])]
        if not every:
            frame = frame[_for_gpus(frame)]
        frame = frame.assign(
            free=frame["limit"] - frame["used"].fillna(0.0),
            age_hours=((pd.Timestamp(at) - frame["observed_at"]).dt.total_seconds()
                       / 3600).round(1))
        return frame.sort_values(["cloud", "scope", "code"])[TABLE_COLUMNS].reset_index(
            drop=True)


def _for_gpus(frame: pd.DataFrame) -> pd.Series:
    """Quotas GPU instances draw on: not AWS's standard families', not GCP's CPU ones but
    N1's (its GPU machines), every Azure one (family and regional)."""
    code = frame["code"].astype(str)
    gcp_cpu = (frame["cloud"] == "gcp") & code.str.endswith("CPUS") & ~code.isin(
        ["CPUS", "PREEMPTIBLE_CPUS"])
    standard = (frame["cloud"] == "aws") & code.isin(_STANDARD)
    return ~(gcp_cpu | standard)


def request(row: Mapping[str, Any], need: float = 0.0) -> str:
    """The line that asks for quota `row` (a table's or a plan's row) to hold `need` more
    than it does now ('' where its cloud says none)."""
    limit, used = row.get("limit"), row.get("used")
    used = 0.0 if used is None or pd.isna(used) else float(used)
    value = used + need if limit is None or pd.isna(limit) else max(float(limit),
                                                                     used + need)
    value = float(np.ceil(value))
    return request_line(str(row["cloud"]), str(row["code"]), str(row["scope"]), value,
                        str(row.get("account") or ""))


def describe(row: Mapping[str, Any]) -> str:
    """'All P Spot Instance Requests (L-7212CCBC) in us-east-1'."""
    name, code = str(row.get("name") or ""), str(row["code"])
    named = f"{name} ({code})" if name and name != code else code
    return f"{named} {where(str(row['scope']))}"


def _short(reason: str) -> str:
    text = " ".join(reason.split())
    return text if len(text) <= 160 else text[:157] + "..."

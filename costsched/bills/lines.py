"""Billed line items in one shape, whatever cloud's export they came from.

Each reader turns its export's rows into a frame of LINE_COLUMNS: the line's usage interval,
the resource it charged, its category (what `report --billed` itemises), its USD, and the
costsched tags or labels it carried. A row that cannot be read is one `BadExport` line
naming the file, the field and what is accepted.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd

from costsched.model import InvalidInput

# What `report --billed` itemises: a line's category.
CATEGORIES = ("compute", "storage", "egress", "tax", "credit", "rounding", "other")
LINE_COLUMNS = ["cloud", "account", "source", "line_key", "usage_start", "usage_end",
                "resource_id", "category", "line_type", "service", "usage_type", "region",
                "usage_amount", "usage_unit", "usd", "currency", "job_tag", "attempt_tag"]
# The tags (AWS) and labels (GCP, Azure) costsched puts on every instance it launches.
JOB_TAG = "costsched-job"
ATTEMPT_TAG = "costsched-attempt"


class BadExport(InvalidInput):
    """An export that cannot be read: one line naming the file, field and what is accepted."""


def tag_key(key: str) -> str:
    """A tag's key as compared: AWS's `user:` / `user_` prefix dropped, lower case, every
    character but letters and digits as '_' (CUR 2.0, legacy CUR and Athena spell
    `costsched-job` as `user_costsched_job`, `resourceTags/user:costsched-job`, ...)."""
    key = key.strip()
    for prefix in ("resourceTags/", "resource_tags_", "user:", "user_"):
        if key.startswith(prefix):
            key = key[len(prefix):]
    return re.sub(r"[^a-z0-9]", "_", key.lower())


_JOB, _ATTEMPT = tag_key(JOB_TAG), tag_key(ATTEMPT_TAG)


def costsched_tags(tags: Mapping[str, object] | None) -> tuple[str, str]:
    """The job id and launch attempt a resource's tags or labels name ('' where absent)."""
    found = {tag_key(str(k)): "" if v is None else str(v).strip()
             for k, v in (tags or {}).items()}
    job = found.get(_JOB, "")
    return (job if job.isdigit() else "", found.get(_ATTEMPT, "").lower())


def parse_tags(text: object, where: str, field: str) -> dict[str, str]:
    """Tags written as JSON text (an object, or Azure's object without its braces); empty
    text is no tags."""
    if text is None or (isinstance(text, float) and math.isnan(text)):
        return {}
    if isinstance(text, Mapping):
        return {str(k): str(v) for k, v in text.items()}
    if isinstance(text, (list, tuple, np.ndarray)):  # a map column read as (key, value) pairs
        return {str(k): str(v) for k, v in text}
    raw = str(text).strip()
    if not raw:
        return {}
    for candidate in (raw, "{" + raw + "}"):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return {str(k): str(v) for k, v in value.items()}
    raise BadExport(f"{where}: field {field} {_short(raw)!r}: expected tags as a JSON "
                    'object, e.g. {"costsched-job": "3"}')


def times(values: pd.Series, where: str, field: str) -> pd.Series:
    """UTC times from ISO 8601 text or datetimes; a value that is not one is a BadExport."""
    if pd.api.types.is_datetime64_any_dtype(values):
        out = pd.to_datetime(values, utc=True)
    else:
        out = pd.to_datetime(values.astype("string").str.strip(), utc=True, errors="coerce",
                             format="ISO8601")
    bad = out.isna() & values.notna()
    if bad.any() or values.isna().any():
        shown = values[bad | values.isna()].iloc[0]
        raise BadExport(f"{where}: field {field} {_short(shown)!r}: expected an ISO 8601 "
                        "time, e.g. 2024-06-01T00:00:00Z")
    return out


def numbers(values: pd.Series, where: str, field: str) -> pd.Series:
    """Floats; empty is 0 (an export leaves a cost of 0 empty); anything else is a BadExport."""
    text = values.astype("string").str.strip()
    out = pd.to_numeric(text.where(text != "", "0").fillna("0"), errors="coerce")
    bad = out.isna() | ~np.isfinite(out.to_numpy(dtype=float, na_value=np.nan))
    if bad.any():
        raise BadExport(f"{where}: field {field} {_short(values[bad].iloc[0])!r}: expected a "
                        "number, e.g. 0.918")
    return out.astype(float)


def require(columns: Iterable[str], needed: Iterable[str], where: str, what: str) -> None:
    """Every `needed` column is there, else one line naming the first missing."""
    have = set(columns)
    missing = [c for c in needed if c not in have]
    if missing:
        raise BadExport(f"{where}: field {missing[0]} missing: expected {what} with the "
                        f"columns {', '.join(needed)}")


def finish(frame: pd.DataFrame) -> pd.DataFrame:
    """A reader's rows in LINE_COLUMNS order with each line's `line_key`: its `line_key`
    when the export gives lines an identity, else a digest of its content and its ordinal
    among identical lines of its source (the same export read twice has the same keys)."""
    out = frame.reindex(columns=LINE_COLUMNS).reset_index(drop=True)
    for column in ("account", "resource_id", "line_type", "service", "usage_type", "region",
                   "usage_unit", "currency", "job_tag", "attempt_tag", "line_key"):
        out[column] = out[column].fillna("").astype(str)
    out["usage_amount"] = out["usage_amount"].astype(float).fillna(0.0)
    if out.empty:
        return out
    keyed = (out["line_key"] != "").to_numpy()
    if keyed.all():
        return out
    content = [c for c in LINE_COLUMNS if c not in ("line_key", "source")]
    columns = [out[c].astype(str).tolist() for c in content]  # plain lists: fast to walk
    digest = pd.Series([hashlib.sha256("\x1f".join(row).encode()).hexdigest()[:40]
                        for row in zip(*columns, strict=True)], index=out.index)
    nth = digest.groupby([out["source"], digest]).cumcount()
    out["line_key"] = out["line_key"].where(keyed, digest + "-" + nth.astype(str))
    return out


def _short(value: object) -> str:
    text = str(value)
    return text if len(text) <= 60 else text[:57] + "..."

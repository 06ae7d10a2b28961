"""Billed lines matched to costsched's placements, by three rules in turn:

1. instance: the line's resource is a placement's instance (the last part of its id: AWS's
   `i-...`, GCP's instance name, Azure's VM name), on the same cloud;
2. tags: the line carries costsched's tags or labels: `costsched-attempt` names the launch
   (its move), hence the instance it launched; `costsched-job` alone names the job, whose
   placement overlapping the line longest is taken. A line whose attempt carries another
   store's scope (`costsched.store.scope`) is another store's job of the same number: not
   matched by its tags;
3. time: a usage line that names no resource (an export without resource ids) goes to
   the placement it overlaps when one job only ran then on that cloud (in that region,
   where the line names one; a compute line, on the instance type its usage type names).

Anything else stays unmatched: kept and counted, never dropped. An account's charges that
name no resource (tax, credits, rounding) are not one placement's: `report --billed` shares
them among the jobs by their part of the account's billed usage.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from costsched.store.moves import MoveRecord
from costsched.store.scope import parse_attempt

MATCH_COLUMNS = ["id", "placement_id", "job_id", "matched_by"]
SHARED = ("tax", "credit", "rounding")  # an account's charges: shared, not matched by time


def resource_name(resource: str) -> str:
    """The last part of a resource id or handle, lower case: `us-east-1/i-0ab` and
    `arn:aws:ec2:us-east-1:1:instance/i-0ab` are `i-0ab`."""
    return re.split(r"[/:]", str(resource).strip())[-1].lower()


def match(lines: pd.DataFrame, placed: pd.DataFrame, moves: dict[int, list[MoveRecord]],
          now: pd.Timestamp, scope: str = "") -> pd.DataFrame:
    """MATCH_COLUMNS for each of `lines` (stored lines): the placement it was matched to and
    by which rule, or NaN and '' when unmatched. `placed`: every placement (an open one runs
    to `now`); `moves`: the jobs' moves (their launch attempts' instances); `scope`: the
    store's ('': any line's tags are taken)."""
    placement = np.full(len(lines), -1, dtype="int64")
    job = np.full(len(lines), -1, dtype="int64")
    rule = np.full(len(lines), "", dtype=object)
    if len(lines) and len(placed):
        places = placed.assign(end_at=placed["end_at"].fillna(now),
                               name=placed["instance"].map(resource_name))
        by_instance = {(c, n): g for (c, n), g in places.groupby(["cloud", "name"]) if n}
        launched = {(m.job_id, m.attempt): m.target_instance
                    for found in moves.values() for m in found}
        # Most of an account's lines are other workloads': only those that name one of the
        # placements' instances, carry costsched's tags or name no resource are looked at.
        named = lines["resource_id"].map(resource_name)
        looked = (named.isin(set(places["name"]) - {""}) | (lines["job_tag"] != "")
                  | (lines["attempt_tag"] != "") | (lines["resource_id"].str.strip() == ""))
        for i in np.flatnonzero(looked.to_numpy()):
            line = lines.iloc[i]
            found, by = _by_instance(line, by_instance), "instance"
            if found is None and (line.job_tag or line.attempt_tag):
                found, by = _by_tags(line, places, launched, scope), "tags"
            if found is None and not str(line.resource_id).strip():
                found, by = _by_time(line, places), "time"
            if found is not None:
                placement[i], job[i], rule[i] = int(found["id"]), int(found["job_id"]), by
    return pd.DataFrame({"id": lines["id"].to_numpy(), "placement_id": _ids(placement),
                         "job_id": _ids(job), "matched_by": rule})


def _ids(values: np.ndarray) -> pd.Series:
    """Ids, with -1 as missing."""
    return pd.Series(values, dtype="Int64").mask(values < 0)


def _longest(line, candidates: pd.DataFrame) -> pd.Series | None:  # noqa: ANN001 - a row
    """The candidate placement that overlaps the line's interval longest (the nearest in
    time when none overlaps)."""
    if candidates.empty:
        return None
    lo, hi = line.usage_start, max(line.usage_end, line.usage_start)
    overlap = (np.minimum(candidates["end_at"], hi) - np.maximum(candidates["start_at"], lo))
    seconds = overlap.dt.total_seconds().to_numpy()
    if (seconds <= 0).all():  # a bill's hour may round a placement's edges: the nearest
        gap = np.minimum((candidates["start_at"] - hi).abs(), (lo - candidates["end_at"]).abs())
        return candidates.iloc[int(np.argmin(gap.dt.total_seconds().to_numpy()))]
    return candidates.iloc[int(np.argmax(seconds))]


def _by_instance(line, by_instance: dict) -> pd.Series | None:  # noqa: ANN001 - a row
    name = resource_name(line.resource_id)
    candidates = by_instance.get((line.cloud, name)) if name else None
    return None if candidates is None else _longest(line, candidates)


def _by_tags(line, places: pd.DataFrame, launched: dict,  # noqa: ANN001 - a row
             scope: str) -> pd.Series | None:
    attempt = parse_attempt(str(line.attempt_tag))
    if attempt is not None and attempt.scope and scope and attempt.scope != scope:
        return None  # another store's launch (its job tag names that store's job)
    job = int(line.job_tag) if str(line.job_tag).isdigit() else \
        attempt.job_id if attempt else None
    if job is None:
        return None
    mine = places[(places["job_id"] == job) & (places["cloud"] == line.cloud)]
    if attempt is not None:
        instance = launched.get((job, str(line.attempt_tag)))
        there = mine[mine["instance"] == instance] if instance else mine.iloc[0:0]
        if not there.empty:
            return _longest(line, there)
    return _longest(line, _overlapping(line, mine))


def _by_time(line, places: pd.DataFrame) -> pd.Series | None:  # noqa: ANN001 - a row
    if line.category in SHARED:
        return None
    candidates = places[places["cloud"] == line.cloud]
    if line.region:
        candidates = candidates[candidates["region"] == line.region]
    if line.category == "compute":
        usage = str(line.usage_type).lower()
        named = np.array([str(t).lower() in usage for t in candidates["instance_type"]],
                         dtype=bool)
        candidates = candidates[named]
    candidates = _overlapping(line, candidates)
    if candidates["job_id"].nunique() != 1:  # nobody, or several jobs: not one's to carry
        return None
    return _longest(line, candidates)


def _overlapping(line, candidates: pd.DataFrame) -> pd.DataFrame:  # noqa: ANN001 - a row
    hi = max(line.usage_end, line.usage_start + pd.Timedelta(seconds=1))
    return candidates[(candidates["start_at"] < hi) & (candidates["end_at"] > line.usage_start)]

"""A job's deadline, checked against the planning time before anything else of its file is
read: the one-line refusal of one that has passed."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from costsched.durations import parse_hours
from costsched.model import InvalidInput, utc
from costsched.spec_errors import as_written


def passed_said(where: str, name: str, sky: bool, due: Any, at: datetime) -> str:
    """`deadline_passed` of a deadline `due` as read (hours, a time, or not given)."""
    if not isinstance(due, datetime) or (utc(due) - utc(at)).total_seconds() > 0:
        return ""
    return (f"{where}: job {name!r}: field {as_written('constraints.deadline', sky)}: "
            f"{utc(due):%Y-%m-%dT%H:%MZ} is not after the planning time "
            f"{utc(at):%Y-%m-%dT%H:%MZ}")


_ISO_DAY = re.compile(r"^\s*\d{4}-\d{2}-\d{2}(?:$|[T ])")


def deadline_value(raw: Any) -> float | datetime:
    """`parse_hours` of a deadline as written, an ISO time in the usual forms read without
    pandas (which parse_hours reads the others with): a deadline's checks stay light."""
    if isinstance(raw, str) and _ISO_DAY.match(raw):
        try:
            return utc(datetime.fromisoformat(raw.strip()))
        except ValueError:
            pass
    return parse_hours(raw)


def refuse_passed_deadline(doc: Any, where: str, name: str, sky: bool, at: datetime) -> None:
    """InvalidInput (`passed_said`) for a job document whose deadline has passed at `at`,
    read from the document before it is parsed (a task's accelerators read the GPU
    catalog): a file refused for it reads nothing else. A deadline that does not read is
    left to the parse, which says why."""
    section = doc.get("costsched" if sky else "constraints") if isinstance(doc, dict) else None
    raw = section.get("deadline") if isinstance(section, dict) else None
    if raw is None:
        return
    try:
        due = deadline_value(raw)
    except (ValueError, TypeError):
        return
    said = passed_said(where, name, sky, due, at)
    if said:
        raise InvalidInput(said)

"""The report's note where a total it writes is not its exact figure rounded once: every
total is the sum of its rows as written at four decimals (a job's the sum of its
charges, the report's the sum of its job rows), which may differ from the exact figure
rounded by a few units of the last decimal. JSON keeps the exact figures."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from costsched.amounts import as_written
from costsched.report.cells import HOUR_COLUMNS, shown_rows, shown_totals, spend_places
from costsched.report.written import scale_of

ROUNDING_NOTE = ("Totals are the sums of the rows as shown; `report --json` has the exact "
                 "figures.")
# Where a job's own cost is what differs: it is a sum too, of charges each rounded alone,
# never a figure cut short.
JOB_ROUNDING_NOTE = ("Totals are the sums of the rows as shown, and a job's cost the sum of "
                     "its charges as shown, each rounded alone (`costsched status JOB` lists "
                     "them); `report --json` has the exact figures.")
# The figures that are sums of others as written: a job's compute and total, the totals'.
SUMMED = ("compute_usd", "usd", "billed_hours")
SUMMED_TOTALS = ("usd", "compute_usd", "egress_usd", "billed_hours")


def rounding_note(tables: Mapping[str, Any], totals: Mapping[str, float | None]) -> str:
    """ROUNDING_NOTE where a total the report writes (one of the totals line) differs from
    its exact figure rounded once at its decimals, JOB_ROUNDING_NOTE where a job's in its
    row does; '' where none does, or where the figures are not written at charged
    figures' precision."""
    jobs = tables.get("jobs") or []
    if scale_of(tables) is None or not jobs:
        return ""
    places = spend_places(tables)
    _, shown = shown_rows("jobs", tables)
    written = shown_totals(tables, totals)

    def differs(column: str, shown_value: Any, exact: Any) -> bool:
        if not all(isinstance(v, (int, float)) and v == v for v in (shown_value, exact)):
            return False
        p = places["hours" if column in HOUR_COLUMNS else "usd"]
        return round(float(shown_value), p) != round(as_written(float(exact), p), p)

    rows = any(differs(c, s.get(c), r.get(c)) for r, s in zip(jobs, shown, strict=True)
               for c in SUMMED)
    sums = any(differs(c, written.get(c), totals.get(c)) for c in SUMMED_TOTALS)
    return JOB_ROUNDING_NOTE if rows else ROUNDING_NOTE if sums else ""

"""How the report's tables are written, cell by cell, in every view (the command line,
the HTML file, the dashboard): column headings in words, one precision per table for its
dollars and one for its hours (`costsched.amounts`) at which a row's spend and saving
make its baseline, and the totals line. On plain rows (a list of dicts by column); a
frame is taken too, as its records. Loads neither pandas nor numpy."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from costsched.amounts import MAX_DECIMALS, decimals, given, hours, per_hour, usd
from costsched.measured import sps

Rows = Sequence[Mapping[str, Any]]

# Column names as table headers, in words; amounts in USD end with "$" (the CLI's tables
# align those to the right).
HEADINGS = {
    "job_id": "job", "move_id": "move", "name": "name", "state": "state", "nodes": "nodes",
    "billed_hours": "billed hours",
    "compute_usd": "compute $", "egress_usd": "egress $", "usd": "total $",
    "on_demand_usd": "on-demand $", "saved_vs_on_demand_usd": "saved vs on-demand $",
    "static_usd": "launch choice kept $", "saved_vs_static_usd": "saved vs launch choice $",
    "from_cloud": "from cloud", "from_region": "from region", "to_cloud": "to cloud",
    "to_region": "to region", "gb": "GB", "usd_per_gb": "$ per GB", "idle_usd": "idle $",
    "budget_usd": "budget $", "spent_usd": "spent $", "used": "used", "at": "at",
    "day": "day", "cloud": "cloud", "kind": "kind", "source": "from", "target": "to",
    "status": "status", "gpu_model": "GPU", "gpu_count": "GPUs", "gpu": "GPU",
    "planned_sps": "planned steps/s", "measured_sps": "measured steps/s",
    "measured_vs_planned": "measured / planned", "planned_from": "planned from",
    "done": "done", "expected_training_hours": "expected training hours",
    "training_hours": "training hours", "training_hours_ratio": "training hours ratio",
    "expected_usd": "expected $", "usd_ratio": "cost ratio",
    "expected_preemptions": "expected preemptions",
    "median_training_hours_ratio": "median training hours ratio",
    "worst_training_hours_ratio": "worst training hours ratio",
    "median_usd_ratio": "median cost ratio",
    "worst_usd_ratio": "worst cost ratio", "vs_estimate": "vs estimate",
}


def heading(column: str) -> str:
    """A column's header in words ('saved_vs_on_demand_usd' -> 'saved vs on-demand $')."""
    return HEADINGS.get(column, column.replace("_usd", " $").replace("_", " "))


HOUR_COLUMNS = ("billed_hours", "expected_training_hours", "training_hours",
                "hours")  # (a placement's, on the dashboard's job page)

# A saving is its baseline less what the job spent: a row shows all three.
SAVINGS = {"saved_vs_on_demand_usd": "on_demand_usd", "saved_vs_static_usd": "static_usd"}

# Tables whose rows sum the per-job table's: never at fewer decimals than it, so that
# 0.0075 and 0.0103 hours of two jobs make 0.0178 on their cloud's row, not 0.02.
SUMS_OF_JOBS = ("clouds", "days")


def records(table: object) -> tuple[list[str], list[dict]]:
    """(columns, rows) of a table given as rows (its columns: the first row's keys) or as
    a frame (its columns and records)."""
    if hasattr(table, "to_dict"):  # a frame
        return [str(c) for c in table.columns], table.to_dict("records")  # type: ignore[attr-defined]
    rows = list(table)  # type: ignore[call-overload]
    return (list(rows[0]) if rows else []), rows


def table_places(table: object) -> dict[str, int]:
    """One precision for a table's dollars and one for its hours (`costsched.amounts`):
    the figures of a row and of a column read at the same decimals, so that they add up
    (the fewest decimals at which each row's spend and saving make its baseline, up to
    MAX_DECIMALS; `added_up` makes the rest). `table`: rows, or a frame."""
    columns, rows = records(table)

    def figures(wanted: list[str]) -> list[float]:
        return [float(r[c]) for c in wanted for r in rows
                if isinstance(r[c], (int, float))]

    usd_places = decimals(figures([c for c in columns if c.endswith("usd")]))
    while usd_places < MAX_DECIMALS and not _adds_up(columns, rows, usd_places):
        usd_places += 1
    return {"usd": usd_places,
            "hours": decimals(figures([c for c in columns if c in HOUR_COLUMNS]))}


def places_of(name: str, table: object, jobs: object) -> dict[str, int]:
    """`table_places` of the report's table `name` (a `TABLES` name; its rows `table`),
    and for a table of SUMS_OF_JOBS no fewer decimals than the per-job table's (`jobs`)."""
    places = table_places(table)
    _, job_rows = records(jobs)
    if name in SUMS_OF_JOBS and job_rows:
        of_jobs = table_places(jobs)
        places = {unit: max(n, of_jobs[unit]) for unit, n in places.items()}
    return places


def rounded(value: float, places: int) -> float:
    """`value` at `places` decimals as an array rounds it (scaled, to the nearest even)."""
    scale = 10.0 ** places
    return float(round(value * scale)) / scale if math.isfinite(value) else value


def _number(value: object) -> float:
    """A cell as a number; NaN for what is none."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return math.nan


def _savings(columns: Sequence[str]) -> list[tuple[str, str]]:
    return [(saved, base) for saved, base in SAVINGS.items()
            if {saved, base, "usd"} <= set(columns)]


def _adds_up(columns: Sequence[str], rows: Rows, places: int) -> bool:
    """Whether every row's spend and saving, rounded to `places`, make its baseline."""
    for saved, base in _savings(columns):
        for row in rows:
            cells = [_number(row[c]) for c in ("usd", base, saved)]
            if any(c != c for c in cells):
                continue
            spent, made, kept = (rounded(c, places) for c in cells)
            if abs(spent + kept - made) > 10 ** -places / 2:
                return False
    return True


def added_up(rows: Rows, places: Mapping[str, int]) -> list[dict]:
    """`rows` with each saving as its rounded baseline less its rounded spend (at the
    table's `places`), so that a row's spend and saving visibly make its baseline (the
    saving shown is within a unit of its last decimal of its exact value)."""
    found = _savings(list(rows[0])) if rows else []
    if not found or "usd" not in places:
        return [dict(r) for r in rows]
    p = places["usd"]
    out = []
    for row in rows:
        row = dict(row)
        spent = rounded(_number(row["usd"]), p)
        for saved, base in found:
            made = rounded(_number(row[base]), p) - spent
            if made == made:
                row[saved] = made
        out.append(row)
    return out


def missing(value: object) -> bool:
    """None, NaN or NaT (never a text)."""
    return value is None or (not isinstance(value, str) and value != value)


def format_cell(column: str, value: object, places: Mapping[str, int] | None = None
                ) -> str:
    """A value of `column` as the report's tables show it (the CLI's too); `places`: the
    table's precision of dollars and hours (`table_places`; else each figure's own)."""
    if missing(value):
        return "-"
    places = places or {}
    if column == "usd_per_gb" or column.endswith("usd_per_hour"):
        return per_hour(float(value))  # type: ignore[arg-type]  # a price, as quoted
    if column == "budget_usd":
        return given(float(value))  # type: ignore[arg-type]  # as the user set it
    if column.endswith("usd"):
        return usd(float(value), places.get("usd"))  # type: ignore[arg-type]
    if column in HOUR_COLUMNS:
        return hours(float(value), places.get("hours"))  # type: ignore[arg-type]
    if column in ("used", "done") or column.endswith("_share"):
        return f"{value:.0%}"
    if column.endswith("_sps"):
        return sps(float(value))  # type: ignore[arg-type]
    if column.endswith("ratio") or column == "measured_vs_planned":
        return f"{value:,.3g}x"
    if column == "flagged":
        return "yes" if value else ""
    if column == "day":
        return f"{_time(value):%Y-%m-%d}"
    if isinstance(value, datetime):
        return when(value)
    if isinstance(value, float):  # GB, preemptions: the rule of hours, never 0.00 for 0.001
        return hours(value)
    return str(value)


def _time(value: object) -> datetime:
    if isinstance(value, datetime):
        return value
    return datetime.fromisoformat(str(value).replace("Z", "+00:00"))


def when(at: datetime) -> str:
    """'2024-06-01 20:00 UTC'."""
    return f"{_time(at):%Y-%m-%d %H:%M} UTC"


TOTALS = ("usd", "compute_usd", "egress_usd", "saved_vs_on_demand_usd",
          "saved_vs_static_usd", "billed_hours")


def totals_figures(totals: Mapping[str, float | None], jobs: object = None) -> dict[str, str]:
    """The report's totals (TOTALS) as written: its amounts at one precision (they add up),
    and no fewer decimals than the per-job table they sum (`jobs`, its rows: a frame or a
    list of dicts), so that the rows visibly add up to them ($0.0043 and $0.0157 to
    $0.0200, not $0.02)."""
    amounts = [totals[k] for k in TOTALS[:-1]]
    usd_places, hour_places = decimals(amounts), decimals([totals["billed_hours"]])
    if jobs is not None and len(jobs):  # type: ignore[arg-type]
        table = table_places(jobs)
        usd_places = max(usd_places, table["usd"])
        hour_places = max(hour_places, table["hours"])
    out = {k: usd(v, usd_places) for k, v in zip(TOTALS[:-1], amounts, strict=True)}
    out["billed_hours"] = hours(totals["billed_hours"], hour_places)
    instance = totals.get("instance_hours")
    out["instance_hours"] = hours(totals["billed_hours"] if instance is None else instance,
                                  max(hour_places, decimals([instance])))
    return out


def period_words(since: str | None, until: str, placed: bool) -> str:
    """The report's period as it heads the report: 'SINCE to UNTIL', 'the first placement
    to UNTIL' (no --since), and where nothing was placed in it, that ('up to UNTIL: nothing
    was placed in that period', not 'the first placement to' a time before any)."""
    if not placed:
        return (f"{since} to {until}" if since else f"up to {until}") + (
            ": nothing was placed in that period")
    return f"{since or 'the first placement'} to {until}"


def totals_line(totals: Mapping[str, float | None], jobs: object = None) -> str:
    """The report's totals in one line (`totals_figures`): 'Spend $0.0300 (compute
    $0.0264, egress $0.0036) over 0.03 instance-hours; saved ...'."""
    f = totals_figures(totals, jobs)
    over = (f"{f['instance_hours']} instance-hours" if f["instance_hours"] == f["billed_hours"]
            else f"{f['billed_hours']} billed hours ({f['instance_hours']} instance-hours, "
            "each node counted)")
    return (f"Spend {f['usd']} (compute {f['compute_usd']}, egress {f['egress_usd']}) over "
            f"{over}; saved {f['saved_vs_on_demand_usd']} against "
            f"on-demand and {f['saved_vs_static_usd']} against the launch-time choice kept")

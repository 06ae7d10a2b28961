"""How the report's tables are written, cell by cell, in every view (the command line,
the HTML file, the dashboard): column headings in words, one precision per table for its
dollars and one for its hours (`costsched.amounts`) at which a row's spend and saving
make its baseline, and the totals line. The figures add up as written
(`costsched.amounts.as_written`): a row's compute and egress make its total, its spend and
saving its baseline; the totals are the sums of the per-job cells as written, and the
per-cloud and per-day tables' columns sum to them (`shown_rows`). On plain rows (a list
of dicts by column); a frame is taken too, as its records. Loads neither pandas nor numpy."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from costsched.amounts import (
    MAX_DECIMALS,
    NOISE,
    adding_up,
    as_written,
    charged_hours,
    charged_usd,
    decimals,
    difference_as_written,
    given,
    hours,
    parts_as_written,
    ratio,
    stored_price,
    sum_as_written,
    total_as_written,
    usd,
)
from costsched.measured import sps
from costsched.report.failed import failed_said
from costsched.report.written import PART_COLUMNS, SCALED_TABLES, parts_of, scale_of
from costsched.step_share import percent_down

Rows = Sequence[Mapping[str, Any]]

# Column names as table headers, in words; amounts in USD end with "$" (the CLI's tables
# align those to the right).
HEADINGS = {
    "job_id": "job", "move_id": "move", "name": "name", "state": "state", "nodes": "nodes",
    "billed_hours": "billed hours",
    "compute_usd": "compute $", "egress_usd": "egress $", "usd": "total $",
    "on_demand_usd": "on-demand $", "saved_vs_on_demand_usd": "saved vs on-demand $",
    "launch_choice_usd": "launch choice kept $",
    "saved_vs_launch_choice_usd": "saved vs launch choice $",
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
    "worst_training_hours_ratio": "training hours ratio furthest from 1",
    "median_usd_ratio": "median cost ratio",
    "worst_usd_ratio": "cost ratio furthest from 1", "vs_estimate": "vs estimate",
}


def heading(column: str) -> str:
    """A column's header in words ('saved_vs_on_demand_usd' -> 'saved vs on-demand $')."""
    return HEADINGS.get(column, column.replace("_usd", " $").replace("_", " "))


HOUR_COLUMNS = ("billed_hours", "expected_training_hours", "training_hours",
                "hours")  # (a placement's, on the dashboard's job page)

# A saving is its baseline less what the job spent: a row shows all three.
SAVINGS = {"saved_vs_on_demand_usd": "on_demand_usd",
           "saved_vs_launch_choice_usd": "launch_choice_usd"}

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
    ratio_places = decimals(figures([c for c in columns if is_ratio(c)]))
    other_places = decimals(figures([c for c in columns if c in OTHER_FIGURES]))
    hour_places = decimals(figures([c for c in columns if c in HOUR_COLUMNS]))
    while hour_places < MAX_DECIMALS and not _ratios_read(columns, rows, hour_places,
                                                          ratio_places):
        hour_places += 1
    return {"usd": usd_places, "hours": hour_places, "ratio": ratio_places,
            "figures": other_places}


# Figures neither dollars, hours nor ratios (GB, preemptions): by the rule of hours, one
# precision down their column (`table_places`).
OTHER_FIGURES = ("gb", "expected_preemptions")


# A ratio column and the hours it is the ratio of (actual, expected).
HOUR_RATIOS = {"training_hours_ratio": ("training_hours", "expected_training_hours")}


def _ratios_read(columns: Sequence[str], rows: Rows, places: int, ratio_places: int
                 ) -> bool:
    """Whether every row's hours, as written at `places`, make its ratio as the ratio
    column writes it (0.02 and 0.02 hours beside 0.63x do not: 0.0152 and 0.0240 do)."""
    for column, (actual, expected) in HOUR_RATIOS.items():
        if not {column, actual, expected} <= set(columns):
            continue
        for row in rows:
            shown = _number(row[column])
            if not math.isfinite(shown):
                continue
            below = as_written(_number(row[expected]), places)
            made = as_written(_number(row[actual]), places) / below if below else math.nan
            if ratio(made, ratio_places) != ratio(shown, ratio_places):
                return False
    return True


def is_ratio(column: str) -> bool:
    """Whether `column` holds ratios ('0.90x')."""
    return column.endswith("ratio") or column == "measured_vs_planned"


def places_of(name: str, table: object, jobs: object) -> dict[str, int]:
    """`table_places` of the report's table `name` (a `TABLES` name; its rows `table`);
    a table of charges (SCALED_TABLES) at the store's scale (`scale_of`) where it was
    read, else for a spend table (SPEND_TABLES), no fewer decimals than the spend tables
    and their totals need together (`spend_places`; `jobs`: the report's tables by name,
    or its per-job rows alone)."""
    places = table_places(table)
    scale = scale_of(jobs)
    if scale is not None and name in SCALED_TABLES:
        return {**places, **scale}
    tables = spend_tables(jobs)
    if name in SPEND_TABLES and tables["jobs"]:
        together = spend_places(tables)
        places = {unit: max(n, together.get(unit, n)) for unit, n in places.items()}
    return places


# The tables of spend: per job, and the sums of the same charges per cloud and per day.
SPEND_TABLES = ("jobs", *SUMS_OF_JOBS)


def spend_tables(tables: object) -> dict[str, list[dict]]:
    """The report's spend tables (SPEND_TABLES) as rows, from its tables by name (a
    mapping: `Report.rows`, `report --json`'s document) or from its per-job rows alone
    (rows or a frame)."""
    if isinstance(tables, Mapping):
        return {n: records(tables.get(n) or [])[1] for n in SPEND_TABLES}
    return {"jobs": records(tables)[1] if tables is not None else []}


def spend_places(tables: object, least: Mapping[str, int] | None = None) -> dict[str, int]:
    """One precision for the spend tables' dollars and one for their hours, at which the
    report's totals read too (`table_places` of each, and the totals' own decimals where
    they need more: 0.0030 saved over jobs that saved $0.51 and lost $0.507 is not $0.00):
    a job's spend of $0.0277 reads so beside its days' $0.0185 and $0.0092, and the
    tables' columns and the totals add up as written. `tables`: see `spend_tables`;
    `least`: the fewest decimals of each (those of a table the totals are read under: a
    job's page's placements' hours, `amounts.block_hours`, where they take more than the
    store's scale)."""
    scale = scale_of(tables)
    if scale is not None:  # the store's: every view writes its charges at it
        return {u: max(n, (least or {}).get(u, 0)) if u in ("usd", "hours") else n
                for u, n in scale.items()}
    found = spend_tables(tables)
    jobs = found["jobs"]
    places = {u: max(n, (least or {}).get(u, 0)) for u, n in table_places(jobs).items()}
    for name in SUMS_OF_JOBS:
        if found.get(name):
            places = {u: max(n, table_places(found[name])[u]) for u, n in places.items()}
    sums = {c: _exact_sum(jobs, c) for c in TOTALS if jobs and c in jobs[0]}
    out = {"usd": max(places["usd"], decimals([v for c, v in sums.items() if c.endswith("usd")])),
           "hours": max(places["hours"], decimals([sums.get("billed_hours")]))}
    # The fewest decimals (the rule of parts, `adding_up`: up to MAX_DECIMALS, or FINEST
    # under a cent) at which every figure of every spend table and every total reads as it
    # does alone and they all add up so: a saving reads as the JSON's figure, in its row
    # and in the totals. Where none does, the fewest (up to MAX_DECIMALS) at which each
    # column's cells as written sum to its exact total as written and every cell but a
    # saving reads as its own figure (a job's 0.0169 h is 0.0169 in its row and on its
    # cloud's, never 0.02 in one and 0.01 in the other); beyond, the cells' sum, each
    # within a unit of the last decimal.
    for unit in out:
        alone = adding_up(_sums_of(found, sums, unit), out[unit])
        if alone is not None:
            out[unit] = alone
            continue
        while out[unit] < MAX_DECIMALS and not (_sums_agree(jobs, sums, out, unit)
                                                and _read_alone(found, out, unit)):
            out[unit] += 1
    return out


def _sums_of(found: Mapping[str, list[dict]], sums: Mapping[str, float], unit: str
             ) -> list[tuple[float, list[float]]]:
    """What adds up in the spend tables `found` in `unit` ('usd' or 'hours'), as (total,
    parts): each row's parts (compute and egress) to its total and its spend and saving to
    their baseline; each column of a table to its exact sum over the jobs (`sums`)."""
    out: list[tuple[float, list[float]]] = []
    for rows in found.values():
        for row in rows if unit == "usd" else ():
            total = _number(row.get("usd"))
            for parts in PARTS["usd"]:
                if all(c in row for c in parts):
                    exact = [_number(row[c]) for c in parts]
                    if abs(math.fsum(exact) - total) < 1e-9:
                        out.append((total, exact))
            for saved, base in _savings(list(row)):
                out.append((_number(row[base]), [total, _number(row[saved])]))
        for column, figure in sums.items():
            if (_unit_of(column) == unit and rows and column in rows[0] and math.isclose(
                    _exact_sum(rows, column), figure, rel_tol=1e-9, abs_tol=1e-9)):
                out.append((figure, [_number(r.get(column)) for r in rows
                                     if _number(r.get(column)) == _number(r.get(column))]))
    return [(t, parts) for t, parts in out if t == t and all(v == v for v in parts)]


def _unit_of(column: str) -> str | None:
    """'hours', 'usd' or None: the precision `column`'s figures are written at."""
    if column in HOUR_COLUMNS:
        return "hours"
    if column.endswith("usd") and column != "budget_usd":
        return "usd"
    return None


def _read_alone(found: Mapping[str, list[dict]], places: Mapping[str, int],
                unit: str) -> bool:
    """Whether every figure of `unit` in the spend tables `found` (as they read at
    `places`: `_added_up_in`) reads as it does alone at that precision, so that the same
    figure reads the same in each table and none reads as zero that is not."""
    for name, rows in found.items():
        if not rows:
            continue
        for exact, shown in zip(rows, _added_up_in(name, found, places), strict=True):
            for column, value in exact.items():
                if _unit_of(column) != unit or column in SAVINGS:
                    continue  # (a saving is its baseline less its spend as written)
                if format_cell(column, value, places) != format_cell(
                        column, shown[column], places):
                    return False
    return True


def _added_up_in(name: str, found: Mapping[str, list[dict]], places: Mapping[str, int]
                 ) -> list[dict]:
    """The spend table `name` of `found` as it reads at `places` (`added_up`): a table of
    SUMS_OF_JOBS shares its columns out to the per-job cells' sums as written."""
    rows, jobs = found.get(name) or [], found.get("jobs") or []
    sums = None
    if name in SUMS_OF_JOBS and jobs and rows:
        cells = added_up(jobs, places)
        # The columns whose exact sum is the per-job table's (each charge counted once in
        # either): those read as the totals do.
        sums = {c: sum_as_written([_number(r.get(c)) for r in cells],
                                  places["hours" if c in HOUR_COLUMNS else "usd"])
                for c in ("compute_usd", "egress_usd", "billed_hours")
                if c in rows[0] and c in jobs[0] and math.isclose(
                    _exact_sum(rows, c), _exact_sum(jobs, c), rel_tol=1e-9, abs_tol=1e-9)}
        sums = {c: v for c, v in sums.items() if v == v}
    return added_up(rows, places, sums)


def _sums_agree(jobs: Rows, sums: Mapping[str, float], places: Mapping[str, int],
                unit: str) -> bool:
    """Whether the per-job cells of `unit` (dollars or hours) as written at `places` sum
    to their columns' exact sums `sums` as written."""
    p = places[unit]
    cells = added_up(jobs, places)
    return all(sum_as_written([_number(r.get(c)) for r in cells], p) == as_written(v, p)
               for c, v in sums.items() if v == v
               and (c in HOUR_COLUMNS) == (unit == "hours"))


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
    """Whether every row's spend and saving, as written at `places`, make its baseline."""
    for saved, base in _savings(columns):
        for row in rows:
            cells = [_number(row[c]) for c in ("usd", base, saved)]
            if any(c != c for c in cells):
                continue
            spent, made, kept = (as_written(c, places) for c in cells)
            if abs(spent + kept - made) > 10 ** -places / 2:
                return False
    return True


# A row's total and the parts it is the sum of (the spend tables', a move's).
PARTS = {"usd": (("compute_usd", "egress_usd"), ("idle_usd", "egress_usd"))}


def added_up(rows: Rows, places: Mapping[str, int],
             sums: Mapping[str, float] | None = None,
             parts: Sequence[Mapping[str, list[float]]] | None = None) -> list[dict]:
    """`rows` as their cells read at the table's `places`, so that they visibly add up
    (`costsched.amounts`): a row's parts (compute and egress) make its total
    (`parts_as_written`), and each saving is its baseline less its spend, as written.
    `sums`: the figures (as written) the table's columns sum to (the report's totals,
    for a table of SUMS_OF_JOBS): its parts are shared out to them down each column, and
    each row's total is then its parts'. At the store's scale (`places` of charges),
    each row as `_as_charged` writes it (`parts`: what each row's cells are made of)."""
    out = [dict(r) for r in rows]
    if not out or "usd" not in places:
        return out
    p = places["usd"]
    if places.get("charged"):
        made = parts if parts is not None and len(parts) == len(out) else [{}] * len(out)
        return [_as_charged(row, places, m) for row, m in zip(out, made, strict=True)]
    if sums:
        _shared_out(out, places, sums)
    for row in out:
        total = _number(row.get("usd"))
        for parts in PARTS["usd"]:
            if total == total and all(c in row for c in parts) and not sums:
                exact = [_number(row[c]) for c in parts]
                if all(v == v for v in exact) and abs(math.fsum(exact) - total) < 1e-9:
                    for c, v in zip(parts, parts_as_written(total, exact, p), strict=True):
                        row[c] = v
        _saved_as_written(row, total, p)
    return out


def _saved_as_written(row: dict, total: float, p: int) -> None:
    """Each saving of `row` its baseline less its spend `total`, as written at `p`
    decimals; one smaller than the last decimal (`costsched.amounts`) is none: 0, its
    baseline read as the spend, never 'saved $0.000001' by a job that ran on it."""
    for saved, base in _savings(list(row)):
        exact = _number(row[saved])
        if exact == exact and as_written(exact, p) == 0:
            row[saved], row[base] = 0.0, total
        elif (made := difference_as_written(_number(row[base]), total, p)) == made:
            row[saved] = made


def _as_charged(row: dict, places: Mapping[str, int], made: Mapping[str, list[float]]
                ) -> dict:
    """A row of charges as written at the store's scale (`places`): a cell made of
    charges (`made`: a job's compute of its placements') the sum of them as written, any
    other as it reads alone, a row's total the sum of its parts as written
    (`total_as_written`), each saving its baseline less that total as written."""
    p = places["usd"]
    total = _number(row.get("usd"))
    adds = [parts for parts in PARTS["usd"] if total == total and all(c in row for c in parts)
            and all((v := _number(row[c])) == v for c in parts)
            and abs(math.fsum(_number(row[c]) for c in parts) - total) < 1e-9]
    for column, unit in PART_COLUMNS.items():
        if column in row and made.get(column):
            row[column] = total_as_written(made[column], places[unit])
    for parts in adds:  # the total of its parts as written
        total = row["usd"] = total_as_written([_number(row[c]) for c in parts], p)
    _saved_as_written(row, total, p)
    return row


def _shared_out(rows: list[dict], places: Mapping[str, int], sums: Mapping[str, float]
                ) -> None:
    """Each column of `rows` that `sums` totals shared out to its figure as written
    (`parts_as_written`); each row's total is then the sum of its parts as written."""
    for column, figure in sums.items():
        if column not in rows[0] or figure is None or figure != figure:
            continue
        p = places["hours" if column in HOUR_COLUMNS else "usd"]
        exact = [_number(r[column]) for r in rows]
        if any(v != v for v in exact):
            continue
        for row, v, own in zip(rows, parts_as_written(figure, exact, p), exact, strict=True):
            # A part shared out to nothing keeps its own figure ('<0.0001', which adds
            # nothing as written), never '0.00' for what was charged.
            row[column] = own if not v and abs(own) >= NOISE else v
    for row in rows:
        for parts in PARTS["usd"]:
            if "usd" in row and all(c in row for c in parts):
                made = sum_as_written([row[c] for c in parts], places["usd"])
                row["usd"] = made if made or not any(
                    abs(_number(row[c])) >= NOISE for c in parts) else _number(row["usd"])


def shown_rows(name: str, tables: Mapping[str, Any]) -> tuple[dict[str, int], list[dict]]:
    """The report's table `name` (of its `tables` by name: `Report.rows`, `report --json`'s
    document) as every view writes it: its precision (`places_of`) and its rows as they
    read at it (`added_up`), a table of SUMS_OF_JOBS summing to the report's totals."""
    _, rows = records(tables.get(name) or [])
    places = places_of(name, rows, tables)
    if places.get("charged"):
        shown = added_up(rows, places, parts=parts_of(tables, name))
    elif name in SPEND_TABLES:
        shown = _added_up_in(name, {**spend_tables(tables), name: rows}, places)
    else:
        shown = added_up(rows, places)
    # (The per-job table leads with the job's id.)
    return places, shown if name == "jobs" else told_apart(shown)


def told_apart(rows: list[dict]) -> list[dict]:
    """`rows` with the name of each job that shares it with another job of the table
    followed by its id ('fit (job 3)'), so that a view that shows names alone tells them
    apart (--json keeps the name and the id as they are)."""
    ids: dict[object, set] = {}
    for row in rows:
        if "name" in row and "job_id" in row:
            ids.setdefault(row["name"], set()).add(row["job_id"])
    for row in rows:
        if len(ids.get(row.get("name"), ())) > 1:
            row["name"] = f"{row['name']} (job {row['job_id']})"
    return rows


def shown_totals(tables: object, totals: Mapping[str, float | None] | None = None,
                 least: Mapping[str, int] | None = None) -> dict[str, float | None]:
    """The report's totals (TOTALS and instance-hours) as the per-job table's cells as
    written make them (`sum_as_written`, at `spend_places`): None where no job has the
    figure (a baseline that applies to none); `totals`' figure of a column the rows do
    not have. `tables`, `least`: see `spend_places`."""
    places = spend_places(tables, least)
    cells = added_up(spend_tables(tables)["jobs"], places, parts=parts_of(tables, "jobs"))
    out: dict[str, float | None] = {}
    for c in TOTALS:
        p = places["hours" if c in HOUR_COLUMNS else "usd"]
        if cells and c not in cells[0]:
            out[c] = (totals or {}).get(c)
            continue
        # What was charged is never zero where a row was ('<$0.0001'); a saving may be.
        add = total_as_written if c in PART_COLUMNS or c == "egress_usd" else sum_as_written
        total = add([_number(r.get(c)) for r in cells], p)
        out[c] = None if total != total else total
    out["instance_hours"] = round(math.fsum(
        as_written(_number(r.get("billed_hours")), places["hours"]) * _nodes(r)
        for r in cells if _number(r.get("billed_hours")) == _number(r.get("billed_hours"))),
        places["hours"])
    return out


def _exact_sum(rows: Rows, column: str) -> float:
    return math.fsum(v for r in rows if (v := _number(r.get(column))) == v)


def _nodes(row: Mapping[str, Any]) -> float:
    nodes = _number(row.get("nodes", 1))
    return nodes if nodes == nodes else 1.0


def missing(value: object) -> bool:
    """None, NaN or NaT (never a text)."""
    return value is None or (not isinstance(value, str) and value != value)


def format_cell(column: str, value: object, places: Mapping[str, int] | None = None) -> str:
    """A value of `column` as the report's tables show it (the CLI's too); `places`: the
    table's precision of dollars, hours and ratios (`table_places`; else each figure's
    own)."""
    if missing(value):
        return "-"
    places = places or {}
    if column == "usd_per_gb":  # a price, zero too, at no fewer decimals than its row's $
        return charged_usd(float(value), max(MAX_DECIMALS, places.get("usd") or 0))  # type: ignore[arg-type]
    if column.endswith("usd_per_hour"):
        return stored_price(float(value))  # type: ignore[arg-type]  # a price, as quoted
    if column == "budget_usd":
        # as the user set it, at its row's precision (one row, one precision)
        return given(float(value), places.get("usd"))  # type: ignore[arg-type]
    if column.endswith("usd"):
        if places.get("charged"):  # at the store's scale
            return charged_usd(float(value), places["usd"])  # type: ignore[arg-type]
        return usd(float(value), places.get("usd"))  # type: ignore[arg-type]
    if column in HOUR_COLUMNS:
        if places.get("charged"):
            return charged_hours(float(value), places["hours"])  # type: ignore[arg-type]
        return hours(float(value), places.get("hours"))  # type: ignore[arg-type]
    if column in ("used", "done") or column.endswith("_share"):  # steps done: as status's
        return percent_down(float(value)) if column == "done" else f"{value:.0%}"  # type: ignore[arg-type]
    if column.endswith("_sps"):
        return sps(float(value))  # type: ignore[arg-type]
    if is_ratio(column):
        return ratio(float(value), places.get("ratio"))  # type: ignore[arg-type]
    if column == "lost_steps":  # a count of steps, as status counts them
        return f"{int(float(value)):,}"  # type: ignore[arg-type]
    if column == "flagged":
        return "yes" if value else ""
    if column == "day":
        return f"{_time(value):%Y-%m-%d}"
    if isinstance(value, datetime):
        return when(value)
    if column in OTHER_FIGURES:  # the rule of hours, at its column's precision, zero too
        if places.get("figures") is not None:
            return charged_hours(float(value), places["figures"])  # type: ignore[arg-type]
        return hours(float(value))  # type: ignore[arg-type]
    if isinstance(value, float):  # the rule of hours, never 0.00 for 0.001
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
          "saved_vs_launch_choice_usd", "billed_hours")


def totals_figures(totals: Mapping[str, float | None], tables: object = None,
                   least: Mapping[str, int] | None = None) -> dict[str, str]:
    """The report's totals (TOTALS) as written: at the spend tables' precision
    (`spend_places`), each the sum of its column's cells as written (`shown_totals`), so
    that the rows visibly add up to them ($0.0043 and $0.0157 to $0.0200, not $0.02).
    `tables`: the report's tables by name, or its per-job rows (a frame or a list of
    dicts); without them, `totals` at one precision. `least`: see `spend_places`."""
    if spend_tables(tables)["jobs"]:
        places = spend_places(tables, least)
        figures = shown_totals(tables, totals, least)
        usd_places, hour_places = places["usd"], places["hours"]
    elif (scale := scale_of(tables)) is not None:
        figures, usd_places, hour_places = dict(totals), scale["usd"], scale["hours"]
    else:
        figures = dict(totals)
        usd_places = decimals([totals[k] for k in TOTALS[:-1]])
        hour_places = decimals([totals["billed_hours"], totals.get("instance_hours")])
    money, spans = (charged_usd, charged_hours) if scale_of(tables) else (usd, hours)
    out = {k: money(figures[k], usd_places) for k in TOTALS[:-1]}
    out["billed_hours"] = spans(figures["billed_hours"], hour_places)
    instance = figures.get("instance_hours")
    out["instance_hours"] = spans(figures["billed_hours"] if instance is None else instance,
                                  hour_places)
    return out | failed_said(totals, tables, usd_places, money)  # apart: `data.saves`


def period_words(since: str | None, until: str, placed: bool) -> str:
    """The report's period as it heads the report: 'SINCE to UNTIL', 'the first placement
    to UNTIL' (no --since), and where nothing was placed in it, that ('up to UNTIL: nothing
    was placed in that period', not 'the first placement to' a time before any)."""
    if not placed:
        return (f"{since} to {until}" if since else f"up to {until}") + (
            ": nothing was placed in that period")
    return f"{since or 'the first placement'} to {until}"


def totals_line(totals: Mapping[str, float | None], tables: object = None,
                least: Mapping[str, int] | None = None) -> str:
    """The report's totals in one line (`totals_figures`): 'Spend $0.0300 (compute
    $0.0264, egress $0.0036) over 0.03 billed hours (a gang's: and instance-hours); ...'."""
    f = totals_figures(totals, tables, least)
    over = (f"{f['billed_hours']} billed hours" if f["instance_hours"] == f["billed_hours"]
            else f"{f['billed_hours']} billed hours ({f['instance_hours']} instance-hours, "
            "each node counted)")
    return (f"Spend {f['usd']} (compute {f['compute_usd']}, egress {f['egress_usd']}) over "
            f"{over}; " + _saved_words([
                (f["saved_vs_on_demand_usd"], "on-demand"),
                (f["saved_vs_launch_choice_usd"], "the launch-time choice kept")])
            + f.get("failed_runs", ""))  # '; failed runs cost $X (each run: $Y, ...)'


def _saved_words(against: list[tuple[str, str]]) -> str:
    """'saved $A against X and $B against Y'; below 0 'cost $B more than Y'; a figure not
    known ('-'), 'against Z: not known', never '- against Z'."""
    saved = [f"{figure} against {what}" for figure, what in against
             if figure != "-" and not figure.startswith("-")]
    dearer = [f"{figure[1:]} more than {what}" for figure, what in against
              if figure != "-" and figure.startswith("-")]
    unknown = [what for figure, what in against if figure == "-"]
    return "; ".join(part for part in (
        "saved " + " and ".join(saved) if saved else "",
        "cost " + " and ".join(dearer) if dearer else "",
        "against " + " and ".join(unknown) + ": not known" if unknown else "") if part)

"""What the report's charged cells are made of, for the views that write them at the
store's scale (`costsched.amounts`: a total is the sum of its parts as written): a job's
compute and billed hours, its placements' charges in the period (as `status` lists them);
a cloud's, the placements on it; a day's row, the pieces of that day. JSON keeps the
exact figures; these lists (`Report.parts`) are not in it."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from costsched.amounts import NOISE, Scale, block_hours, placement_hours

# The tables of charged figures, written at the store's scale (`costsched.amounts`).
CHARGED_TABLES = ("jobs", "clouds", "days", "egress", "moves", "budgets")
# ... and the estimates beside what the jobs took: their hours and dollars read as the
# spend tables' do, whatever other rows the table has (a job's 0.0213 training hours
# never 0.02 in another call).
SCALED_TABLES = (*CHARGED_TABLES, "estimates")


def scale_of(tables: object) -> dict[str, int] | None:
    """The store's scale (`Report.tables`' "scale", {"usd": ..., "hours": ...}) of the
    report's tables by name, as `places` of charged figures ("charged": written by
    `charged_usd`, zero at the scale's decimals); None where it was not read."""
    found = tables.get("scale") if isinstance(tables, Mapping) else None
    if not found:
        return None
    return {"usd": int(found["usd"]), "hours": int(found["hours"]), "charged": 1}


def parts_of(tables: object, name: str) -> list[dict] | None:
    """What the rows of the report's table `name` are made of (`Report.parts`, under
    "parts" of its tables by name), or None."""
    found = tables.get("parts") if isinstance(tables, Mapping) else None
    return (found or {}).get(name)


# The columns written as the sum of their parts, and the unit of each (a job's dollars in
# the estimates: its placements' charges and its egress, so that it reads as its total in
# the spend tables).
PART_COLUMNS = {"compute_usd": "usd", "billed_hours": "hours", "usd": "usd"}


def row_parts(rows: Mapping[str, list[dict]], spent: Sequence[tuple[Any, float, float, float]],
              written: Callable[[float, float, bool, int], float] | None = None,
              live: Collection[int] = ()) -> dict[str, list[dict[str, list[float]]]]:
    """For each row of the spend tables (`rows`: "jobs", "clouds", "days"), the exact
    charges its compute and billed hours are made of (PART_COLUMNS), in the rows' order.
    `spent`: (piece, hours, usd, on-demand usd) of each piece of a placement. `written`:
    (hours, usd, whether its placement is `live`, its id) to its hours as `status` writes
    a placement's (`amounts.placement_hours`), for each placement (a day's row: each
    piece)."""
    def hours_of(h: float, usd: float, placement: int) -> float:
        return h if written is None else written(h, usd, placement in live, placement)

    placed: dict[int, list] = {}  # placement id: [job, cloud, hours, usd]
    day_of: dict[tuple, list[tuple[float, float]]] = {}
    for piece, hours, usd, _ in spent:
        p = piece.placement
        found = placed.setdefault(p.id, [p.job_id, p.cloud, 0.0, 0.0])
        found[2] += hours
        found[3] += usd
        day_of.setdefault((piece.day, p.job_id, p.cloud), []).append(
            (hours_of(hours, usd, p.id), usd))

    by_job: dict[Any, list[list]] = {}
    by_cloud: dict[Any, list[list]] = {}
    for placement, c in placed.items():  # grouped once: a report of many jobs is one pass
        c[2] = hours_of(c[2], c[3], placement)
        by_job.setdefault(c[0], []).append(c)
        by_cloud.setdefault(c[1], []).append(c)

    def of(chosen: list[list]) -> dict[str, list[float]]:
        return {"compute_usd": [c[3] for c in chosen], "billed_hours": [c[2] for c in chosen]}

    out: dict[str, list[dict[str, list[float]]]] = {
        "jobs": [of(by_job.get(r["job_id"], [])) for r in rows.get("jobs") or []],
        "clouds": [of(by_cloud.get(r["cloud"], [])) for r in rows.get("clouds") or []]}
    days = []
    for r in rows.get("days") or []:
        found = day_of.get((r["day"], r["job_id"], r["cloud"]), [])
        days.append({"compute_usd": [u for _, u in found],
                     "billed_hours": [h for h, _ in found]})
    out["days"] = days
    return out


def estimate_parts(rows: Sequence[Mapping[str, Any]], runs: Sequence[tuple[Any, float]],
                   egress: Sequence[Any], spent: Mapping[Any, list[float]] | None = None
                   ) -> list[dict[str, list[float]]]:
    """For each row of the estimates table (`rows`), the charges its dollars are made of:
    its job's placements' (`runs`: (placement, usd)) and its moves' egress (`egress`), so
    that it reads as the job's total in the spend tables (the sum of its parts as
    written), never a figure rounded on its own beside it; `spent`: by job, the parts of
    its total in the spend table where its dollars are that total (those very parts)."""
    made: dict[Any, list[float]] = {}
    for placement, usd in runs:
        made.setdefault(placement.job_id, []).append(float(usd))
    copied: dict[Any, float] = {}
    for move in egress:  # one egress cell per job, as the spend table has it
        copied[move.job_id] = copied.get(move.job_id, 0.0) + float(move.usd)
    for job, usd in copied.items():
        made.setdefault(job, []).append(usd)
    made.update(spent or {})
    return [{"usd": made.get(r["job_id"], []) if r["usd"] == r["usd"] else []}
            for r in rows]


# Where a placement's charge came from, as `status` says it (`cli.status_lines`).
_FROM = {"stored": "the stored prices of its time", "catalog": "the catalog's list prices"}
REPRICED_COLUMNS = ["job_id", "name", "placement_id", "reason", "offering", "nodes",
                    "hours", "usd", "usd_per_hour", "charged_usd_per_hour", "price_source",
                    "line"]


def repriced_rows(spent: Sequence[tuple[Any, float, float, float]], sources: Sequence[str],
                  names: Mapping[int, str], nodes: Mapping[int, int]) -> list[dict]:
    """The placements charged in the period at another hourly price on average than the
    one they were placed at (`costs.repriced`: a price imported later, in effect then),
    each with the line `status` and the dashboard say of it (`costs.rate_words`, both
    prices one instance's in the columns, for its nodes in the line). Its average is its
    charge in the period over its hours there, per node. `spent`: (piece, hours, usd,
    on-demand usd) of each piece of a placement; `sources`: each piece's price source."""
    from costsched.costs import rate_words, repriced
    from costsched.vocabulary import offering_label

    placed: dict[int, list] = {}  # placement id: [placement, hours, usd, source]
    for (piece, hours, usd, _), source in zip(spent, sources, strict=True):
        found = placed.setdefault(piece.placement.id, [piece.placement, 0.0, 0.0, source])
        found[1] += hours
        found[2] += usd
    out = []
    for p, hours, usd, source in placed.values():
        n = int(nodes.get(p.job_id, 1))
        average = usd / hours / n if hours > 0 else None
        if not repriced(p.usd_per_hour, average, n):
            continue
        where = offering_label(p.cloud, p.region, p.zone, p.instance_type, p.market)
        line = (f"job {p.job_id}: {p.reason} on {where} is charged from "
                f"{_FROM.get(source, 'its prices')}: "
                f"{rate_words(p.usd_per_hour, average, n, '/h')}")
        out.append(dict(zip(REPRICED_COLUMNS, (
            p.job_id, names[p.job_id], p.id, p.reason, where, n, hours, usd,
            float(p.usd_per_hour), average, source, line), strict=True)))
    return out


def scaled_parts(rows: Mapping[str, list[dict]],
                 spent: Sequence[tuple[Any, float, float, float]], scale: Scale,
                 live: Sequence[Any]) -> tuple[Scale, dict[str, list[dict[str, list[float]]]]]:
    """The report's scale for charged figures, the store's `scale` as it is (money and
    hours), and what its spend tables' cells are made of (`row_parts`, each placement's
    hours as `status` writes them): each cell is written as the sum of its parts as
    written at it, each total as the sum of its cells. `live`: the placements open now
    (their figures grow). A job's placements' hours read at one precision, chosen from
    them all (`job_hours`), as `status` and the dashboard read them."""
    opened = {p.id for p in live}
    least = job_hours(spent, scale, opened)
    return scale, row_parts(rows, spent, lambda h, usd, open_, placement: placement_hours(
        h, usd, scale.usd, least.get(placement, scale.hours), open_), opened)


def job_hours(spent: Sequence[tuple[Any, float, float, float]], scale: Scale,
              live: Collection[int]) -> dict[int, int]:
    """{placement id: the decimals of its hours}: its job's placements' together, from the
    store's scale (`amounts.block_hours`), each placement's hours and dollars in the period."""
    placed: dict[int, list] = {}  # placement id: [job, hours, usd]
    for piece, hours, usd, _ in spent:
        found = placed.setdefault(piece.placement.id, [piece.placement.job_id, 0.0, 0.0])
        found[1] += hours
        found[2] += usd
    lines: dict[int, list[tuple[float, float, float, bool]]] = {}
    for placement, (job, hours, usd) in placed.items():
        if hours >= NOISE and abs(usd) >= NOISE:  # a product is written of it
            lines.setdefault(job, []).append((hours, usd / hours, usd, placement in live))
    block = {job: block_hours(found, scale.usd, scale.hours) for job, found in lines.items()}
    return {p: block[job] for p, (job, _, _) in placed.items() if job in block}

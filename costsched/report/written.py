"""What the report's charged cells are made of, for the views that write them at the
store's scale (`costsched.amounts`: a total is the sum of its parts as written): a job's
compute and billed hours, its placements' charges in the period (as `status` lists them);
a cloud's, the placements on it; a day's row, the pieces of that day. JSON keeps the
exact figures; these lists (`Report.parts`) are not in it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

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


# The columns written as the sum of their parts, and the unit of each.
PART_COLUMNS = {"compute_usd": "usd", "billed_hours": "hours"}


def row_parts(rows: Mapping[str, list[dict]], spent: Sequence[tuple[Any, float, float, float]]
              ) -> dict[str, list[dict[str, list[float]]]]:
    """For each row of the spend tables (`rows`: "jobs", "clouds", "days"), the exact
    charges its compute and billed hours are made of (PART_COLUMNS), in the rows' order.
    `spent`: (piece, hours, usd, on-demand usd) of each piece of a placement."""
    placed: dict[int, list] = {}  # placement id: [job, cloud, hours, usd]
    day_of: dict[tuple, list[tuple[float, float]]] = {}
    for piece, hours, usd, _ in spent:
        p = piece.placement
        found = placed.setdefault(p.id, [p.job_id, p.cloud, 0.0, 0.0])
        found[2] += hours
        found[3] += usd
        day_of.setdefault((piece.day, p.job_id, p.cloud), []).append((hours, usd))

    by_job: dict[Any, list[list]] = {}
    by_cloud: dict[Any, list[list]] = {}
    for c in placed.values():  # grouped once: a report of many jobs is one pass
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

"""The runs that failed, each with what it cost in the period: a job's run is what it ran
from its launch, or from a start after it stopped or failed, to its next end; one that
ended failed bought no result, whatever the job did after (a job started again after a
failure and then finished still had its failed run). The report says their spend apart
from its savings ("failed runs cost $X", each run on a line of its own that adds to it)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from costsched.amounts import total_as_written
from costsched.model import FINAL_STATES
from costsched.store.job_rows import EventRow


def failed_runs(events: Sequence[EventRow], spent: Sequence[tuple[Any, float]],
                egress: Sequence[Any], names: Mapping[int, str]) -> list[dict]:
    """One row per run that ended failed and cost something in the period, in the order
    they failed: its job, when it started and failed, its compute (`spent`: each piece's
    placement and its dollars in the period) and egress (`egress`: the moves copied in
    the period) over the run, and their sum. `events`: the jobs' state changes."""
    ends: dict[int, list[EventRow]] = {}
    for e in sorted(events, key=lambda e: (e.at, e.id)):
        if e.to_state in FINAL_STATES:
            ends.setdefault(e.job_id, []).append(e)
    rows = []
    for job, found in ends.items():
        begun: datetime | None = None  # the run's start: after the job's previous end
        for e in found:
            if e.to_state == "failed":
                rows.append(_run(job, names.get(job, ""), begun, e.at, spent, egress))
            begun = e.at
    return sorted((r for r in rows if r["usd"] > 0), key=lambda r: (r["failed_at"], r["job_id"]))


def _run(job: int, name: str, begun: datetime | None, failed: datetime,
         spent: Sequence[tuple[Any, float]], egress: Sequence[Any]) -> dict:
    def inside(at: datetime) -> bool:
        return (begun is None or at >= begun) and at <= failed

    pieces = [(p, usd) for p, usd in spent if p.job_id == job and inside(p.start_at)
              and p.end_at is not None]
    compute = sum(usd for _, usd in pieces)
    moved = sum(m.usd for m in egress if m.job_id == job and inside(m.at))
    first = min((p.start_at for p, _ in pieces), default=None)
    return {"job_id": job, "name": name, "started_at": first, "failed_at": failed,
            "compute_usd": float(compute), "egress_usd": float(moved),
            "usd": float(compute + moved)}


def failed_said(totals: Mapping[str, float | None], tables: object, places: int,
                money: Callable[[float | None, int], str]) -> dict[str, str]:
    """The failed runs' spend as the totals line says it (`cells.totals_figures`, whose
    decimals `places` and writer `money` it takes): {"failed_usd": the figure,
    "failed_runs": '; failed runs cost $X (job 17 (houses), failed 2026-03-01 12:00 UTC:
    $Y, ...)'}, the figure the sum of the runs' as written; {} when none failed."""
    runs = tables.get("failed_runs") if isinstance(tables, Mapping) else None
    if runs is None:  # no runs told apart (a table alone): the failed jobs' spend
        failed = totals.get("failed_usd")
        return {"failed_usd": money(failed, places),
                "failed_runs": f"; failed runs cost {money(failed, places)}"} if failed else {}
    if not runs:
        return {}
    # (a run charged less than the last decimal reads '<$0.0001', never '$0.0000')
    figure = money(total_as_written([r["usd"] for r in runs], places), places)
    each = ", ".join(f"job {r['job_id']} ({r['name']}), failed {_when(r['failed_at'])}: "
                     + money(float(r["usd"]), places) for r in runs)
    return {"failed_usd": figure, "failed_runs": f"; failed runs cost {figure} ({each})"}


def _when(at: object) -> str:
    if isinstance(at, str):
        at = datetime.fromisoformat(at.replace("Z", "+00:00"))
    return f"{at:%Y-%m-%d %H:%M} UTC"  # type: ignore[str-format]

"""How the pages write values (the report's own formats) and the data their charts draw."""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

import pandas as pd
from markupsafe import Markup

from costsched.amounts import (
    CHARGED,
    as_written,
    charged_usd,
    charging,
    column_places,
    decimals,
    derived_per_hour,
    given,
    hours,
    stored_price,
    total_as_written,
    usd,
    usd_all,
)
from costsched.amounts import age as age_of
from costsched.bundled_prices import age_text
from costsched.dashboard import placed
from costsched.measured import sps
from costsched.model import SHOWN_FINAL
from costsched.optimize.unmatched_estimates import ESTIMATED_MARK
from costsched.report.cells import period_words
from costsched.report.html import (
    WHOLE,
    format_cell,
    heading,
    places_of,
    shown_rows,
    spend_places,
    table_places,
    totals_figures,
    totals_line,
)
from costsched.report.html import _whole as whole_words
from costsched.report.written import scale_of
from costsched.service.views import NOT_REACHED, due_hours, due_words, dumps, job_progress
from costsched.vocabulary import ENDED_SHORT, counted, offering_label
from costsched.work import NOT_KNOWN


def when(value: Any) -> str:
    """A time as the report writes it ('2026-01-01 12:00 UTC'); '-' for none."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return "-"
    return f"{pd.Timestamp(value):%Y-%m-%d %H:%M} UTC"


def _due_args(job: dict, now: datetime) -> tuple:
    ended, state = job.get("ended_at"), str(job.get("state") or "")
    return (pd.Timestamp(job["deadline_at"]).to_pydatetime(), now, state in SHOWN_FINAL,
            "succeeded" if state == ENDED_SHORT else state,  # `due_words` reads `short`
            pd.Timestamp(ended).to_pydatetime() if ended else None)


def due(job: dict, places: dict[str, int] | int | None = None,
        now: datetime | None = None) -> str:
    """When a job with a deadline is due, in `status`'s words ('' without a deadline);
    `places`: the page's precision of hours (`due_places`, `job_places`), so that the
    hours of every such line on a page read alike, as `status`'s do."""
    if not job.get("deadline_at"):
        return ""
    if isinstance(places, dict):
        places = places.get("hours")
    short = bool(job.get("steps_not_reached"))
    words = due_words(*_due_args(job, now or datetime.now(timezone.utc)), places,
                      short=short)
    # Every page that shows the line shows the steps not reached beside it: said once.
    return words.removesuffix(NOT_REACHED) if short else words


def due_places(jobs: list[dict], now: datetime | None = None) -> dict[str, int]:
    """The precision of the hours of the deadline lines of `jobs` (a page of them), read
    together (`costsched.amounts.hours_all`): '5.98 h' beside '0.0042 h' reads '5.9800'."""
    now = now or datetime.now(timezone.utc)
    return {"hours": decimals([due_hours(*_due_args(j, now)) for j in jobs
                               if j.get("deadline_at")])}


def job_places(job: dict, report: dict, now: datetime | None = None) -> dict[str, int]:
    """One precision for a job's page: that of charged figures for its placements' costs and the
    report's tables and totals on it (`report.cells.spend_places`), as `status` and
    `report` write them; for hours, those its placements' rows read at together
    (`placed.spans`: `status JOB`'s), which its totals line takes too (`totals_line`'s
    `least`); its deadline's hours at their own. `report`: the report's document, with the
    charged figures' precision (`amounts.CHARGED`) under "scale"."""
    places = table_places(pd.DataFrame(job.get("placements") or []))
    places["hours"] = max(places["hours"], due_places([job], now)["hours"])
    scale = scale_of(report)
    if scale is not None:  # as every view writes charges
        places = {**places, **scale}
    elif (report or {}).get("jobs"):
        places = {**places, **spend_places(report, places)}
    return {**places, "hours": placed.spans(job.get("placements") or [], places)}


# The precision of a page's charged figures, as every view writes them (`amounts.CHARGED`;
# "charged": zero at its decimals, a total the sum of its parts as written).
CHARGED_PLACES = {**CHARGED.places(), "charged": 1}


def _job_amounts(job: dict) -> list[float]:
    """What a job's spend so far is made of: each placement as charged (an open one never
    zero, `costsched.amounts.charging`) and the checkpoints' copies between clouds."""
    out = [charging(float(p["usd"]), not p.get("end_at")) for p in job.get("placements") or []
           if isinstance(p.get("usd"), (int, float)) and math.isfinite(p["usd"])]
    egress = job.get("egress_usd")
    return out + ([float(egress)] if isinstance(egress, (int, float)) and egress else [])


def spent(job: dict, places: dict[str, int]) -> str:
    """A job's spend so far, as `status` writes it: the sum of its placements and egress
    as written at charged figures' precision (`places`), so that its legs visibly add up
    to it."""
    parts = _job_amounts(job)
    if not parts or not places.get("charged"):
        return cell("usd", job.get("cost_usd"), places)
    return charged_usd(total_as_written(parts, places["usd"]), places["usd"])


def forecast(job: dict, value: float | None, places: dict[str, int]) -> str:
    """A job's forecast (`value`: its spend so far and what the rest is expected to cost),
    at the page's precision (`places`: charged figures') as its spend so far reads
    (`spent`) plus the rest as written: never below it ('$0.01' under '$0.01103')."""
    if value is None or not math.isfinite(float(value)):
        return "-"
    parts, cost = _job_amounts(job), job.get("cost_usd")
    if not parts or not places.get("charged") or not isinstance(cost, (int, float)):
        return cell("usd", value, places)
    p = places["usd"]
    so_far = total_as_written(parts, p)
    return charged_usd(round(so_far + as_written(float(value) - float(cost), p), p), p)


def spent_all(jobs: list[dict], places: dict[str, int]) -> str:
    """The spend so far of `jobs` together: the sum of each job's as written (`spent`)."""
    if not places.get("charged"):
        return cell("usd", math.fsum(j["cost_usd"] for j in jobs
                                     if isinstance(j.get("cost_usd"), (int, float))), places)
    p = places["usd"]
    return charged_usd(total_as_written([total_as_written(_job_amounts(j), p) for j in jobs
                                         if _job_amounts(j)], p), p)


def leg_costs(job: dict, places: dict[str, int]) -> list[str]:
    """The job's placements' costs at the page's precision (`job_places`: charged
    figures'), each as it reads everywhere (`placed.rows`): they visibly add up to its spend
    (`spent`)."""
    return [row.usd for row in placed.rows(job, places)]


def age(value: Any, at: datetime | None = None) -> str:
    """How long ago `value` was, by the one rule of ages (`costsched.amounts.age`: '3 h',
    '12 days', '4 mo')."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return "-"
    now = pd.Timestamp(at) if at is not None else pd.Timestamp.now(tz="UTC")
    return age_of((now - pd.Timestamp(value)).total_seconds())


def days_old(value: float | None, superseded: bool = False) -> str:
    """A price's age in days as `costsched gpus` writes it ('4 mo'), '!' after a
    superseded one's; '-' for none."""
    text = "-" if value is None or pd.isna(value) else age_text(float(value))
    return text + ("!" if superseded and text != "-" else "")


def offering(p: dict | None) -> str:
    """'aws us-east-1a p3.2xlarge spot'."""
    if not p:
        return "-"
    return offering_label(p["cloud"], p["region"], p.get("zone"), p["instance_type"],
                          p["market"])


def charged_rate(p: dict, unit: str = "") -> str:
    """A placement's hourly price as charged, so that its hours times it make its cost,
    as `status` says it (`costs.rate_words`): its `usd_per_hour` ('$0.9200'; a gang's for
    its nodes, '$0.6000 for 2 nodes'), or where it was charged at another price than it
    was placed at (`costs.repriced`), the average charged beside the price when it began
    ('$2.7500 on average ($0.9200 when placed)'); `unit`: '/h' after each price."""
    from costsched.costs import rate_words

    return rate_words(p.get("usd_per_hour"), p.get("charged_usd_per_hour"),
                      p.get("nodes") or 1, unit)


def cell(column: str, value: Any, places: dict[str, int] | None = None) -> str:
    """A report table's cell (`costsched.report.html.format_cell`), at its table's
    precision (`places`)."""
    if isinstance(value, str) and column in ("at", "day", "since", "until"):
        value = pd.Timestamp(value)
    return format_cell(column, value, places)


def places(rows: list[dict], name: str = "", jobs: list[dict] | None = None
           ) -> dict[str, int]:
    """The precision of a table's dollars and hours (`report.html.table_places`); of the
    report's table `name` with its per-job rows `jobs`, `report.html.places_of`."""
    return places_of(name, pd.DataFrame(rows), pd.DataFrame(jobs or []))


def shown(tables: dict, name: str) -> tuple[dict[str, int], list[dict]]:
    """The report's table `name` (of its `tables`, `report --json`'s document) as it reads
    (`report.cells.shown_rows`): its precision and its rows, whose figures add up as
    written, as the command line and the HTML file write them."""
    return shown_rows(name, tables)


def price_moves(changes: list[dict]) -> dict[str, dict]:
    """The changes of a job's placement (`data.price_changes`) that change its hourly
    price, by when: a migration (a move for price) with what it saves, a recovery or a
    start onto another price as that; one at the same price (a recovery in place) is no
    price change and is left out, never '$0.0796/h -> $0.0796/h (saves $0.00/h)'."""
    return {when(c["at"]): c for c in changes
            if stored_price(c["from"]) != stored_price(c["to"])}


def whole(text: Any) -> Markup:
    """`text` escaped, each hyphenated word of it kept on one line ('ended-short',
    'charlm-native': `<span class="word">`), wrapping at spaces: the report's HTML's rule
    for a job's name and state (`report.html.WHOLE`), the same in every table here."""
    return Markup(whole_words("" if text is None else str(text)))  # (escaped by it)


def estimated(report: dict) -> set[int]:
    """The jobs of a report's document (`report --json`'s) whose launch choice kept rests
    on an estimated speed: those its `estimated_baselines` lines speak of, whose figure
    the pages mark `ESTIMATED_MARK`, the mark those lines begin with."""
    return {int(r["job_id"]) for r in report.get("estimated_baselines") or []}


def chart_json(data: Any) -> str:
    """Chart data for a `<script type="application/json">` block: JSON with '<', '>' and
    '&' escaped, so no value can close the block."""
    return (dumps(data).replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("&", "\\u0026"))


def budget_state(spent: float | None, budget: float | None) -> str:
    """'over', 'near' (80% or more, as the report's budget table says) or ''."""
    from costsched.report.data import NEAR_BUDGET

    if spent is None or budget is None or budget <= 0:
        return ""
    return "over" if spent > budget else "near" if spent >= NEAR_BUDGET * budget else ""


def in_setup(job: dict) -> str:
    """A job (`status --json`'s) whose instance reports its setup running, as `status`
    says it (`setup_phase.setup_words`); '' for any other."""
    from costsched.service.setup_phase import setup_words

    since = job.get("setup_since")
    if not since:
        return ""
    return setup_words(datetime.fromisoformat(since.replace("Z", "+00:00")),
                       float(job.get("setup_seconds") or 0.0))


def noun(count: int, singular: str, plural: str | None = None) -> str:
    """The noun of `counted` ('job' for 1, 'jobs' else), where a card shows the count
    itself apart."""
    return counted(count, singular, plural).partition(" ")[2]


def price(value: float | None, places: int | None = None) -> str:
    """A stored price alone (`stored_price`), or in a column at its one precision
    (`places`: `price_places` of the column's prices)."""
    return stored_price(value) if places is None else usd(value, places)


def per_gpu_hour(value: float | None, of: float | None = None,
                 places: int | None = None) -> str:
    """A price per GPU-hour (`derived_per_hour` of the price `of`), or in a column at
    its one precision (`places`)."""
    return derived_per_hour(value, of) if places is None else usd(value, places)


def price_places(rows: Iterable[Any], key: str = "usd_per_hour") -> int:
    """The one precision of a column of stored prices (`amounts.column_places`): the
    `key` of each of `rows`."""
    return column_places([getattr(r, key, None) if not isinstance(r, dict) else r.get(key)
                          for r in rows])


FILTERS = {"noun": noun, "when": when, "age": age, "due": due, "days_old": days_old,
           "offering": offering, "cell": cell, "heading": heading, "chart_json": chart_json,
           "progress": job_progress, "places": places, "due_places": due_places,
           "job_places": job_places, "leg_costs": leg_costs, "shown": shown,
           "spent": spent, "spent_all": spent_all,
           "price": price, "per_gpu_hour": per_gpu_hour,
           "price_places": price_places, "hours": hours, "sps": sps,
           "totals_line": totals_line, "given": given, "charged_rate": charged_rate}
FILTERS["in_setup"] = in_setup  # `job | in_setup`: its setup's words ('' past setup)
FILTERS["estimated"] = estimated
FILTERS["whole"] = whole  # a name or a state, never broken at a hyphen
FILTERS["open_rate"] = placed.open_rate
FILTERS["placed"] = placed.rows  # `job | placed(places)`: (hours, rate, usd) as `status`'s
FILTERS["forecast"] = forecast  # `job | forecast(value, places)`: never below its spend
# `given`: a budget or a cap as the user set it, alone ('$2.00'); `given(places)` beside
# charged figures at their precision ('$2.0000' beside '$0.0049').
# `usd_all(a, b, c)`: amounts read together, at one precision (`costsched.amounts`).
# `totals_figures(totals, tables)`: the report's totals at its spend tables' precision.
# `charged_places`: the precision of charged figures (`CHARGED_PLACES`).
GLOBALS = {"charged_places": CHARGED_PLACES, "usd_all": usd_all,
           "totals_figures": totals_figures, "work_not_known": NOT_KNOWN,
           "period_words": period_words, "estimated_mark": ESTIMATED_MARK,
           "whole_columns": WHOLE}


def timeline(placements: list[dict]) -> dict:
    """A job's placements as floating bars: one row per offering, [start, end] in epoch
    milliseconds (an open placement ends now)."""
    now = pd.Timestamp.now(tz="UTC")
    bars = []
    for p in placements:
        start = pd.Timestamp(p["start_at"])
        end = pd.Timestamp(p["end_at"]) if p.get("end_at") else now
        bars.append({"label": offering(p), "from": start.value // 10**6,
                     "to": end.value // 10**6, "reason": p.get("reason", ""),
                     "usd": p.get("usd")})
    return {"bars": bars}


def day_series(days: list[dict]) -> dict:
    """The report's spend per day as bars stacked by cloud."""
    labels = sorted({cell("day", d["day"]) for d in days})
    clouds = sorted({d["cloud"] for d in days})
    totals = {(cell("day", d["day"]), d["cloud"]): 0.0 for d in days}
    for d in days:
        totals[(cell("day", d["day"]), d["cloud"])] += d["usd"] or 0.0
    return {"labels": labels, "series": [
        {"label": c, "values": [round(totals.get((day, c), 0.0), 4) for day in labels]}
        for c in clouds]}


def history_series(rows: list[dict], since: Any, until: Any) -> dict:
    """A price history as steps, one line per offering (zone or region, and market), from
    `since` (a price older than that is drawn from there) carried on to `until`."""
    lines: dict[str, list[list[float]]] = {}
    start = pd.Timestamp(since).value // 10**6
    for r in rows:
        name = f"{r['zone'] or r['region']} {r['market'].replace('_', '-')}"
        lines.setdefault(name, []).append(
            [max(start, pd.Timestamp(r["effective_at"]).value // 10**6), r["usd_per_hour"]])
    end = pd.Timestamp(until).value // 10**6
    for points in lines.values():
        points.append([max(end, points[-1][0]), points[-1][1]])
    return {"series": [{"label": k, "points": v} for k, v in sorted(lines.items())]}

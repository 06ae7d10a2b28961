"""A cost report as one self-contained HTML file: inline CSS, figures as base64 PNG, no
external URL, every text from the store escaped."""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from costsched.amounts import MAX_DECIMALS, decimals, hours, per_hour, usd
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.measured import sps
from costsched.model import InvalidInput
from costsched.report.data import Report
from costsched.report.tables import TABLES

if TYPE_CHECKING:  # matplotlib loads when a chart is drawn (`report --html`)
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 1.8em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; }
th { background: #f0f0f0; text-align: left; } td.num { text-align: right; }
.figures img { max-width: 100%; display: block; margin: 0.5em 0; }
.note { color: #666; }
"""



def render(report: Report) -> str:
    """The report as one HTML document."""
    period = (f"{_when(report.since) if report.since is not None else 'the first placement'}"
              f" to {_when(report.until)}")
    summary = totals_line(report.totals, report.jobs) + "."
    figures = [("Cost over time", _over_time(report)), ("Cost per job", _per_job(report)),
               ("Cost per cloud", _per_cloud(report))]
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        "<title>costsched cost report</title>", f"<style>{_CSS}</style>", "</head>", "<body>",
        "<h1>costsched cost report</h1>", f"<p>{escape(period)}</p>",
        f"<p>{escape(summary)}</p>",
        *(f"<p>throughput: {escape(line)}</p>" for line in report.speeds["flag"] if line),
        '<div class="figures">',
        *(f'<h2>{escape(title)}</h2><img alt="{escape(title)}" '
          f'src="data:image/png;base64,{png}">' for title, png in figures),
        "</div>",
    ]
    for name, heading, note in TABLES:
        parts.append(f"<h2>{escape(heading)}</h2>")
        if note:
            parts.append(f'<p class="note">{escape(note)}</p>')
        parts.append(_table(getattr(report, name), report_places(report, name)))
    parts += ["</body>", "</html>"]
    return "\n".join(parts) + "\n"


def write(report: Report, path: str | Path) -> Path:
    """Write the report's HTML to `path`; the path."""
    path = Path(path)
    try:
        path.write_text(render(report), encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot write the report ({exc.strerror})") from None
    return path


# --- tables -----------------------------------------------------------------------------------


def _table(frame: pd.DataFrame, places: dict[str, int]) -> str:
    if frame.empty:
        return '<p class="note">none</p>'
    frame = added_up(frame, places)
    head = "".join(f"<th>{escape(heading(str(c)))}</th>" for c in frame.columns)
    rows = []
    for record in frame.itertuples(index=False):
        cells = []
        for column, value in zip(frame.columns, record, strict=True):
            numeric = isinstance(value, (int, float, np.number)) and not isinstance(value, bool)
            css = ' class="num"' if numeric else ""
            cells.append(f"<td{css}>{escape(format_cell(column, value, places))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


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


HOUR_COLUMNS = ("billed_hours", "expected_training_hours", "training_hours")


# A saving is its baseline less what the job spent: a row shows all three.
SAVINGS = {"saved_vs_on_demand_usd": "on_demand_usd", "saved_vs_static_usd": "static_usd"}


def table_places(frame: pd.DataFrame) -> dict[str, int]:
    """One precision for a table's dollars and one for its hours (`costsched.amounts`):
    the figures of a row and of a column read at the same decimals, so that they add up
    (the fewest decimals at which each row's spend and saving make its baseline, up to
    MAX_DECIMALS; `added_up` makes the rest)."""
    def figures(columns: list[str]) -> list[float]:
        return [float(v) for c in columns for v in frame[c] if isinstance(v, (int, float))]

    usd_places = decimals(figures([c for c in frame.columns if c.endswith("usd")]))
    while usd_places < MAX_DECIMALS and not _adds_up(frame, usd_places):
        usd_places += 1
    return {"usd": usd_places,
            "hours": decimals(figures([c for c in frame.columns if c in HOUR_COLUMNS]))}


# Tables whose rows sum the per-job table's: never at fewer decimals than it, so that
# 0.0075 and 0.0103 hours of two jobs make 0.0178 on their cloud's row, not 0.02.
SUMS_OF_JOBS = ("clouds", "days")


def places_of(name: str, frame: pd.DataFrame, jobs: pd.DataFrame) -> dict[str, int]:
    """`table_places` of the report's table `name` (a `TABLES` name; its rows `frame`),
    and for a table of SUMS_OF_JOBS no fewer decimals than the per-job table's (`jobs`)."""
    places = table_places(frame)
    if name in SUMS_OF_JOBS and len(jobs):
        of_jobs = table_places(jobs)
        places = {unit: max(n, of_jobs[unit]) for unit, n in places.items()}
    return places


def report_places(report: Report, name: str) -> dict[str, int]:
    """`places_of` the report's table `name`."""
    return places_of(name, getattr(report, name), report.jobs)


def _savings(frame: pd.DataFrame) -> list[tuple[str, str]]:
    return [(saved, base) for saved, base in SAVINGS.items()
            if {saved, base, "usd"} <= set(frame.columns)]


def _adds_up(frame: pd.DataFrame, places: int) -> bool:
    """Whether every row's spend and saving, rounded to `places`, make its baseline."""
    for saved, base in _savings(frame):
        cells = frame[["usd", base, saved]].apply(pd.to_numeric, errors="coerce").dropna()
        shown = cells.round(places)
        gap = (shown["usd"] + shown[saved] - shown[base]).abs()
        if (gap > 10 ** -places / 2).any():
            return False
    return True


def added_up(frame: pd.DataFrame, places: Mapping[str, int]) -> pd.DataFrame:
    """`frame` with each saving as its rounded baseline less its rounded spend (at the
    table's `places`), so that a row's spend and saving visibly make its baseline (the
    saving shown is within a unit of its last decimal of its exact value)."""
    found = _savings(frame)
    if not found or "usd" not in places:
        return frame
    p = places["usd"]
    out = frame.copy()
    spent = pd.to_numeric(out["usd"], errors="coerce").round(p)
    for saved, base in found:
        made = pd.to_numeric(out[base], errors="coerce").round(p) - spent
        out[saved] = made.where(made.notna(), out[saved])
    return out


def format_cell(column: str, value: object, places: Mapping[str, int] | None = None
                ) -> str:
    """A value of `column` as the report's tables show it (the CLI's too); `places`: the
    table's precision of dollars and hours (`table_places`; else each figure's own)."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return "-"
    places = places or {}
    if column == "usd_per_gb" or column.endswith("usd_per_hour"):
        return per_hour(float(value))  # a price: as the clouds quote them
    if column.endswith("usd"):
        return usd(float(value), places.get("usd"))
    if column in HOUR_COLUMNS:
        return hours(float(value), places.get("hours"))
    if column in ("used", "done") or column.endswith("_share"):
        return f"{value:.0%}"
    if column.endswith("_sps"):
        return sps(float(value))
    if column.endswith("ratio") or column == "measured_vs_planned":
        return f"{value:,.3g}x"
    if column == "flagged":
        return "yes" if value else ""
    if column == "day":
        return f"{pd.Timestamp(value):%Y-%m-%d}"
    if isinstance(value, pd.Timestamp):
        return _when(value)
    if isinstance(value, float):  # GB, preemptions: the rule of hours, never 0.00 for 0.001
        return hours(value)
    return str(value)


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
        table = table_places(pd.DataFrame(jobs))
        usd_places = max(usd_places, table["usd"])
        hour_places = max(hour_places, table["hours"])
    out = {k: usd(v, usd_places) for k, v in zip(TOTALS[:-1], amounts, strict=True)}
    out["billed_hours"] = hours(totals["billed_hours"], hour_places)
    instance = totals.get("instance_hours")
    out["instance_hours"] = hours(totals["billed_hours"] if instance is None else instance,
                                  max(hour_places, decimals([instance])))
    return out


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


def _when(at: pd.Timestamp) -> str:
    return f"{pd.Timestamp(at):%Y-%m-%d %H:%M} UTC"


# --- figures ----------------------------------------------------------------------------------


def _label(text: object) -> str:
    """User text as a matplotlib label: "$" would start mathtext."""
    return str(text).replace("$", r"\$")


def _over_time(report: Report) -> str:
    fig, ax = _figure()
    days = report.days
    if days.empty:
        return _empty(fig, ax)
    per = days.pivot_table(index="day", columns="job_id", values="usd", aggfunc="sum",
                           fill_value=0.0).sort_index()
    names = days.drop_duplicates("job_id").set_index("job_id")["name"]
    x = np.arange(len(per))
    bottom = np.zeros(len(per))
    for job_id in per.columns:
        ax.bar(x, per[job_id], bottom=bottom, label=_label(f"{job_id} {names[job_id]}"))
        bottom += per[job_id].to_numpy()
    ax.set_xticks(x, [f"{d:%Y-%m-%d}" for d in per.index], rotation=30, ha="right")
    ax.set_ylabel("USD per day")
    ax.legend(fontsize="small")
    return _png(fig)


def _per_job(report: Report) -> str:
    fig, ax = _figure()
    jobs = report.jobs
    if jobs.empty:
        return _empty(fig, ax)
    labels = [_label(f"{j} {n}") for j, n in zip(jobs["job_id"], jobs["name"], strict=True)]
    y = np.arange(len(jobs))
    ax.barh(y, jobs["compute_usd"], label="compute")
    ax.barh(y, jobs["egress_usd"], left=jobs["compute_usd"], label="egress")
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlabel("USD")
    ax.legend(fontsize="small")
    return _png(fig)


def _per_cloud(report: Report) -> str:
    fig, ax = _figure()
    clouds = report.clouds
    if clouds.empty:
        return _empty(fig, ax)
    x = np.arange(len(clouds))
    ax.bar(x, clouds["compute_usd"], label="compute")
    ax.bar(x, clouds["egress_usd"], bottom=clouds["compute_usd"], label="egress")
    ax.set_xticks(x, [_label(c) for c in clouds["cloud"]])
    ax.set_ylabel("USD")
    ax.legend(fontsize="small")
    return _png(fig)


def _figure() -> tuple[Figure, Axes]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(8, 3.6), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig, fig.add_subplot()


def _empty(fig: Figure, ax: Axes) -> str:
    ax.text(0.5, 0.5, "no spend in this period", ha="center", va="center")
    ax.set_axis_off()
    return _png(fig)


def _png(fig: Figure) -> str:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return base64.b64encode(buffer.getvalue()).decode("ascii")

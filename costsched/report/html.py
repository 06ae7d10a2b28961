"""A cost report as one self-contained HTML file: inline CSS, figures as base64 PNG, no
external URL, every text from the store escaped."""

from __future__ import annotations

import base64
import io
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.measured import sps
from costsched.model import InvalidInput
from costsched.report.amounts import usd
from costsched.report.data import Report

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

_TABLES = [  # (attribute, heading, what the table says)
    ("jobs", "Spend per job", "compute and egress in the period, against on-demand and "
     "against the job's launch-time choice kept to the end, each at its stored prices; "
     "- where a baseline does not apply"),
    ("clouds", "Spend per cloud", "egress is billed by the cloud the checkpoint left"),
    ("days", "Spend per day (UTC)", "placements split at midnight UTC"),
    ("moves", "Migrations and recoveries", "idle: billed without training (part of the "
     "compute spend); egress: the checkpoint's copy"),
    ("egress", "Egress per move", ""),
    ("budgets", "Jobs near (80% or more) or over their budget", "whole-life spend"),
    ("speeds", "Measured speed against the plan's", "steps per second: reported steps "
     "over the hours run; the savings above use the measured speed"),
    ("estimates", "Estimate versus actual, per job", "what the plan predicted at launch "
     "for the work done so far, beside what it took; ratio = actual / expected"),
    ("calibration", "Estimate versus actual, by model and GPU", "median and worst (furthest "
     "from 1) ratio of actual to expected"),
]


def render(report: Report) -> str:
    """The report as one HTML document."""
    period = (f"{_when(report.since) if report.since is not None else 'the first placement'}"
              f" to {_when(report.until)}")
    totals = report.totals
    shown = {k: dollars(v) for k, v in totals.items()}
    summary = (f"Spend {shown['usd']} (compute {shown['compute_usd']}, egress "
               f"{shown['egress_usd']}) over {totals['hours']:,.1f} instance-hours. "
               f"Saved {shown['saved_vs_on_demand_usd']} against on-demand and "
               f"{shown['saved_vs_static_usd']} against the launch-time choice kept.")
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
    for name, heading, note in _TABLES:
        parts.append(f"<h2>{escape(heading)}</h2>")
        if note:
            parts.append(f'<p class="note">{escape(note)}</p>')
        parts.append(_table(getattr(report, name)))
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


def _table(frame: pd.DataFrame) -> str:
    if frame.empty:
        return '<p class="note">none</p>'
    head = "".join(f"<th>{escape(heading(str(c)))}</th>" for c in frame.columns)
    rows = []
    for record in frame.itertuples(index=False):
        cells = []
        for column, value in zip(frame.columns, record, strict=True):
            numeric = isinstance(value, (int, float, np.number)) and not isinstance(value, bool)
            css = ' class="num"' if numeric else ""
            cells.append(f"<td{css}>{escape(format_cell(column, value))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


# Column names as table headers, in words; amounts in USD end with "$" (the CLI's tables
# align those to the right).
HEADINGS = {
    "job_id": "job", "move_id": "move", "name": "name", "state": "state", "nodes": "nodes",
    "hours": "hours",
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
    "done": "done", "expected_hours": "expected hours", "hours_ratio": "hours ratio",
    "expected_usd": "expected $", "usd_ratio": "cost ratio",
    "expected_preemptions": "expected preemptions", "median_hours_ratio": "median hours ratio",
    "worst_hours_ratio": "worst hours ratio", "median_usd_ratio": "median cost ratio",
    "worst_usd_ratio": "worst cost ratio",
}


def heading(column: str) -> str:
    """A column's header in words ('saved_vs_on_demand_usd' -> 'saved vs on-demand $')."""
    return HEADINGS.get(column, column.replace("_usd", " $").replace("_", " "))


def format_cell(column: str, value: object) -> str:
    """A value of `column` as the report's tables show it (the CLI's too)."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return "-"
    if column.endswith("usd") or column == "usd_per_gb":
        return dollars(value, 3 if column == "usd_per_gb" else 2)
    if column in ("used", "done"):
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
    if isinstance(value, float):
        return f"{value:,.2f}"
    return str(value)


def dollars(value: float | None, digits: int = 2) -> str:
    """USD with its sign first: -$0.20; under a cent with significant digits ($0.0049);
    "-" for an amount that does not apply (None or NaN)."""
    if value is None or pd.isna(value):
        return "-"
    if digits == 2:
        return usd(float(value))
    return f"{'-' if value < 0 else ''}${abs(value):,.{digits}f}"


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

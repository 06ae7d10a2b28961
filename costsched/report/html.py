"""A cost report as one self-contained HTML file: inline CSS, figures as base64 PNG, no
external URL, every text from the store escaped."""

from __future__ import annotations

import base64
import io
import os
import warnings
from collections.abc import Mapping
from datetime import datetime
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.model import InvalidInput
from costsched.report.budgets_now import HEADINGS as BUDGET_HEADINGS
from costsched.report.budgets_now import TITLE as BUDGETS_TITLE
from costsched.report.cells import (  # noqa: F401 - the HTML's cells are everyone's
    HEADINGS,
    HOUR_COLUMNS,
    SAVINGS,
    SUMS_OF_JOBS,
    TOTALS,
    format_cell,
    heading,
    period_words,
    places_of,
    records,
    shown_rows,
    spend_places,
    table_places,
    totals_figures,
    totals_line,
    when,
)
from costsched.report.cells import added_up as cells_added_up
from costsched.report.data import Report
from costsched.report.rounding import rounding_note
from costsched.report.tables import TABLES, row_keys, split_columns

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
details { margin: 0.3em 0 0.8em; } summary { color: #444; cursor: pointer; }
.word { white-space: nowrap; }
"""



def render(report: Report, budgets: list[list[str]] | None = None) -> str:
    """The report as one HTML document; `budgets`: the rows of "Budgets now", as written
    (`report.budgets_now.budget_cells`), which end it as they end the text report."""
    period = period_words(_when(report.since) if report.since is not None else None,
                          _when(report.until), report.placed)
    summary = totals_line(report.totals, report.tables()) + "."
    figures = [("Cost over time", _over_time(report)), ("Cost per job", _per_job(report)),
               ("Cost per cloud", _per_cloud(report))]
    rounded = rounding_note(report.tables(), report.totals)  # a total not the exact one
    parts = [
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        "<title>costsched cost report</title>", f"<style>{_CSS}</style>", "</head>", "<body>",
        f"<h1>costsched cost report{escape(' of ' + report.chosen if report.chosen else '')}"
        "</h1>", f"<p>{escape(period)}</p>",
        f"<p>{escape(summary)}</p>",
        *([f'<p class="note">{escape(report.stale_note())}</p>'] if report.stale else []),
        *([f'<p class="note">{escape(rounded)}</p>'] if rounded else []),
        *(f"<p>throughput: {escape(line)}</p>" for line in report.flags()),
        *(f"<p>{escape(r['line'])}</p>" for r in report.rows.get("repriced", ())),
        *(f"<p>{escape(r['line'])}</p>" for r in report.rows.get("estimated_baselines", ())),
        '<div class="figures">',
        *(f'<h2>{escape(title)}</h2><img alt="{escape(title)}" '
          f'src="data:image/png;base64,{png}">' for title, png in figures),
        "</div>",
    ]
    for name, title, note in TABLES:
        parts.append(f"<h2>{escape(title)}</h2>")
        if note:
            parts.append(f'<p class="note">{escape(note)}</p>')
        places, rows = shown_rows(name, report.tables())
        parts.append(_table(rows, places, name))
    if budgets is not None:
        parts.append(f"<h2>{escape(BUDGETS_TITLE)}</h2>")
        parts.append(_written_table(BUDGET_HEADINGS, budgets))
    parts += ["</body>", "</html>"]
    return "\n".join(parts) + "\n"


def writable(path: str | Path) -> Path:
    """`path` where a report can be written, checked before the report is built: its folder
    exists and takes files, and it is no folder; else InvalidInput in `write`'s words."""
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    strerror = ("Is a directory" if path.is_dir() else
                "No such file or directory" if not folder.is_dir() else
                "Permission denied" if not os.access(folder, os.W_OK | os.X_OK)
                or (path.exists() and not os.access(path, os.W_OK)) else "")
    if strerror:
        raise InvalidInput(f"{path}: cannot write the report ({strerror})")
    return path


def write(report: Report, path: str | Path, budgets: list[list[str]] | None = None
          ) -> Path:
    """Write the report's HTML to `path` (`render`); the path."""
    path = Path(path)
    try:
        path.write_text(render(report, budgets), encoding="utf-8")
    except OSError as exc:
        raise InvalidInput(f"{path}: cannot write the report ({exc.strerror})") from None
    return path


# --- tables -----------------------------------------------------------------------------------


def _table(table: object, places: dict[str, int], name: str = "") -> str:
    """The report's table `name` (its rows, `shown_rows`; rows or a frame) as they read at
    its precision `places`: the columns every view shows by default (`split_columns`), and
    the rest under it, folded, beside the columns that tell its rows apart."""
    columns, rows = records(table)
    if not rows:
        return '<p class="note">none</p>'
    cells = cells_added_up(rows, places)
    shown, more = split_columns(name, columns)
    out = _cells_table(shown, cells, places)
    if more:
        words = ", ".join(heading(c) for c in more)
        out += (f"<details><summary>more columns: {escape(words)}</summary>"
                f"{_cells_table([*row_keys(shown), *more], cells, places)}</details>")
    return out


def _cells_table(columns: list[str], cells: list[dict], places: dict[str, int]) -> str:
    head = "".join(f"<th>{escape(heading(str(c)))}</th>" for c in columns)
    body = []
    for record in cells:
        shown = []
        for column in columns:
            value = record[column]
            numeric = isinstance(value, (int, float, np.number)) and not isinstance(value, bool)
            css = ' class="num"' if numeric else ""
            text = format_cell(column, value, places)
            shown.append(f"<td{css}>{_whole(text) if column in WHOLE else escape(text)}</td>")
        body.append("<tr>" + "".join(shown) + "</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


# A job's name and its state ("charlm-native", "ended-short") never break at a hyphen...
WHOLE = ("name", "state")
# ...unless the word is longer than this ("a-gang-of-two-with-a-long-name"): whole, it
# would push a table of many columns (the dashboard's Spend per job) past a 1280-pixel
# window, so it may break at its hyphens.
WHOLE_MOST = 24


def _whole(text: str) -> str:
    """`text` escaped, each hyphenated word of it up to WHOLE_MOST characters kept on one
    line (it wraps at spaces, a longer word at its hyphens)."""
    return " ".join(f'<span class="word">{escape(w)}</span>'
                    if "-" in w and len(w) <= WHOLE_MOST else escape(w)
                    for w in text.split(" "))


def _written_table(headings: list[str], rows: list[list[str]]) -> str:
    """A table of cells written already (its figures: the columns headed '... $')."""
    if not rows:
        return '<p class="note">none</p>'
    head = "".join(f"<th>{escape(h)}</th>" for h in headings)
    css = [' class="num"' if h.endswith("$") else "" for h in headings]
    body = ["<tr>" + "".join(f"<td{k}>{escape(c)}</td>" for k, c in zip(css, row, strict=True))
            + "</tr>" for row in rows]
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def added_up(frame: pd.DataFrame, places: Mapping[str, int]) -> pd.DataFrame:
    """`cells.added_up` of a frame, as a frame."""
    columns, rows = records(frame)
    return pd.DataFrame(cells_added_up(rows, places), columns=columns, index=frame.index)


def report_places(report: Report, name: str) -> dict[str, int]:
    """`places_of` the report's table `name`."""
    return report.places(name)


def _when(at: datetime) -> str:
    return when(at)


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
    for job_id, colour in zip(per.columns, job_colours(len(per.columns)), strict=True):
        ax.bar(x, per[job_id], bottom=bottom, label=_label(f"{job_id} {names[job_id]}"),
               color=colour)
        bottom += per[job_id].to_numpy()
    ax.set_xticks(x, [f"{d:%Y-%m-%d}" for d in per.index], rotation=30, ha="right")
    ax.set_ylabel("USD per day")
    _legend(ax)
    return _png(fig)


# Lightness and saturation in turn, so that jobs of near hues still read apart.
_SHADES = ((0.45, 0.70), (0.62, 0.60), (0.33, 0.65), (0.54, 0.85))


def job_colours(count: int) -> list[tuple[float, float, float]]:
    """`count` colours (RGB, 0-1), none twice however many: hues a golden angle apart
    (never coming round to one already given), with lightness and saturation in turn."""
    import colorsys

    return [colorsys.hls_to_rgb((0.6 + n * 0.618033988749895) % 1.0, *_SHADES[n % 4])
            for n in range(count)]


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
    _legend(ax)
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
    _legend(ax)
    return _png(fig)


def _legend(ax: Axes) -> None:
    """The legend beside the chart, never over a bar."""
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1), borderaxespad=0)


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
    with warnings.catch_warnings():  # a plot too small for its layout is drawn as it is
        warnings.filterwarnings("ignore", "constrained_layout not applied", UserWarning)
        fig.savefig(buffer, format="png")
    return base64.b64encode(buffer.getvalue()).decode("ascii")

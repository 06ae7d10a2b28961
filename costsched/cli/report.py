"""`costsched report`: what the jobs cost, per job, cloud and day, against two baselines."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from costsched.cli.budgets import budgets_now, print_budgets
from costsched.cli.common import (
    EmptyDbOption,
    JsonOption,
    WideOption,
    asked_wide,
    console,
    err_console,
    friendly_errors,
    left_out_caption,
    options,
    print_json,
    say_no_store,
    table,
)
from costsched.job_names import is_pattern, picks
from costsched.model import InvalidInput
from costsched.report import Report, build
from costsched.report.budgets_now import budget_cells
from costsched.report.cells import (
    format_cell,
    heading,
    period_words,
    shown_rows,
    totals_line,
)
from costsched.report.rounding import rounding_note
from costsched.report.tables import HIDDEN, TABLES, WIDE
from costsched.service.stores import using
from costsched.vocabulary import did_you_mean

if TYPE_CHECKING:
    from costsched.store import PriceStore

@friendly_errors
def report(
    since: Annotated[str | None, typer.Option(
        help="Start of the period (ISO 8601, e.g. 2024-06-01); default: the first "
        "placement.", show_default=False)] = None,
    until: Annotated[str | None, typer.Option(
        help="End of the period (ISO 8601); default: now.", show_default=False)] = None,
    job: Annotated[str | None, typer.Option(
        help="The jobs to report, by id, name, a sweep's name (all its jobs) or a name "
        "pattern ('charlm-sweep*', as status takes one); the totals are theirs.",
        show_default=False)] = None,
    html_out: Annotated[Path | None, typer.Option(
        "--html", help="Also write the report, with its plots, as one HTML file.",
        show_default=False)] = None,
    billed: Annotated[bool, typer.Option(
        "--billed", help="The imported bills (`bills import`) beside the estimate, per job "
        "and day, the difference itemised; jobs past bills.difference_threshold flagged.")
    ] = False,
    db: EmptyDbOption = None,
    wide: WideOption = False,  # read by common.table
    json_out: JsonOption = False,
) -> None:
    """Spend per job, cloud and day from the stored placements, savings against on-demand
    and against the job's launch-time choice kept to the end, migrations and recoveries
    with their costs, and the jobs near, over or stopped at their budget."""
    if billed:
        from costsched.cli.bills import print_billed

        if job is not None:
            with options(job="--job"), using(db) as store:
                _known_job(store, job)

        say_no_store(db)
        print_billed(db, since=since, until=until, job=job, json_out=json_out, html=html_out)
        return
    if html_out is not None:  # refused before the report is built, not after
        from costsched.report.html import writable

        writable(html_out)
    with using(db) as store:  # one store for the report and its budgets
        with options(since="--since", until="--until", job="--job"):
            _known_job(store, job)
            built = build(store, since=since, until=until, job=job)
        say_no_store(db)
        states = budgets_now(store, at=built.until, of_jobs=_named(built, job))
        spent_places, written = budget_figures(built)
        if html_out is not None:
            from costsched.report.html import write

            write(built, html_out, budget_cells(states, spent_places, written))
            (err_console if json_out else console).print(
                Text(f"wrote {html_out}"), highlight=False)
        if json_out:
            from costsched.service.views import report_document

            print_json(report_document(built, states))
            return
        _print(built)
        # Each budget now: spent, committed, ... (its spend at the store's scale, as the
        # per-job table writes the job's)
        print_budgets(store, states=states, spent_places=spent_places, written=written)


def budget_figures(built: Report) -> tuple[int | None, dict[int, tuple[float, float]]]:
    """The decimals of the report's charged dollars (the store's scale; None where it was
    not read) and each job's spend in the period, exact and as the per-job table writes
    it, by id: what a job's budget's spent reads as where it is the same figure."""
    if built.scale is None:
        return None, {}
    _, shown = shown_rows("jobs", built.tables())
    return built.scale.usd, {int(r["job_id"]): (float(r["usd"]), float(s["usd"]))
                             for r, s in zip(built.rows["jobs"], shown, strict=True)}


def _known_job(store: PriceStore, job: str | None) -> None:
    """A name that picks no job (`job_names.picks`: a job's name, a sweep's, a pattern) is
    refused in one line with the close names, as `status`, `logs` and `stop` refuse a
    name and `status --name` a pattern (an id is the report's to look up)."""
    if job is None or job.strip().isdigit():
        return
    names = sorted({r.name for r in store.jobs.records()})
    if any(picks(n, job) for n in names):
        return
    from costsched.service.glance import few_names, no_such_name

    if not is_pattern(job):
        raise InvalidInput(no_such_name(job, names))
    raise InvalidInput(f"job {job!r}: no job's name matches it" + (
        did_you_mean(job, names) or (f"; the jobs: {few_names(names)}" if names else "")))


def _named(built: Report, job: str | None) -> set[int] | None:
    """The jobs of `report --job NAME` (their budgets alone are shown), else None."""
    return None if job is None else built.job_ids()



def _cells(rows: list[dict], columns: list[str], places: dict[str, int]
           ) -> tuple[list[str], list[list[Text]]]:
    """The headings and cells of `rows`' `columns` (as they read: `report.cells.shown_rows`)
    at the table's precision `places`."""
    return [heading(c) for c in columns], [
        [Text(format_cell(c, row[c], places)) for c in columns] for row in rows]


# Columns a narrow page leaves out last, in this order, after every other detail column:
# a move's lost work, then the parts its total is the sum of (a total beside its parts).
GOES_LAST = ("lost steps", "lost work $", "egress $", "idle $")


def _print(built: Report) -> None:
    since = None if built.since is None else f"{built.since:%Y-%m-%d %H:%M}"
    of = f" of {built.chosen}" if built.chosen else ""
    console.print(Text(f"Cost report{of}: " + period_words(
        since, f"{built.until:%Y-%m-%d %H:%M} UTC", built.placed)))
    console.print(Text(totals_line(built.totals, built.tables())))
    if built.stale is not None:  # its spend from old prices: estimates, and what is real
        console.print(Text(built.stale_note()), highlight=False, soft_wrap=True)
    rounded = rounding_note(built.tables(), built.totals)  # where a total is not the exact one
    if rounded:
        console.print(Text(rounded), highlight=False, soft_wrap=True)
    for line in built.flags():
        console.print(Text(f"throughput: {line}"), highlight=False)
    for placed in (*built.rows.get("repriced", ()),  # `report.written.repriced_rows`
                   *built.rows.get("estimated_baselines", ())):  # `report.paces`
        console.print(Text(placed["line"]), highlight=False)
    wide = asked_wide()
    for name, title, note in TABLES:
        found = built.rows[name]
        if not found:
            continue
        # Its detail (`tables.WIDE`) with --wide alone, as the HTML file and the dashboard
        # show it under the table
        left = [] if wide else [heading(c) for c in WIDE.get(name, [])]
        places, shown = shown_rows(name, built.tables())
        headings, rows = _cells(shown, [c for c in found[0] if c not in HIDDEN.get(name, [])
                                        and heading(c) not in left], places)
        # Where the page is narrow, the rightmost columns go first; the row's name and its
        # spend stay, a move's lost work goes late and the parts of its total last.
        detail = sorted((h for h in reversed(headings[1:]) if h != "total $"),
                        key=lambda h: GOES_LAST.index(h) + 1 if h in GOES_LAST else 0)
        out = table(title, headings, rows, detail=detail)  # type: ignore[arg-type]
        if left:
            kept = {str(c.header) for c in out.columns}
            out.caption = Text(left_out_caption(left + [h for h in detail if h not in kept]))
        console.print(out, markup=False)  # (its cells and caption are Text: shown literally)
        if note:  # what the table says, as the HTML file and --json say it
            console.print(Text(f"  {note}"), highlight=False)  # (wrapped to the page)

"""One figure reads the same in every table of one report: a job's hours and spend in the
per-job table and on its cloud's and day's rows, at the one precision of the whole report
(the spend tables and the totals), in the text, the HTML file and the dashboard alike."""

from __future__ import annotations

import math

from costsched.report.cells import format_cell, shown_rows, totals_line
from costsched.report.data import totals


def job(job_id: int, hours: float, usd: float) -> dict:
    return dict(job_id=job_id, name=f"j{job_id}", state="succeeded", nodes=1,
                billed_hours=hours, compute_usd=usd, egress_usd=0.0, usd=usd,
                on_demand_usd=math.nan, saved_vs_on_demand_usd=math.nan,
                launch_choice_usd=math.nan, saved_vs_launch_choice_usd=math.nan)


def cloud(name: str, hours: float, usd: float) -> dict:
    return dict(cloud=name, billed_hours=hours, compute_usd=usd, egress_usd=0.0, usd=usd)


# Job 1 alone on gcp (0.0169 h, $0.0169); jobs 2 and 3 on aws. At two decimals each table
# adds up, but the per-cloud column shared out to the total would write gcp's 0.0169 as
# 0.01 beside the per-job table's 0.02.
JOBS = [job(1, 0.0169, 0.0169), job(2, 0.014, 0.014), job(3, 0.014, 0.014)]
CLOUDS = [cloud("gcp", 0.0169, 0.0169), cloud("aws", 0.028, 0.028)]
TABLES = {"jobs": JOBS, "clouds": CLOUDS, "days": []}


def written(name: str, column: str) -> list[str]:
    places, rows = shown_rows(name, TABLES)
    return [format_cell(column, r[column], places) for r in rows]


def test_a_jobs_hours_read_alike_in_the_per_job_and_per_cloud_tables() -> None:
    for column in ("billed_hours", "usd", "compute_usd"):
        job_one, cloud_gcp = written("jobs", column)[0], written("clouds", column)[0]
        assert job_one == cloud_gcp, (column, job_one, cloud_gcp)
        assert job_one.lstrip("$") in ("0.017", "0.0169")  # the fewest that do


def test_the_tables_and_the_totals_still_add_up_as_written() -> None:
    def number(text: str) -> float:
        return float(text.strip("$<").replace(",", ""))

    line = totals_line(totals(JOBS), TABLES)
    for column in ("billed_hours", "usd"):
        per_job = sum(number(t) for t in written("jobs", column))
        per_cloud = sum(number(t) for t in written("clouds", column))
        assert math.isclose(per_job, per_cloud, abs_tol=1e-9), column
    hours = sum(number(t) for t in written("jobs", "billed_hours"))
    assert f"over {hours:.3f} billed hours" in line, line


def test_the_html_file_and_the_dashboard_write_the_same_figures() -> None:
    from costsched.dashboard.render import cell, shown
    from costsched.report.html import _table

    places, rows = shown(TABLES, "clouds")
    text = written("jobs", "billed_hours")[0]
    assert cell("billed_hours", rows[0]["billed_hours"], places) == text
    assert f"<td class=\"num\">{text}</td>" in _table(*reversed(shown_rows("clouds", TABLES)))


def test_a_tiny_figure_never_reads_as_zero_on_the_sums_tables() -> None:
    """A job of a few seconds beside a long one: its cloud's row reads as its own row does
    ('<0.0001' at most), never '0.00' for hours it was billed."""
    jobs = [job(1, 0.00003, 0.00003), job(2, 2.0, 2.0)]
    clouds = [cloud("gcp", 0.00003, 0.00003), cloud("aws", 2.0, 2.0)]
    tables = {"jobs": jobs, "clouds": clouds, "days": []}
    for column in ("billed_hours", "usd"):
        p, [one, _] = shown_rows("jobs", tables)
        q, [gcp, _] = shown_rows("clouds", tables)
        assert format_cell(column, one[column], p) == format_cell(column, gcp[column], q)
        assert format_cell(column, gcp[column], q) != "0.00"


def test_the_dashboards_deadline_lines_read_their_hours_alike() -> None:
    """Two jobs' deadline lines on one page: 5.9831 h and 0.0042 h at one precision
    ('5.9831 h' beside '0.0042 h', never '5.98 h' on one line and four decimals on the
    next), as `status` writes its lines; a job's page at its placements' precision."""
    from datetime import datetime, timedelta, timezone

    from costsched.dashboard.render import due, due_places, job_places

    now = datetime(2026, 1, 1, 12, tzinfo=timezone.utc)
    deadline = now + timedelta(hours=6)

    def finished(job_id: int, early: float) -> dict:
        return dict(id=job_id, state="succeeded", deadline_at=deadline.isoformat(),
                    ended_at=(deadline - timedelta(hours=early)).isoformat())

    jobs = [finished(1, 5.9831), finished(2, 0.0042)]
    places = due_places(jobs, now)
    said = [due(j, places, now) for j in jobs]
    assert said[0].endswith("it finished 5.9831 h before"), said
    assert said[1].endswith("it finished 0.0042 h before"), said
    page = job_places({**jobs[0], "placements": [dict(hours=0.0042, usd=0.0007)]}, {}, now)
    assert due(jobs[0], page, now).endswith("5.9831 h before")


def test_a_jobs_page_writes_its_legs_at_the_reports_precision() -> None:
    """Two legs of 0.01494 h on a job's page read at the charged figures' precision, as
    the report's totals line does, and the job's hours and spend beneath them are their
    sums as written (0.0149 + 0.0149 = 0.0298 h, never 0.0299 beneath them): four
    decimals of money and of hours, whatever the store's smallest charge."""
    from costsched.amounts import CHARGED
    from costsched.dashboard.render import cell, job_places

    leg = dict(hours=0.01494, usd=0.000712)
    other = dict(hours=0.01494, usd=0.06)
    report = {"jobs": [job(1, 0.02988, 0.060712)], "clouds": [], "days": [],
              "scale": CHARGED.places(),
              "parts": {"jobs": [{"compute_usd": [0.000712, 0.06],
                                  "billed_hours": [0.01494, 0.01494]}]}}
    page = job_places({"placements": [leg, other]}, report)
    line = totals_line(totals(report["jobs"]), report, page)
    assert cell("hours", leg["hours"], page) == cell("hours", other["hours"], page) == "0.0149"
    assert cell("usd", leg["usd"], page) == "$0.0007"
    assert "over 0.0298 billed hours" in line and "Spend $0.0607 " in line, line

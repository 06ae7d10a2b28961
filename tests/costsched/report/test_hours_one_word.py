"""One word for one quantity: a job's placements' hours are 'billed hours' in the spend
tables, the totals line of `report` (text and HTML) and the dashboard's job and Spend
pages; 'instance-hours' only names the total that counts each node of a gang."""

from __future__ import annotations

import re
from pathlib import Path

from costsched.report.cells import totals_line
from tests.costsched.cli.test_store_scale_views import _dashboard, _run, _store


def test_a_single_node_job_s_hours_read_billed_hours_in_every_view(tmp_path: Path) -> None:
    db, job = _store(tmp_path)
    report = _run("report", "--db", db)
    html_path = tmp_path / "report.html"
    _run("report", "--db", db, "--html", str(html_path))
    page, spend = _dashboard(db, f"/jobs/{job}", "/spend")
    row = next(line for line in report.splitlines() if "│ tiny" in line)  # per job
    assert "billed hours" in report and "0.0200" in row, report
    for text in (report, html_path.read_text(), page):
        assert "over 0.0200 billed hours;" in text, text
    for text in (report, html_path.read_text(), page, spend):
        assert "instance-hours" not in text, text
    assert re.search(r">0\.0200</span><span>billed hours<", spend), spend


def test_a_gang_s_hours_name_both_quantities() -> None:
    totals = {"usd": 0.02, "compute_usd": 0.02, "egress_usd": 0.0, "billed_hours": 0.0075,
              "instance_hours": 0.0128, "saved_vs_on_demand_usd": 0.0,
              "saved_vs_launch_choice_usd": 0.0}
    assert " over 0.0075 billed hours (0.0128 instance-hours, each node counted); " in \
        totals_line(totals)

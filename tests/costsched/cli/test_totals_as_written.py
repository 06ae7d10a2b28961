"""A job's cost reads as the sum of its rows as written at four decimals, and nothing
more: in `status`, `report` and the HTML file alike, while `status --json` and `report
--json` keep the exact figure. Two placements of $0.00755 and $0.00749 read $0.0076 and
$0.0075, the job $0.0151 (its exact $0.01504 rounds to $0.0150): the report says once
that its totals are the sums of the rows as shown, a job's of its charges."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

from typer.testing import CliRunner

from costsched.amounts import half_up
from costsched.cli import app
from costsched.store import PriceStore
from tests.costsched.test_costs import EAST_A, WEST, at, observe


def _store(tmp_path: Path) -> tuple[str, int]:
    """A job that ran 36 s on EAST_A at $0.755/h ($0.00755) and 36 s on WEST at
    $0.749/h ($0.00749), stopped."""
    db = str(tmp_path / "store.sqlite")
    store = PriceStore(db)
    observe(store, EAST_A, [(0, 0.755)])
    observe(store, WEST, [(0, 0.749)])
    spec = {"name": "pair", "run": "true", "steps": 10,
            "checkpoint": {"location": str(tmp_path / "ckpt"), "size_gb": 0}}
    job = store.jobs.create("pair", {"spec": spec, "source": "t", "launcher": "local"}, 10,
                            at=at(1))
    store.jobs.transition(job, "running", at=at(1))
    store.jobs.place(job, EAST_A, gpu_model="V100", gpu_count=1, at=at(1),
                     usd_per_hour=0.755, reason="launch", instance=f"{job}-1")
    t = at(1) + timedelta(seconds=36)
    store.jobs.place(job, WEST, gpu_model="V100", gpu_count=1, at=t, usd_per_hour=0.749,
                     reason="start", instance=f"{job}-2")
    store.jobs.end_placement(job, t + timedelta(seconds=36))
    store.jobs.transition(job, "stopped", at=t + timedelta(seconds=36))
    store.dispose()
    return db, job


def _run(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    return result.stdout


def test_a_jobs_cost_reads_alike_in_status_report_and_html_json_exact(
        tmp_path: Path) -> None:
    db, job = _store(tmp_path)
    status = _run("status", "--db", db, "--no-reconcile")
    [doc] = json.loads(_run("status", "--db", db, "--no-reconcile", "--json"))["jobs"]
    assert abs(doc["cost_usd"] - 0.01504) < 1e-12  # JSON: exact
    [row] = [line for line in status.splitlines() if "│ pair" in line]
    [cost] = re.findall(r"\$[\d.]+", row)
    parts = re.findall(rf"job {job}: placed .* = (\$[\d.]+)$", status, re.M)
    assert parts == ["$0.0076", "$0.0075"], status
    assert sum(half_up(float(p[1:]), 4) for p in parts) == half_up(float(cost[1:]), 4)
    assert cost == "$0.0151", status

    report = _run("report", "--db", db)
    [row_doc] = json.loads(_run("report", "--db", db, "--json"))["jobs"]
    assert row_doc["usd"] == doc["cost_usd"]
    line = next(line for line in report.splitlines() if "│ pair" in line)
    assert line.count(cost) == 2, report  # its compute and its total
    assert f"Spend {cost} (compute {cost}," in report, report
    assert report.count("Totals are the sums of the rows as shown, and a job's cost the "
                        "sum of its charges as shown, each rounded alone (`costsched status "
                        "JOB` lists them); `report --json` has the exact figures.") == 1, report
    html_path = tmp_path / "report.html"
    _run("report", "--db", db, "--html", str(html_path))
    html = html_path.read_text()
    assert f"Spend {cost} (compute {cost}," in html
    assert "sums of the rows as shown" in html
    for text in (status, report, html):
        assert "$0.01504" not in text and "$0.0150 " not in text, text


def test_no_note_where_every_total_is_its_exact_figure_rounded(tmp_path: Path) -> None:
    from tests.costsched.cli.test_status_store_decimals import small_and_big

    db = str(tmp_path / "store.sqlite")
    small_and_big(db)
    report = _run("report", "--db", db, "--job", "big")
    assert "Spend $0.8202 " in report, report
    assert "sums of the rows as shown" not in report, report

"""A job's cost reads as its exact total rounded once, at the decimals shown, and as the sum
of its rows as written: in `status`, `status --json`, `report`, `report --json` and the HTML
file alike. Two placements of $0.000755 and $0.000749 read $0.00076 and $0.00075 at the
store's five decimals (their sum $0.00151), while the job's exact $0.001504 rounds to
$0.00150: each view writes them at six decimals, where rows and total agree."""

from __future__ import annotations

import json
import re
from datetime import timedelta
from pathlib import Path

from typer.testing import CliRunner

from costsched.amounts import Scale, adding_scale, half_up
from costsched.cli import app
from costsched.store import PriceStore
from tests.costsched.test_costs import EAST_A, WEST, at, observe


def _store(tmp_path: Path) -> tuple[str, int]:
    """A job that ran 36 s on EAST_A at $0.0755/h ($0.000755) and 36 s on WEST at
    $0.0749/h ($0.000749), stopped."""
    db = str(tmp_path / "store.sqlite")
    store = PriceStore(db)
    observe(store, EAST_A, [(0, 0.0755)])
    observe(store, WEST, [(0, 0.0749)])
    spec = {"name": "pair", "run": "true", "steps": 10,
            "checkpoint": {"location": str(tmp_path / "ckpt"), "size_gb": 0}}
    job = store.jobs.create("pair", {"spec": spec, "source": "t", "launcher": "local"}, 10,
                            at=at(1))
    store.jobs.transition(job, "running", at=at(1))
    store.jobs.place(job, EAST_A, gpu_model="V100", gpu_count=1, at=at(1),
                     usd_per_hour=0.0755, reason="launch", instance=f"{job}-1")
    t = at(1) + timedelta(seconds=36)
    store.jobs.place(job, WEST, gpu_model="V100", gpu_count=1, at=t, usd_per_hour=0.0749,
                     reason="start", instance=f"{job}-2")
    store.jobs.end_placement(job, t + timedelta(seconds=36))
    store.jobs.transition(job, "stopped", at=t + timedelta(seconds=36))
    store.dispose()
    return db, job


def _run(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    return result.stdout


def _shown(exact: float, text: str) -> None:
    """`text` (a cost as written) is `exact` rounded once at the decimals it shows."""
    places = len(text.split(".")[1])
    assert text == f"${half_up(exact, places)}", (exact, text)


def test_rows_and_total_read_at_decimals_where_they_agree() -> None:
    assert adding_scale(Scale(5, 2), [(0.001504, [0.000755, 0.000749])]) == Scale(6, 2)
    assert adding_scale(Scale(5, 2), [(0.0015, [0.00075, 0.00075])]) == Scale(5, 2)
    assert adding_scale(Scale(2, 2), []) == Scale(2, 2)


def test_a_jobs_cost_reads_alike_in_status_report_json_and_html(tmp_path: Path) -> None:
    db, job = _store(tmp_path)
    status = _run("status", "--db", db, "--no-reconcile")
    [doc] = json.loads(_run("status", "--db", db, "--no-reconcile", "--json"))["jobs"]
    exact = doc["cost_usd"]
    [row] = [line for line in status.splitlines() if "│ pair" in line]
    [cost] = re.findall(r"\$[\d.]+", row)
    _shown(exact, cost)
    parts = re.findall(rf"job {job}: placed .* = (\$[\d.]+)$", status, re.M)
    assert len(parts) == 2, status
    assert sum(half_up(float(p[1:]), 8) for p in parts) == half_up(float(cost[1:]), 8), status
    assert cost == "$0.001504", status

    report = _run("report", "--db", db)
    [row_doc] = json.loads(_run("report", "--db", db, "--json"))["jobs"]
    assert row_doc["usd"] == exact
    _shown(row_doc["usd"], cost)
    line = next(line for line in report.splitlines() if "│ pair" in line)
    assert line.count(cost) == 2, report  # its compute and its total
    assert f"Spend {cost} (compute {cost}," in report, report
    html_path = tmp_path / "report.html"
    _run("report", "--db", db, "--html", str(html_path))
    html = html_path.read_text()
    assert f"Spend {cost} (compute {cost}," in html
    for text in (status, report, html):
        assert "$0.00151" not in text, text

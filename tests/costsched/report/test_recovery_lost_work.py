"""A recovery that lost steps is priced by the work it lost in the report's moves (its
text, --json, the HTML file and the dashboard's job page): the steps its recovery note
counted, at the pace the job kept, at the price it ran at; never '$0.0000' beside 3,600
steps trained again. A recovery with no pace measured shows its steps, unpriced."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.report import build
from costsched.report.html import render
from costsched.report.lost_work import lost_work_usd
from costsched.store import PriceStore
from costsched.store.job_rows import PlacementRow
from tests.costsched.report.test_estimates import at
from tests.costsched.report.test_outside_report import preempted


def _recovery(rows: list[dict]) -> dict:
    [row] = [r for r in rows if r["kind"] == "recovery"]
    return row


def test_a_recovery_that_lost_steps_reads_their_cost_in_every_view(tmp_path: Path) -> None:
    from costsched.cli import app, common

    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    store = PriceStore(url)
    job = preempted(store)  # 3,600 steps lost; 1 step/s measured; $1.00/h, one node
    report = build(store, job=job)
    row = _recovery(report.rows["moves"])
    assert row["lost_steps"] == 3600
    assert row["lost_work_usd"] == pytest.approx(1.0, rel=1e-3)  # 1 h of work again at $1/h
    assert "<th>lost work $</th>" in render(report) and "$1.0000" in render(report)

    common.console.width = common.err_console.width = 400  # a row on one line
    got = CliRunner().invoke(app, ["report", "--db", url, "--json"])
    assert got.exit_code == 0, got.output
    moved = _recovery(json.loads(got.output)["moves"])
    assert moved["lost_steps"] == 3600 and moved["lost_work_usd"] == pytest.approx(1.0, rel=1e-3)
    got = CliRunner().invoke(app, ["report", "--db", url])
    assert got.exit_code == 0, got.output
    table = got.output.split("Migrations, recoveries and starts")[1].split("└")[0]
    [line] = [ln for ln in table.splitlines() if "│ recovery" in ln]
    assert [c.strip() for c in line.split("│")[-3:-1]] == ["3,600", "$1.0000"], line
    # narrow: the lost work stays while other detail goes
    common.console.width = common.err_console.width = 150
    got = CliRunner().invoke(app, ["report", "--db", url])
    table = got.output.split("Migrations, recoveries and starts")[1].split("└")[0]
    assert "lost work $" in table and "$1.0000" in table, table

    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from costsched.dashboard.app import create_app

    page = TestClient(create_app(store)).get(f"/jobs/{job}").text
    moves = page[page.index("<h2>Migrations, recoveries and starts</h2>"):]
    moves = moves[:moves.index("</table>")]
    assert "<th class=\"num\">lost work $</th>" in moves
    assert "<td class=\"num\">3,600</td><td class=\"num\">$1.0000</td>" in moves


def test_lost_steps_without_a_measured_pace_are_not_priced() -> None:
    placed = PlacementRow(1, 7, "aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot",
                          "linux", "V100", 1, at(0), at(1), 1.25, "recovery", "i-1", False)
    assert math.isnan(lost_work_usd(361, 7, placed, placed, {}, 2))
    assert lost_work_usd(0, 7, placed, placed, {}, 2) == 0.0
    # 361 steps at 18.05 steps/s on a 2-node gang at $1.25/h a node
    pace = {(7, "V100", 1): 18.05}
    assert lost_work_usd(361, 7, placed, placed, pace, 2) == pytest.approx(
        361 / 18.05 / 3600 * 1.25 * 2)

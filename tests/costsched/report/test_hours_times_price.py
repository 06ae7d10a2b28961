"""A placement's hours where `status` multiplies them by its price read at the decimals
at which the product makes its amount as written (0.0356 h at $0.918/h: 0.0356 h x
$0.9180/h = $0.0327); the report, which states no product, writes its billed hours at
charged hours' four decimals, rounded as they read, its totals the sums of its rows as
written, in the text and the HTML file."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from costsched.amounts import as_written
from costsched.cli import app
from costsched.store import PriceStore
from tests.costsched.cli.test_status_amounts import ran
from tests.costsched.test_costs import EAST_A, observe

PRICE = 0.918


def _store(tmp_path: Path) -> str:
    db = str(tmp_path / "store.sqlite")
    store = PriceStore(db)
    observe(store, EAST_A, [(0, PRICE)])
    ran(store, tmp_path, "tiny", [(EAST_A, PRICE, "launch", 128.16)])  # 0.0356 h
    store.dispose()
    return db


def _multiplies_out(hours: str, money: str) -> None:
    places = len(money.partition(".")[2])
    assert f"${as_written(float(hours) * PRICE, places):.{places}f}" == money, (hours, money)


def test_the_reports_billed_hours_read_at_four_decimals(tmp_path: Path) -> None:
    db = _store(tmp_path)
    html = tmp_path / "report.html"
    result = CliRunner().invoke(app, ["report", "--db", db, "--wide", "--html", str(html)],
                                env={"COLUMNS": "250"})
    assert result.exit_code == 0, result.output
    rows = re.findall(r"│ +([0-9.]+) │ +(\$[0-9.]+) │", result.stdout)  # hours, compute
    assert len(rows) == 3, result.stdout  # per job, per cloud, per day
    assert all(hours == "0.0356" for hours, _ in rows), result.stdout
    total = re.search(r"compute (\$[0-9.]+),.* over ([0-9.]+) billed hours", result.stdout)
    assert total is not None and total[2] == "0.0356", result.stdout

    page = html.read_text()
    cells = re.findall(r'<td class="num">([0-9.]+)</td><td class="num">(\$[0-9.]+)</td>',
                       page)
    assert cells and all(h == "0.0356" for h, _ in cells), cells


def test_status_multiplies_out_the_placements_hours(tmp_path: Path) -> None:
    db = _store(tmp_path)
    result = CliRunner().invoke(app, ["status", "--db", db, "--no-reconcile"],
                                env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    found = re.search(r"billed ([0-9.]+) h x \$0\.9180/h = (\$[0-9.]+)", result.stdout)
    assert found is not None, result.stdout
    # $0.0326 (under a dime: four decimals) as 0.03556 h at its price, never 0.03 h
    assert (found[1], found[2]) == ("0.03556", "$0.0326"), result.stdout
    _multiplies_out(found[1], found[2])

"""Money reads at one precision down a column and along a line: a column of stored prices
(`gpus`, its offerings, `catalog`, `prices show`, `plan`'s $/h, `bills`' rates) at the
decimals the most precise of them takes, never '$0.15924' above '$0.3618'; the bundled
prices summed from a machine's and its GPUs' rows carry no float noise ($7.36, never
$7.35999); `bills lines` writes its total as the report writes billed money ('$0.0000',
never '$0.00' where the rest reads four decimals)."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pandas as pd
import pytest

from costsched.cli.plan_figures import price_cells

DATA = Path(__file__).resolve().parents[3] / "costsched" / "data"
PRICE = re.compile(r"\$[\d,]+\.(\d+)")


@pytest.fixture(autouse=True)
def _own_default_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_DB", str(tmp_path / "default.db"))


def _decimals(cells: list[str]) -> set[int]:
    return {len(m.group(1)) for c in cells for m in [PRICE.search(c)] if m}


def _column(out: str, index: int) -> list[str]:
    """The `index`-th price ('$...') of each line of `out` that has one there."""
    found = []
    for line in out.splitlines():
        prices = PRICE.findall(line)
        if len(prices) > index:
            found.append("$0." + prices[index])
    return found


def test_a_column_of_prices_reads_at_one_precision_each_price_exact() -> None:
    from costsched.amounts import column_places, derived_prices, stored_prices

    cells = stored_prices([0.15924, 0.283464, 0.3618, None])
    assert cells == ["$0.159240", "$0.283464", "$0.361800", "-"]
    assert stored_prices([7.36, 0.7045, 22.88]) == ["$7.3600", "$0.7045", "$22.8800"]
    assert derived_prices([0.0398, 0.3618], [0.0796, 0.3618]) == ["$0.0398", "$0.3618"]
    assert column_places([]) == 4
    shown = pd.DataFrame({"usd_per_hour": [0.15924, 0.283464, 0.3618, 0.621192, 0.77972]})
    assert _decimals(price_cells(shown)) == {6}  # plan's $/h column


def test_the_gpus_tables_write_each_column_at_one_precision(cli) -> None:  # noqa: ANN001
    out = cli("gpus", "--at", "2026-11-28").stdout
    rows = [line for line in out.splitlines() if re.match(r"\s*[A-Z][\w-]*:\d+\s", line)]
    on_demand = [PRICE.search(line.split()[1]) for line in rows]
    assert len({len(m.group(1)) for m in on_demand if m}) == 1, out
    assert "7.35999" not in out and "22.87998" not in out
    [p100] = [line for line in rows if line.split()[0] == "P100:4"]
    assert p100.split()[1].startswith("$7.36") and set(p100.split()[1][5:]) <= {"0"}, p100
    offerings = cli("gpus", "L4", "--at", "2026-11-28").stdout
    for index in (0, 1):  # $/h and $/GPU-h
        assert len(_decimals(_column(offerings, index))) == 1, offerings


def test_catalog_and_prices_show_columns_read_at_one_precision(cli) -> None:  # noqa: ANN001
    out = cli("catalog", "--wide").stdout
    for index in (0, 1):
        assert len(_decimals(_column(out, index))) == 1, out
    shown = cli("prices", "show", "--gpu", "L4", "--wide").stdout
    assert len(_decimals(_column(shown, 0))) == 1, shown


def test_bundled_prices_summed_from_parts_carry_no_float_noise() -> None:
    with (DATA / "on_demand_prices.csv").open() as f:
        summed = [r for r in csv.DictReader(f) if "machine + GPU" in r["source"]
                  or "K80 price" in r["source"]]
    assert summed
    noisy = [(r["instance_type"], r["usd_per_hour"]) for r in summed
             if 0 < abs(round(float(r["usd_per_hour"]), 2) - float(r["usd_per_hour"])) <= 3e-5]
    assert noisy == []


def test_bills_lines_total_reads_as_billed_money_elsewhere(cli) -> None:  # noqa: ANN001
    out = cli("bills", "lines").stdout
    assert out.startswith("0 lines, $0.0000"), out


def test_the_dashboard_prices_page_writes_each_column_at_one_precision(tmp_path: Path) -> None:
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from costsched.dashboard.app import create_app
    from costsched.store import PriceStore

    page = TestClient(create_app(PriceStore(str(tmp_path / "s.sqlite")))).get("/prices").text
    start = page.index("<h2>Cheapest per GPU model and count</h2>")
    rows = re.findall(r"<tr><td>[^<]+</td>(.*?)</tr>", page[start:page.index("</table>", start)])
    assert rows
    for market in (0, 1):  # on-demand, spot
        cells = [re.findall(r'class="num">([^<]+)<', r)[market] for r in rows]
        assert len(_decimals(cells)) == 1, cells
    start = page.index("<h2>Cheapest offerings per GPU model</h2>")
    cells = re.findall(r'class="num">(\$[^<]+)<', page[start:page.index("</table>", start)])
    assert len(cells) > 4 and len(_decimals(cells)) == 1, cells

"""A plan row's hours take the decimals at which its $/h, as its cell writes it (a stored
price at its own decimals, `stored_price`), times its hours reads as its total: never a
price's decimals beyond those shown. Beside a row whose price has more digits than a
stored price keeps (written at four, so no hours make it multiply out), the other rows'
hours still take the decimals that make theirs add up (`plan_figures.product_places`)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import yaml

from costsched.amounts import usd
from costsched.cli.plan_figures import product_places
from costsched.store import OBSERVATION_COLUMNS, PriceStore
from tests.costsched.cli.test_plan_rows_multiply import figure, rows

AT = datetime(2026, 11, 1, tzinfo=timezone.utc)
STORED = 1.9213  # a price of four decimals
LONG = 2.8753686  # more digits than a stored price keeps: its cell reads $2.8754
STEPS = 603_990  # 167.775 h at 1 step/s; 279.625 h at 0.6


def _frame() -> pd.DataFrame:
    spans = [STEPS / 3600, STEPS / 0.6 / 3600]
    return pd.DataFrame({"usd_per_hour": [STORED, LONG], "expected_hours": spans,
                         "expected_cost": [STORED * spans[0], LONG * spans[1]]})


def test_the_hours_add_up_with_the_prices_as_their_cells_show_them() -> None:
    # At 2 decimals $1.9213 x 167.78 h reads $322.36, not its $322.35; at 3 it adds up.
    # ($2.8754 x 279.625 h adds up at none, its price shown short of its digits: it holds
    # the other row's hours back at no decimals.)
    assert product_places(_frame(), 2, 2) == 3
    assert usd(STORED * 167.775, 2) == usd(STORED * STEPS / 3600, 2) == "$322.35"
    assert usd(STORED * 167.78, 2) == "$322.36"


def test_fewer_decimals_where_the_shown_prices_add_up_at_them() -> None:
    frame = _frame().iloc[:1]
    frame = frame.assign(expected_hours=[10.0], expected_cost=[STORED * 10])
    assert product_places(frame, 2, 2) == 2


def _offer(instance_type: str, gpu: str, price: float) -> dict:
    return dict(zip(OBSERVATION_COLUMNS, ["aws", "us-east-1", "", instance_type, "on_demand",
                                          "linux", gpu, 1, 4, 16.0, price,
                                          AT - timedelta(hours=1), "test"], strict=True))


def test_a_plan_row_at_a_stored_price_multiplies_out_as_printed(
        cli, tmp_path: Path, db_path: Path) -> None:  # noqa: ANN001
    store = PriceStore(str(db_path))
    store.ingest(pd.DataFrame([_offer("g5.xlarge", "A10G", STORED),
                               _offer("g6.xlarge", "L4", LONG)]))
    store.dispose()
    path = tmp_path / "j.yaml"
    path.write_text(yaml.safe_dump({
        "name": "j", "run": "python t.py", "throughputs": {"A10G": 1.0, "L4": 0.6},
        "steps": STEPS, "constraints": {"markets": ["on_demand"], "regions": ["us-east-1"],
                                        "instance_types": ["g5.xlarge", "g6.xlarge"]}}))
    shown = cli("plan", path, "--at", AT.strftime("%Y-%m-%dT%H:%MZ"))
    assert shown.exit_code == 0, shown.output
    columns, table = rows(shown.stdout)
    price, span, total = (columns.index(c) for c in ("$/h", "hours", "total $"))
    first = table[0]
    assert (first[price], first[span], first[total]) == ("$1.9213", "167.775", "$322.35"), \
        shown.stdout
    (p, _), (h, _), (t, places) = (figure(first[i]) for i in (price, span, total))
    assert usd(p * h, places) == first[total], shown.stdout
    assert table[1][price] == "$2.8754", shown.stdout  # its own cell: four decimals

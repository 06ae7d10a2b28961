"""A plan's baseline reads by one rule, whatever the column of totals above it: at
MAX_DECIMALS, more where the column takes more ('$0.7590*' under a column of three
decimals as under one of four, never '$0.759*' in one plan and '$0.7590*' in another);
its hours times its price make its cost as written. The $/h and hours columns share one
reading of their precisions (`plan_figures.product_places`, once)."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd
import pytest

from costsched.cli import plan_cells, plan_figures


def _shown(costs: list[float]) -> pd.DataFrame:
    prices = [0.5 + i / 10 for i in range(len(costs))]
    return pd.DataFrame({"expected_cost": costs, "usd_per_hour": prices,
                         "expected_hours": [c / p for c, p in zip(costs, prices, strict=True)],
                         "throughput_estimated": [False] * len(costs),
                         "budget_may_not_fit": [False] * len(costs)})


BASELINE = SimpleNamespace(hours=0.2480392156862745, usd_per_hour=3.06, cost=0.759,
                           estimated=True, basis="on-demand 1xV100")


@pytest.mark.parametrize("costs", [[0.5, 0.5004], [0.05, 0.06], [1.25, 2.5]])
def test_the_baseline_reads_alike_whatever_its_column(costs: list[float]) -> None:
    cells = plan_cells.ranking_cells(_shown(costs), None, None, BASELINE, False)
    assert cells.baseline.startswith("baseline: on-demand 1xV100, "), cells.baseline
    assert "= $0.7590*" in cells.baseline, cells.baseline
    span, rate = cells.baseline.split(", ")[1].split(" h x $")
    assert round(float(span.rstrip("*")) * float(rate.split("/h")[0]), 4) == 0.759


def test_one_reading_of_the_products_precision_feeds_both_columns(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = plan_figures.product_places

    def counted(*args: object) -> tuple[int, int]:
        calls.append(args)
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(plan_figures, "product_places", counted)
    plan_cells.ranking_cells(_shown([0.5, 0.6]), None, None, BASELINE, False)
    assert len(calls) == 1

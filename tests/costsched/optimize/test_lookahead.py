"""Two-stage costs: moves priced as the decision model prices them."""

from __future__ import annotations

import numpy as np
import pytest

from costsched.optimize.decision import Overheads, egress_per_gb, move_cost
from costsched.optimize.lookahead import moves_between, next_period_costs


def test_moves_between_is_move_cost_from_every_source() -> None:
    cloud = np.array(["aws", "aws", "azure"])
    region = np.array(["us-east-1", "us-west-2", "eastus"])
    prices = np.array([0.9, 1.1, 0.6])
    costs = Overheads(overlap_minutes=6)
    matrix = moves_between(costs, prices, egress_per_gb(cloud, region), 4.0, 0.5)
    for src in range(3):
        row = move_cost(costs, prices, src, egress_per_gb(cloud, region, src), 4.0, 0.5)
        row[src] = 0.0
        np.testing.assert_allclose(matrix[src], row)


def test_a_job_that_finishes_within_the_period_pays_only_the_period() -> None:
    sps, price = np.array([10.0, 10.0]), np.array([1.0, 2.0])
    cost = next_period_costs(10.0 * 3600 * 5, sps, price, np.array([0.1, 0.1]),
                             np.zeros(2), 0.5, 0.25, 24.0, np.zeros(2), np.zeros(2),
                             np.zeros((2, 2)))
    np.testing.assert_allclose(cost.total, [5.0, 10.0])  # 5 hours each, the forecast unused
    np.testing.assert_allclose(cost.period, cost.total)


def test_the_rest_is_finished_where_it_is_cheapest_at_forecast_prices() -> None:
    sps = np.array([1.0, 1.0])
    steps = 48 * 3600.0  # 48 hours on either
    later = np.array([[0.0, 2.0], [2.0, 0.0]])
    cost = next_period_costs(steps, sps, np.array([1.0, 3.0]), np.array([1.0, 0.5]),
                             np.zeros(2), 0.5, 0.25, 24.0, np.zeros(2), np.zeros(2), later)
    # Run on 0 at 1 $/h, then move (2 $) and finish 24 h at 0.5; or on 1 at 3 $/h, stay.
    assert cost.total == pytest.approx([24 + 2 + 12, 72 + 12])
    assert cost.period == pytest.approx([24, 72])

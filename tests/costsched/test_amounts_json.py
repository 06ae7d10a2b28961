"""Money in JSON is the exact figure, without a float's last-digit error: 0.0034502, not
0.0034501999999999996, in `status --json`, `report --json` and the dashboard's API."""

from __future__ import annotations

import math

from costsched.amounts import exact, exact_money
from costsched.service.views import report_document


def test_a_figure_reads_without_its_last_digit_error() -> None:
    assert exact(0.0034501999999999996) == 0.0034502
    assert exact(0.00010122222222222216) == 0.000101222222222
    assert exact(36.73390000000027) == 36.7339
    assert exact(4.3e-19) == 0.0  # a sum's rounding error
    assert math.isnan(exact(math.nan)) and exact(None) is None  # type: ignore[arg-type]


def test_every_amount_of_a_document_is_exact_and_nothing_else() -> None:
    doc = {"cost_usd": 0.0034501999999999996, "steps_per_second": 0.30000000000000004,
           "placements": [{"usd": 0.1 + 0.2, "usd_per_hour": 0.1 + 0.7, "hours": 0.1 + 0.2}],
           "budget": {"spent_usd": 1, "name": "cost_usd"}}
    assert exact_money(doc) == {
        "cost_usd": 0.0034502, "steps_per_second": 0.30000000000000004,
        "placements": [{"usd": 0.3, "usd_per_hour": 0.8, "hours": 0.30000000000000004}],
        "budget": {"spent_usd": 1.0, "name": "cost_usd"}}


class _Built:
    def document(self) -> dict:
        return {"totals": {"on_demand_usd": 36.73390000000027},
                "jobs": [{"saved_vs_launch_choice_usd": 0.00010122222222222216}]}


def test_report_json_writes_money_exact() -> None:
    doc = report_document(_Built())  # type: ignore[arg-type]
    assert doc["totals"]["on_demand_usd"] == 36.7339  # was 36.73390000000027
    assert doc["jobs"][0]["saved_vs_launch_choice_usd"] == 0.000101222222222

"""One amount prints one way everywhere: every figure rounds a half up, as a reader rounds
(never down for the binary float just below it), and a job's dollars in the estimates
table read as its total in the spend tables (the sum of its charges as written), in the
text, the HTML file and the dashboard alike."""

from __future__ import annotations

import math

import pytest

from costsched.amounts import as_written, charged_usd, hours, usd
from costsched.report.cells import format_cell, shown_rows

# A job of three placements (launch, migration, start) and no egress, at a store's scale
# of 5 decimals: $0.000175 + $0.000945 + $0.0021 (each a half at the fifth decimal).
LEGS = [0.0025 * 0.07, 0.00675 * 0.14, 0.03 * 0.07]
SCALE = {"usd": 5, "hours": 5}


@pytest.mark.parametrize(("value", "places", "said"), [
    (0.000175, 5, "$0.00018"), (0.0025 * 0.07, 5, "$0.00018"), (0.000945, 5, "$0.00095"),
    (0.0032198924, 5, "$0.00322"), (-0.000175, 5, "-$0.00018"), (2.675, 2, "$2.68"),
    (0.125, 2, "$0.13")])
def test_a_half_rounds_up_everywhere(value: float, places: int, said: str) -> None:
    assert usd(value, places) == said
    assert charged_usd(value, places) == said
    assert as_written(value, places) == float(said.replace("$", ""))


def test_hours_round_a_half_up_too() -> None:
    assert hours(0.000125, 5) == "0.00013"


def _job_row() -> dict:
    total = math.fsum(LEGS)
    return dict(job_id=2, name="km", state="succeeded", nodes=1, billed_hours=0.03917,
                compute_usd=total, egress_usd=0.0, usd=total, on_demand_usd=math.nan,
                saved_vs_on_demand_usd=math.nan, launch_choice_usd=math.nan,
                saved_vs_launch_choice_usd=math.nan)


def _estimate_row() -> dict:
    total = math.fsum(LEGS)
    return dict(job_id=2, name="km", model="km", gpu="1xL4", state="succeeded", done=1.0,
                expected_training_hours=0.00968, training_hours=0.0333,
                training_hours_ratio=3.44, expected_usd=0.020676, usd=total,
                usd_ratio=total / 0.020676, expected_preemptions=0.0061, preemptions=0,
                vs_estimate="")


def test_a_jobs_dollars_read_alike_in_the_spend_and_estimate_tables() -> None:
    tables = {"jobs": [_job_row()], "clouds": [], "days": [],
              "estimates": [_estimate_row()], "scale": SCALE,
              "parts": {"jobs": [{"compute_usd": LEGS, "billed_hours": [0.0025, 0.00675,
                                                                        0.03]}],
                        "estimates": [{"usd": LEGS}]}}
    spend_places, [spend] = shown_rows("jobs", tables)
    estimate_places, [estimate] = shown_rows("estimates", tables)
    spent = format_cell("usd", spend["usd"], spend_places)
    assert spent == format_cell("usd", estimate["usd"], estimate_places)
    # its legs as `status` lists them, each rounded half up, add up to it
    assert spent == "$0.00323"  # $0.00018 + $0.00095 + $0.00210


def test_the_dashboard_has_no_money_filter_of_its_own() -> None:
    from costsched.dashboard import render

    assert not hasattr(render, "money") and "money" not in render.FILTERS

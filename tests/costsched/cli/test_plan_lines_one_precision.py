"""A plan's lines of hours x price = cost state the cost as the table and launch write it
(a cost the user weighs: under a dime at four decimals), with hours that visibly multiply
out at that precision: never '0.29 h x $0.07962/h = $0.02' beside a row of $0.0228."""

from __future__ import annotations

from decimal import Decimal

import pytest

from costsched.amounts import decimals_kept, usd
from costsched.cli.plan_figures import times_line
from costsched.cli.plan_placed import _cost
from costsched.service.launch_place import LaunchPlacement


def _multiplies_out(line: str) -> tuple[str, str]:
    """(hours, cost) of 'H h x $P/h = $C', checked: H x P, rounded as C is, reads C."""
    hours, _, rest = line.partition(" h x $")
    price, _, cost = rest.partition("/h = ")
    cost = cost.split()[0].rstrip(".*")
    places = len(cost.partition(".")[2])
    product = (Decimal(hours.lstrip(", ")) * Decimal(price)).quantize(Decimal(1).scaleb(-places))
    assert f"${product}" == cost, line
    return hours, cost


@pytest.mark.parametrize(("hours", "price"), [(0.28682, 0.07962), (0.0791, 0.704518),
                                               (1.3, 0.07962), (0.0028, 55.04)])
def test_the_cost_of_a_line_reads_as_the_table_writes_it(hours: float, price: float) -> None:
    cost = hours * price
    _, written = _multiplies_out(times_line(hours, price, cost))
    assert written == usd(cost, decimals_kept([cost]))


def test_the_emit_comment_of_the_trial_reads_its_row() -> None:
    line = times_line(0.2868, 0.07962, 0.022835)
    assert line.endswith("= $0.0228"), line
    _multiplies_out(line)


def test_a_deadline_policy_placement_reads_its_cost_as_weighed() -> None:
    placed = LaunchPlacement("spot-hedge", offering="gcp us-east4 g2-standard-4 on-demand",
                             usd_per_hour=0.704518, usd=0.0557)
    said = _cost(placed, spot=False)
    assert said.endswith(" for its work and start"), said
    _, cost = _multiplies_out(said.removeprefix(", ").removesuffix(" for its work and start"))
    assert cost == "$0.0557"

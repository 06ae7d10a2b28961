"""The rest of a job itemised (`costsched.rest_cost`): its work at its price, what the
decision model expects preemptions to add and its start, at one precision, the parts
adding up as written to the total as written, each part's hours at the price reading as
its amount; a part below the last decimal read so, never as zero."""

from __future__ import annotations

import math
import re
from decimal import ROUND_HALF_UP, Decimal

from costsched.rest_cost import RestCost, of_row

# '$0.0400* ($0.0341 for 0.0142 h of work + ... , each at $2.4000/h' or
# '$0.0400 (0.0167 h of work at $2.4000/h)'.
_MANY = re.compile(r"\$(?P<total>[\d,]+\.\d+)\*? \((?P<items>(?:[^()]|\([^()]*\))*?), each "
                   r"at \$(?P<price>[\d,]+\.\d+)/h")
_ONE = re.compile(r"\$(?P<total>[\d,]+\.\d+)\*? \((?P<hours>[\d,.]+) h of work at "
                  r"\$(?P<price>[\d,]+\.\d+)/h")
_PART = re.compile(r"(?P<under><)?\$(?P<usd>[\d,]+\.\d+) for (?P<hours>[\d,.]+) h "
                   r"(?P<what>of work|of restarts and work done again|to start it)")


def _number(text: str) -> Decimal:
    return Decimal(text.replace(",", ""))


def _at(value: Decimal, places: int) -> Decimal:
    """`value` as a reader rounds it to `places` decimals (a half up)."""
    return value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def itemised(line: str, after: str = "") -> tuple[Decimal, dict[str, Decimal]]:
    """The first itemised rest in `line` (after the text `after`): its total and its parts
    by what they are of ('of work', 'of restarts and work done again', 'to start it'), each
    as written ('<$0.0001' reads 0), after checking that they add up as written to the
    total and that each part's hours times the price read as its amount."""
    text = line[line.index(after):] if after else line
    many, one = _MANY.search(text), _ONE.search(text)
    if many is None or (one is not None and one.start() < many.start()):
        assert one is not None, line
        total, price = _number(one["total"]), _number(one["price"])
        places = -total.as_tuple().exponent
        assert _at(_number(one["hours"]) * price, places) == total, line
        return total, {"of work": total}
    total, price = _number(many["total"]), _number(many["price"])
    places = -total.as_tuple().exponent
    parts: dict[str, Decimal] = {}
    for part in _PART.finditer(many["items"]):
        amount = _number(part["usd"])
        assert -amount.as_tuple().exponent == places, line  # one precision
        if part["under"]:  # below the last decimal: read as nothing, said so
            assert amount == Decimal(1).scaleb(-places), line
            parts[part["what"]] = Decimal(0)
            continue
        assert _at(_number(part["hours"]) * price, places) == amount, line
        parts[part["what"]] = amount
    assert len(parts) >= 2, line
    assert sum(parts.values()) == total, line  # they add up as written
    return total, parts


def test_a_plan_s_row_is_itemised_into_work_preemptions_and_start_adding_up() -> None:
    row = {"usd_per_hour": 2.4, "work_hours": 0.0142, "expected_hours": 0.0174,
           "start_hours": 0.0007, "preemptions_per_hour": 1.5, "expected_cost": 0.0174 * 2.4}
    rest = of_row(row)
    assert rest is not None and rest.usd == row["expected_cost"]  # the plan's own figure
    said = rest.said(4)
    assert said == ("$0.0418 ($0.0341 for 0.0142 h of work + $0.0060 for 0.0025 h of "
                    "restarts and work done again (preemptions expected at 1.5/h) + $0.0017 "
                    "for 0.0007 h to start it, each at $2.4000/h)")
    total, parts = itemised(said)
    assert total == Decimal("0.0418") and parts["to start it"] == Decimal("0.0017")
    # Its steps left alone: the same work and preemptions, no start.
    alone = rest.without_start()
    assert math.isclose(alone.usd + 0.0007 * 2.4, rest.usd)
    assert "to start it" not in alone.said(4)


def test_parts_that_do_not_add_up_each_alone_are_made_to_at_the_line_s_precision() -> None:
    # Each alone: $0.005 + $0.005 + $0.005 reads $0.01 x 3 against a total of $0.02.
    rest = RestCost(1.0, 0.005, 0.015, 0.5, 0.005)
    said = rest.said(2)
    total, parts = itemised(said)
    assert total == Decimal("0.02") and len(parts) == 3, said
    assert said.count("<$0.01 for 0.0050 h") == 1, said  # the part the sum leaves under it


def test_a_part_below_the_last_decimal_reads_under_it_never_zero() -> None:
    rest = RestCost(36.0, 0.002103, 0.002104, 0.0854)
    said = rest.said(4)
    assert "<$0.0001 for " in said and "$0.0000" not in said, said
    itemised(said)


def test_work_alone_reads_as_its_hours_at_its_price() -> None:
    # (its hours at the decimals at which they make the amount: 0.0167 h would be $0.0401)
    assert RestCost(2.4, 1 / 60).said(4) == "$0.0400 (0.01667 h of work at $2.4000/h)"
    itemised(RestCost(2.4, 1 / 60).said(4))


def test_a_row_that_is_no_plan_of_the_decision_model_is_not_itemised() -> None:
    # A policy's own cost set in a row: its hours less than its work and start.
    assert of_row({"usd_per_hour": 1.0, "work_hours": 2.0, "expected_hours": 2.0,
                   "start_hours": 0.25}) is None
    assert of_row({"usd_per_hour": 1.0, "work_hours": math.nan, "expected_hours": 2.0}) is None

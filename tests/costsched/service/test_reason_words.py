"""The cost of a placed job's rest where it runs reads as what it is in every decision line
('$X to finish here', one phrase from one place), never as the whole job's forecast
`status` shows ('expected here' was compared with it)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from costsched.decide.price import Decision
from costsched.optimize.decision import MovePrice
from costsched.service.jobs.reasons import deadline_dollars, finish_here, move_reason

AT = datetime(2026, 3, 1, tzinfo=timezone.utc)
HERE = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")
THERE = ("aws", "us-east-1", "us-east-1b", "p3.2xlarge", "spot", "linux")
MOVE = MovePrice(egress_usd=0.1, restart_usd=0.6, lost_work_usd=0.5, overlap_usd=0.0)


def _lines() -> list[str]:
    moves = Decision(AT, "dynamic-aware", HERE, THERE, None, 0.9, 12.4, 8.2, move=MOVE)
    dearer = Decision(AT, "dynamic-aware", HERE, THERE, None, 0.9, 12.4, 15.5, move=MOVE)
    held = Decision(AT, "dynamic-aware", HERE, THERE, None, 0.9, 12.4, 8.2, move=MOVE,
                    held="its budget's cap")
    stays = Decision(AT, "dynamic-aware", HERE, HERE, None, 0.9, 12.4, 12.4,
                     other=(THERE, 15.5, MOVE))
    return [move_reason(moves, 0.05), move_reason(dearer, 0.05),
            move_reason(moves, 0.05, asked=True), move_reason(held, 0.05),
            move_reason(stays, 0.05), deadline_dollars(moves), deadline_dollars(stays)]


@pytest.mark.parametrize("line", _lines())
def test_the_rest_here_reads_as_the_cost_to_finish_here(line: str) -> None:
    assert finish_here("$12.40") in line and "expected here" not in line, line


def test_the_phrase_names_the_rest() -> None:
    assert finish_here("$12.40") == "$12.40 to finish here"


def test_a_deadline_line_whose_rest_has_no_price_says_why_not_a_dash() -> None:
    nan = float("nan")
    stays = Decision(AT, "spot-hedge", HERE, HERE, None, 0.9, nan, nan)
    moves = Decision(AT, "spot-hedge", HERE, THERE, None, 0.9, 12.4, nan, move=MOVE)
    assert deadline_dollars(stays) == (
        ": its rest cannot be priced: no price is known now for the offering it runs on "
        "(`costsched collect --cloud aws` or `costsched prices import` brings one)")
    assert deadline_dollars(moves) == (
        ": its rest cannot be priced: the choice cannot run the job's model")

"""Why a budget's cap made no move, where its spend is already past the budget (within
the one watch interval's overrun a cap allows): what is left reads as over by that much,
never as a negative amount 'left'."""

from __future__ import annotations

from datetime import datetime, timezone

from costsched.decide.price import Decision
from costsched.optimize.decision import MovePrice
from costsched.service.jobs.reasons import none_fits

AT = datetime(2026, 3, 1, tzinfo=timezone.utc)
HERE = ("gcp", "us-east4", "", "g2-standard-4", "on-demand", "linux")
THERE = ("gcp", "us-east5", "", "g2-standard-4", "spot", "linux")
CHEAPEST = Decision(AT, "budget", HERE, THERE, None, 0.0796, 0.0157, 0.0086,
                    move=MovePrice(egress_usd=0.0, restart_usd=0.0067, lost_work_usd=0.0001,
                                   overlap_usd=0.0))


def test_a_budget_already_passed_reads_as_over_by_so_much() -> None:
    for line in (none_fits(-0.0006, CHEAPEST), none_fits(-0.0006, None),
                 none_fits(-0.0006, None, priced_here=False)):
        assert "-$" not in line and "already over by $0.0006" in line, line
    assert none_fits(-0.0006, CHEAPEST).startswith(
        "no offering finishes it within its budget, already over by $0.0006 (the cheapest: "
        "gcp us-east5 g2-standard-4 spot, $0.0086 to finish there")


def test_what_is_left_still_reads_as_left() -> None:
    assert none_fits(0.0039, CHEAPEST).startswith(
        "no offering finishes it within the $0.0039 left (the cheapest: ")

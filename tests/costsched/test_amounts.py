"""One rule for money and hours (`costsched.amounts`): an amount alone in cents, or two
significant digits under a cent; the amounts of one line at one precision, so that they
visibly add up; hours never '0.0' for minutes. Checked on the rule and on the lines that
broke it: a move's reason, the report's totals, a budget that stops a job."""

from __future__ import annotations

import re
from datetime import datetime, timezone

import pandas as pd
import pytest

from costsched.amounts import decimals, hours, hours_all, per_hour, usd, usd_all
from costsched.decide.price import Decision
from costsched.optimize.decision import MovePrice
from costsched.report.html import format_cell, table_places, totals_line
from costsched.service.jobs.decider import budget_verdict, move_reason

AT = datetime(2026, 3, 1, tzinfo=timezone.utc)
HERE = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")
THERE = ("aws", "us-east-1", "us-east-1b", "p3.2xlarge", "spot", "linux")
AMOUNT = re.compile(r"(?<![\w.])(<?)-?\$([\d,]+(?:\.(\d+))?)")


def amounts(line: str) -> list[tuple[float, int]]:
    """(value, decimals) of each dollar amount in `line`."""
    return [(float(m.group(2).replace(",", "")), len(m.group(3) or ""))
            for m in AMOUNT.finditer(line)]


def test_one_amount() -> None:
    assert [usd(v) for v in (1234.5, 0.0049, 0.00051, -0.2, 0.0, 1e-9, None,
                             float("nan"))] == [
        "$1,234.50", "$0.0049", "$0.00051", "-$0.20", "$0.00", "$0.00", "-", "-"]
    assert per_hour(0.918) == "$0.9180" and per_hour(3.06) == "$3.0600"
    assert [hours(v) for v in (0.03, 1.044, 1234.5, 0.0049)] == [
        "0.03", "1.04", "1,234.50", "0.0049"]


def test_amounts_read_together_share_one_precision() -> None:
    # The trial's line: "$0.03 expected here, $0.0064 on ... restart $0.00051 ... (saves
    # $0.02)" did not add up; at one precision it does.
    assert usd_all(0.03, 0.0064, 0.00051, 0.0231) == ["$0.0300", "$0.0064", "$0.0005",
                                                      "$0.0231"]
    assert usd_all(12.5, 0.0) == ["$12.50", "$0.00"]
    assert usd_all(0.03, 0.00001) == ["$0.0300", "<$0.0001"]  # never $0.0000 for a cost
    # A tiny loss keeps its sign: a saving of -$0.00003 is no "<$0.0001" saved.
    assert usd_all(0.03, -0.00003) == ["$0.0300", "-<$0.0001"]
    assert hours_all(0.03, -0.00001) == ["0.0300", "-<0.0001"]
    assert usd_all(2.754, 1e-17) == ["$2.75", "$0.00"]  # a sum's rounding error is none
    assert hours_all(0.03, 12.5) == ["0.03", "12.50"] and decimals([0.004]) == 4


def test_a_move_reason_adds_up() -> None:
    move = MovePrice(egress_usd=0.0, restart_usd=0.00051, lost_work_usd=0.0,
                     overlap_usd=0.0002)
    stay, there = 0.03, 0.0064 + float(move.total)
    decision = Decision(AT, "dynamic-aware", HERE, THERE, None, 0.9, stay, there, move=move)
    line = move_reason(decision, 0.05)
    found = amounts(line)
    assert len(found) == 8 and {d for _, d in found} == {4}, line
    shown = dict(zip(["stay", "there", "move", "egress", "restart", "lost", "overlap",
                      "saves"], (v for v, _ in found), strict=True))
    assert shown["stay"] - shown["there"] == pytest.approx(shown["saves"], abs=1e-4)
    assert shown["egress"] + shown["restart"] + shown["lost"] + shown["overlap"] == \
        pytest.approx(shown["move"], abs=2e-4)


def test_a_budget_line_adds_up() -> None:
    line = budget_verdict("b", 0.0123, 0.0079, 0.02)  # $0.0202: over, by a fifth of a cent
    # At cents (or tenths of one) it would read $0.01 + $0.01 against $0.02: not over.
    assert line == "$0.0123 spent + $0.0079 for the next watch interval would pass the " \
                   "budget of $0.0200"
    line = budget_verdict("b", 0.61, 0.40, 1.0)
    assert line == "$0.61 spent + $0.40 for the next watch interval would pass the " \
                   "budget of $1.00"


def test_the_reports_totals_read_in_hours_and_add_up() -> None:
    line = totals_line({"usd": 0.0300, "compute_usd": 0.0264, "egress_usd": 0.0036,
                        "billed_hours": 0.03, "saved_vs_on_demand_usd": 0.012,
                        "saved_vs_static_usd": None})
    assert line == ("Spend $0.0300 (compute $0.0264, egress $0.0036) over 0.03 "
                    "instance-hours; saved $0.0120 against on-demand and - against the "
                    "launch-time choice kept")


def test_a_table_row_adds_up() -> None:
    frame = pd.DataFrame({"compute_usd": [0.03, 2.0], "egress_usd": [0.0012, 0.0],
                          "usd": [0.0312, 2.0], "billed_hours": [0.03, 2.5]})
    places = table_places(frame)
    assert [format_cell(c, frame.loc[0, c], places) for c in frame.columns] == [
        "$0.0300", "$0.0012", "$0.0312", "0.03"]
    assert format_cell("usd", 2.0, places) == "$2.0000"

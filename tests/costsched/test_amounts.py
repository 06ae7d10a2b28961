"""One rule for money and hours (`costsched.amounts`): an amount alone in cents, or two
significant digits under a cent; the amounts of one line at one precision, so that they
visibly add up; hours never '0.0' for minutes. Checked on the rule and on the lines that
broke it: a move's reason, the report's totals, a budget that stops a job."""

from __future__ import annotations

import re
from datetime import datetime, timezone

import pandas as pd
import pytest

from costsched.amounts import (
    age,
    decimals,
    given,
    hours,
    hours_all,
    hours_times,
    parts_as_written,
    ratio,
    stored_price,
    usd,
    usd_all,
)
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
        "$1,234.50", "$0.0049", "$0.0005", "-$0.20", "$0.00", "$0.00", "-", "-"]
    assert stored_price(0.918) == "$0.9180" and stored_price(3.06) == "$3.0600"
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
    # One precision for the amounts, a zero among them too ('overlap $0.0000').
    assert len(found) == 8 and {d for v, d in found} == {4}, line
    shown = dict(zip(["stay", "there", "move", "egress", "restart", "lost", "overlap",
                      "saves"], (v for v, _ in found), strict=True))
    assert shown["stay"] - shown["there"] == pytest.approx(shown["saves"], abs=1e-4)
    assert shown["egress"] + shown["restart"] + shown["lost"] + shown["overlap"] == \
        pytest.approx(shown["move"], abs=2e-4)


@pytest.mark.parametrize(("stay", "there", "asked"), [
    (0.01874, 0.02146, True), (0.01834, 0.02144, True), (0.02146, 0.01874, True),
    (0.02146, 0.01874, False), (1.2345, 0.61449, False)])
def test_a_move_reasons_difference_subtracts_as_written(stay: float, there: float,
                                                       asked: bool) -> None:
    """'$0.0187 expected here, $0.0215 there ... ($0.0027 dearer)' does not subtract: the
    difference is the two amounts as they read."""
    decision = Decision(AT, "dynamic-aware", HERE, THERE, None, 0.9, stay, there,
                        move=MovePrice(0.0, 0.0, 0.0, 0.0))
    line = move_reason(decision, 0.05, asked=asked)
    found = amounts(line)
    places = found[0][1]
    here_shown, there_shown, diff_shown = found[0][0], found[1][0], found[-1][0]
    assert round(abs(here_shown - there_shown), places) == diff_shown, line


def test_a_budget_line_adds_up() -> None:
    line = budget_verdict("b", 0.0123, 0.0079, 0.02)  # $0.0202: over, by a fifth of a cent
    # At cents (or tenths of one) it would read $0.01 + $0.01 against $0.02: not over.
    # The budget at the line's precision: one line, one precision ('$0.0200').
    assert line == "$0.0123 spent + $0.0079 for the next watch interval would pass the " \
                   "budget of $0.0200"
    line = budget_verdict("b", 0.61, 0.40, 1.0)
    assert line == "$0.61 spent + $0.40 for the next watch interval would pass the " \
                   "budget of $1.00"


def test_the_reports_totals_read_in_hours_and_add_up() -> None:
    line = totals_line({"usd": 0.0300, "compute_usd": 0.0264, "egress_usd": 0.0036,
                        "billed_hours": 0.03, "saved_vs_on_demand_usd": 0.012,
                        "saved_vs_launch_choice_usd": None})
    assert line == ("Spend $0.0300 (compute $0.0264, egress $0.0036) over 0.03 "
                    "billed hours; saved $0.0120 against on-demand; against the "
                    "launch-time choice kept: not known")


def test_a_table_row_adds_up() -> None:
    frame = pd.DataFrame({"compute_usd": [0.03, 2.0], "egress_usd": [0.0012, 0.0],
                          "usd": [0.0312, 2.0], "billed_hours": [0.03, 2.5]})
    places = table_places(frame)
    assert [format_cell(c, frame.loc[0, c], places) for c in frame.columns] == [
        "$0.0300", "$0.0012", "$0.0312", "0.03"]
    assert format_cell("usd", 2.0, places) == "$2.0000"


def test_the_same_amount_reads_the_same_alone_and_in_a_table() -> None:
    # Zero: '$0.00' alone and in a table of cents, at the precision of the amounts it is
    # read with ('$0.0000' beside '$0.0018'); a few seconds' worth: '<$0.0001' alone as
    # beside other figures.
    assert usd(0.0) == usd_all(12.5, 0.0)[1] == "$0.00"
    assert usd_all(0.0018, 0.0)[1] == "$0.0000"  # was $0.00 beside $0.0018
    assert usd(0.00001) == usd_all(0.0018, 0.00001)[1] == "<$0.0001"
    assert usd(2e-7) == usd_all(0.03, 2e-7)[1] == "<$0.0001"  # 1 ms at $0.72/h: not $0
    assert usd(0.0, 4) == "$0.0000" and hours_all(0.0018, 0.0) == ["0.0018", "0.00"]


def test_hours_times_a_price_read_as_the_amount() -> None:
    # 0.01 h x $0.1809/h is $0.0018: the hours carry the digits that make $0.0026.
    assert hours_times(0.0142, 0.1809) == ("0.0142", "$0.1809", "$0.0026")
    assert hours_times(2.0, 0.5) == ("2.00", "$0.5000", "$1.00")
    span, price, amount = hours_times(12.345678, 0.918, places=4)
    assert round(float(span) * float(price[1:]), 4) == float(amount[1:]), (span, amount)


def test_parts_add_up_to_their_total_as_written() -> None:
    # $0.00596 + $0.00556 = $0.01152: each rounded alone, $0.0060 + $0.0056 = $0.0116 beside
    # $0.0115; the part that lost the most takes the missing unit.
    assert usd(0.01152, 4) == "$0.0115"
    assert parts_as_written(0.01152, [0.00596, 0.00556], 4) == [0.006, 0.0055]
    assert parts_as_written(1.0, [1 / 3, 1 / 3, 1 / 3], 2) == [0.34, 0.33, 0.33]
    assert parts_as_written(0.02, [0.02, 0.0], 4) == [0.02, 0.0]
    assert parts_as_written(3.0, [1.0, 2.0], 2) == [1.0, 2.0]  # as each reads alone


def test_a_budget_reads_as_the_user_set_it() -> None:
    """A budget or a cap is written as typed alone; in a table's row, at the row's
    precision, as every amount of a row is."""
    assert [given(v) for v in (2, 2.5, 0.005, 2.125, 1234.5, 0)] == [
        "$2.00", "$2.50", "$0.005", "$2.125", "$1,234.50", "$0.00"]
    assert given(None) == "-" and given(float("nan")) == "-"
    # The report's table of jobs near their budget: the budget at its row's precision.
    assert format_cell("budget_usd", 2.0, {"usd": 4}) == "$2.0000"
    assert format_cell("budget_usd", 2.0) == "$2.00"
    assert format_cell("spent_usd", 1.6, {"usd": 4}) == "$1.6000"


def test_the_cost_of_staying_reads_alike_with_and_without_a_move_asked() -> None:
    stays = Decision(AT, "dynamic-aware", HERE, HERE, None, 0.9, 0.0425, 0.0425)
    move = MovePrice(egress_usd=0.0, restart_usd=0.0005, lost_work_usd=0.0001,
                     overlap_usd=0.0)
    asked = Decision(AT, "dynamic-aware", HERE, THERE, None, 0.9, 0.0425,
                     0.0071 + float(move.total), move=move)
    assert "stay: $0.0425 to finish here" in move_reason(stays, 0.05)
    assert "$0.0425 to finish here" in move_reason(asked, 0.05, asked=True)


def test_a_cost_under_a_dime_keeps_its_digits() -> None:
    from costsched.amounts import decimals_kept

    assert decimals_kept([0.0129, 5.0]) == 4
    assert decimals_kept([0.5, 12.0]) == 2
    assert decimals_kept([0.0, 1.0]) == 2


def test_ratios_read_by_one_rule() -> None:
    # The report's speed table read '0.896x' beside '1.05x'.
    assert [ratio(v) for v in (1.0, 10.0, 4444.44, 0.0042, None)] == [
        "1.00x", "10.00x", "4,444.44x", "0.0042x", "-"]
    rows = [{"usd_ratio": 0.896}, {"usd_ratio": 1.05}, {"usd_ratio": 0.004}]
    places = table_places(rows)
    assert [format_cell("usd_ratio", r["usd_ratio"], places) for r in rows] == [
        "0.8960x", "1.0500x", "0.0040x"]


def test_one_age_rule() -> None:
    minute, hour, day = 60, 3600, 86_400
    assert [age(v) for v in (0, 45, 59.7, 12 * minute, 59.6 * minute, 5 * hour,
                             47.4 * hour, 47.6 * hour, 12 * day, 59.4 * day, 59.6 * day,
                             122.8 * day, 2470 * day)] == [
        "0 s", "45 s", "1 min", "12 min", "1 h", "5 h", "47 h", "2 days", "12 days",
        "59 days", "2 mo", "4 mo", "81 mo"]
    assert age(None) == "-" and age(float("nan")) == "-" and age(-5) == "0 s"


def test_every_view_of_an_age_says_it_by_the_one_rule() -> None:
    from costsched.bundled_prices import age_text
    from costsched.daemon.supervision import ago
    from costsched.dashboard.render import age as dashboard_age
    from costsched.dashboard.render import days_old

    # The dashboard's Prices page read '0.1 h' and '122.8 days' in one table and '81 mo'
    # in another; `gpus` and `prices show` had their own words.
    now = pd.Timestamp(AT)
    assert dashboard_age(now - pd.Timedelta(minutes=6), AT) == "6 min"
    assert dashboard_age(now - pd.Timedelta(days=122.8), AT) == "4 mo"
    assert dashboard_age(now - pd.Timedelta(days=12), AT) == "12 days"
    assert days_old(122.8) == age_text(122.8) == "4 mo" and days_old(2470.0) == "81 mo"
    assert age_text(0.1 / 24) == "6 min" and days_old(None) == "-"
    assert ago(AT, AT - pd.Timedelta(hours=2.5)) == "3 h ago"
    assert ago(AT, AT - pd.Timedelta(seconds=90)) == "2 min ago"

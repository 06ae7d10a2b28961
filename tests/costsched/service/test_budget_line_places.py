"""One precision for a line whose halves are joined (a budget's stop and the hint that
gives the job enough): the fewest decimals that keep every amount of the line honest, so
that the same amount never reads at two precisions in it."""

from __future__ import annotations

import math

from costsched.service.jobs.stop_line import line_places


def test_a_cleanly_round_line_keeps_two_decimals() -> None:
    # $3.00 spent + $0.02 passes $3.01; $3.00 + $0.40 + $0.25 + $0.02 = $3.67
    assert line_places(3.0, 0.02, 0.0, 3.01, rest_usd=0.4, start_usd=0.25,
                       ahead_usd=0.02) == 2


def test_an_amount_under_a_cent_sets_the_line_s_decimals() -> None:
    """The trial's line: $0.0025 of its rest sets four decimals for the spend as well."""
    assert line_places(0.047778, 0.057222, 0.0, 0.08, rest_usd=0.0025, start_usd=0.00003,
                       ahead_usd=0.057222) == 4


def test_the_cap_reads_passed() -> None:
    """$0.0123 + $0.0079 is $0.0202, over $0.02: at two decimals it would read $0.02."""
    assert line_places(0.0123, 0.0079, 0.0, 0.02) == 4
    assert line_places(0.61, 0.4, 0.0, 1.0) == 2
    assert line_places(0.61, 0.3, 0.0, 1.0) == 2  # no stop: nothing to pass


def test_parts_never_read_more_than_the_budget_given_for_them() -> None:
    """Four parts of about $0.015 read $0.02 each at two decimals, $0.08 beside a budget
    of $0.07 that holds them: they take three decimals ($0.015 + ... + $0.017 = $0.062)."""
    assert line_places(0.015, 0.0, 0.0, math.nan, rest_usd=0.015, start_usd=0.015,
                       ahead_usd=0.016667) == 3
    assert line_places(0.015, 0.0, 0.0, math.nan, start_usd=0.015,
                       ahead_usd=0.016667) == 2  # its rest not priced: no budget said
    assert line_places(0.01, 0.0, 0.0, math.nan, least=4) == 4


def test_a_recorded_stop_says_the_decimals_of_its_spend() -> None:
    from costsched.service.jobs.stop_line import spent_places

    assert spent_places("stopped at its own budget: $0.0478 spent + $0.0572 for the next "
                        "watch interval would pass the budget of $0.08") == 4
    assert spent_places("$1,203.50 spent + $0.40 ...") == 2
    assert spent_places("stopped at its own budget") == 2


def test_a_sum_at_the_cap_but_for_a_float_s_rounding_neither_stops_nor_reads_8_decimals(
        ) -> None:
    """$0.0199 spent + $0.0049 ahead is the cap of $0.0248 exactly, though the floats add
    to a hair above it: reaching the cap is no pass (as $0.50 + $0.50 against $1.00), so
    no stop is said, and the line's precision is the amounts' own, never the 8 decimals
    at which nothing could read passed ('$0.01990000 spent ...')."""
    from costsched.service.jobs.decider import budget_verdict

    spent, ahead, cap = 0.0199, 0.0049, 0.0248
    assert math.fsum([spent, ahead]) > cap  # the float's hair
    assert budget_verdict("b", spent, ahead, cap) is None
    assert line_places(spent, ahead, 0.0, cap) == 4
    assert line_places(spent, ahead, 0.0, cap, rest_usd=0.001, ahead_usd=ahead) == 4
    # A pass a reader can see is still said, at the decimals that show it.
    assert budget_verdict("b", spent, 0.0050, cap) == (
        "$0.0199 spent + $0.0050 for the next watch interval would pass the budget of "
        "$0.0248")

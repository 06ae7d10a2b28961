"""A launch's budget line reads its verdict in the figures it writes: a cost and the
charge ahead that pass the budget add up, as written, to more than it; and the budget it
asks for is rounded up at two significant digits at least, the same rule on every row."""

from __future__ import annotations

from decimal import Decimal

from costsched.own_budget import OWN, LaunchFit, enough_usd


def _fit(pessimistic: float, ahead: float, budget: float) -> LaunchFit:
    return LaunchFit("b", OWN, pessimistic, pessimistic, budget,
                     fix="raise constraints.budget in budget.yaml", ahead_usd=ahead)


def test_a_cost_and_charge_over_the_budget_add_up_over_it_as_written() -> None:
    fit = _fit(0.003004, 0.003004, 0.006)
    assert not fit.fits
    places = fit.places()
    written = [Decimal(f"{v:.{places}f}") for v in (fit.pessimistic_usd, fit.ahead_usd)]
    assert sum(written) > Decimal("0.006"), (places, written)
    assert places == 6  # 0.003004 + 0.003004 = 0.006008: 5 decimals still read 0.00600


def test_the_budget_asked_for_keeps_two_significant_digits() -> None:
    assert enough_usd(0.0, 0.0109, 0.0, 0.0) == (0.011, 3)  # not 0.02, nearly twice
    assert enough_usd(0.0, 0.00601, 0.0, 0.0) == (0.0061, 4)
    assert enough_usd(0.0, 0.0669, 0.0, 0.0) == (0.067, 3)
    assert enough_usd(0.0, 1.234, 0.0, 0.0) == (1.24, 2)  # the cent over a dollar
    assert enough_usd(0.0, 0.05, 0.0, 0.0) == (0.05, 2)  # an amount already round

"""A placement's 'billed H h x $P/h = $C' adds up as written: the price at the decimals
the charge used ($0.07962, not $0.0796), the hours at one number of decimals for a
figure that grows (a running placement's, call after call), and no product at all where
none reads as the amount."""

from __future__ import annotations

from costsched.amounts import as_written, hours_times, price_places, steady_hours, times


def _adds_up(span: str, rate: str, money: str) -> bool:
    places = len(money.partition(".")[2])
    return f"${as_written(float(span) * float(rate[1:]), places):.{places}f}" == money


def test_a_price_of_five_decimals_makes_the_product_its_charge() -> None:
    # 99 s at $0.07962/h is $0.002190 (six decimals: the store's scale): an older line
    # read 'billed 0.03 h x $0.0796/h = $0.002190' (0.03 x 0.0796 = 0.002388).
    span, rate, money = hours_times(99 / 3600, 0.07962, 99 / 3600 * 0.07962, 6)
    assert rate == "$0.07962" and money == "$0.002190"
    assert _adds_up(span, rate, money), (span, rate, money)
    assert price_places(0.0796) == 4 and price_places(0.07962) == 5
    assert price_places(2.86) == 4 and price_places(0.0796200000000001) == 5


def test_a_growing_figure_keeps_its_decimals_from_call_to_call() -> None:
    # A running placement read every few seconds: an older line wrote 0.001944, 0.0036,
    # 0.00528, 0.010556 (4, 5 and 6 decimals) as its hours grew.
    price, places = 0.07962, 6
    least = steady_hours(price, places, 5)
    assert least == 5
    for seconds in range(1, 3 * 3600, 7):
        hours = seconds / 3600
        found = times(hours, price, hours * price, places, least)
        assert found is not None, seconds
        span, rate, money = found
        assert len(span.partition(".")[2]) == 5, (seconds, span)
        assert _adds_up(span, rate, money), (seconds, span, rate, money)
        assert abs(float(span) - hours) <= 1.5e-5  # within a unit and a half of it


def test_a_tie_on_the_amounts_last_decimal_still_adds_up() -> None:
    # 210 s at $0.07962/h is $0.0046445 exactly: rounded half up $0.004645, while the
    # hours rounded to any decimals (0.0583333...) make 0.0046444997...
    found = times(210 / 3600, 0.07962, 210 / 3600 * 0.07962, 6, 5)
    assert found is not None and _adds_up(*found), found


def test_no_product_where_none_reads_as_the_amount() -> None:
    # An average price of many digits (a price that changed while it ran) over 100 h:
    # no hours and price as written make $24.567891 to the last decimal.
    assert times(100.0, 0.24567891234, 24.567891234, 6, 5) is None


def test_a_price_charged_on_average_off_by_a_float_s_error_reads_at_its_own_decimals() -> None:
    # A placement's dollars over its hours: $1.006/h as 1.005999999992937, which read
    # 'billed 0.09611 h x $1.006000/h = $0.09669' beside a plan's '$1.0060/h'.
    price = 1.005999999992937
    assert price_places(price) == 4 and price_places(0.24567891234) == 6
    assert times(0.0961111111111111, price, 0.09668777777709894, 5, 5) == (
        "0.09611", "$1.0060", "$0.09669")



def test_a_second_charged_on_a_months_old_price_reads_at_the_price_s_decimals() -> None:
    # One second on a price observed 14 months before: its charge, an integral over the
    # months since, is off by more than a billionth of it; an older line read
    # 'billed 0.00027778 h so far x $30.131180/h' beside '$30.13118/h' of the same price.
    from datetime import datetime, timezone

    from costsched.costs import _Steps

    observed = int(datetime(2025, 10, 1, tzinfo=timezone.utc).timestamp())
    start = int(datetime(2026, 12, 1, 3, 10, tzinfo=timezone.utc).timestamp())
    steps = _Steps([(observed, 30.13118)])
    prices = [steps.usd(start + k, start + k + span) / (span / 3600)
              for k in range(0, 600, 7) for span in (1, 2, 3)]
    assert {price_places(p) for p in prices} == {5}
    found = times(1 / 3600, prices[0], prices[0] / 3600, 5, 8)
    assert found is not None and found[1] == "$30.13118", found


def test_a_price_reads_the_same_in_a_product_and_on_average() -> None:
    # '$30.13118/h' in one line, '($30.1312/h on average)' in the next for the same price.
    from costsched.amounts import stored_price as rate

    assert rate(30.13118) == "$30.13118" and rate(0.07962) == "$0.07962"
    assert rate(0.918) == "$0.9180" and rate(1.005999999992937) == "$1.0060"
    assert rate(0.24567891234) == "$0.2457"  # an average of many digits, as quoted

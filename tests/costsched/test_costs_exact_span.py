"""A charge over a few seconds of a long price history is that span's figure, without the
error of two large accrued sums taken one from the other: 4 s at $0.9000/h is $0.001 in
JSON, never 0.000999999998344."""

from __future__ import annotations

from costsched.amounts import exact
from costsched.costs import _Steps


def test_a_short_span_late_in_a_long_history_is_exact() -> None:
    t0 = 1_760_000_000
    observed = [(t0 + i * 300, 0.9 + (i % 7) * 0.013) for i in range(3000)]  # ~10 days
    observed.append((t0 + 3000 * 300, 0.9))
    steps = _Steps(observed)
    start = t0 + 3000 * 300 + 1000
    assert exact(steps.usd(start, start + 4)) == 0.001


def test_a_span_across_prices_adds_each_price_over_its_part() -> None:
    steps = _Steps([(100, 0.9), (200, 1.8), (300, 0.36)])
    assert exact(steps.usd(50, 250)) == exact((150 * 0.9 + 50 * 1.8) / 3600)
    assert exact(steps.usd(250, 400)) == exact((50 * 1.8 + 100 * 0.36) / 3600)

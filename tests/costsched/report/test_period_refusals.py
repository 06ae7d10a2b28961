"""A report's period that cannot hold any spend is refused in one line that names what is
wrong with it: a `since` after the `until` given names that `until`; a period that begins
after now says so (it never names the present as though it were the `until` given)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from costsched.model import InvalidInput
from costsched.report.data import build
from costsched.store import PriceStore

NOW = datetime(2026, 12, 2, 13, 53, tzinfo=timezone.utc)


def test_a_period_in_the_future_says_it_begins_after_now(store: PriceStore) -> None:
    with pytest.raises(InvalidInput) as refused:
        build(store, since="2026-12-03", until="2026-12-04", now=NOW)
    assert str(refused.value) == ("since 2026-12-03T00:00Z: the period begins after now "
                                  "(2026-12-02T13:53Z): nothing can have been spent in it "
                                  "yet")


def test_a_since_after_the_until_given_names_that_until(store: PriceStore) -> None:
    with pytest.raises(InvalidInput) as refused:
        build(store, since="2026-11-20", until="2026-11-10", now=NOW)
    assert str(refused.value) == ("since 2026-11-20T00:00Z: expected a time before "
                                  "2026-11-10T00:00Z (until, the end of the period)")


def test_a_period_ending_in_the_future_is_a_report_up_to_now(store: PriceStore) -> None:
    report = build(store, since="2026-11-01", until="2026-12-31", now=NOW)
    assert report.totals["usd"] == 0

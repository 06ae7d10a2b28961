"""How long the budget watch charges ahead: its interval, or as long as its passes are
apart when they come late, as the watch measures it and as a daemon's row says it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from costsched.service.jobs.watch_span import charged_seconds, watch_span
from costsched.store import PriceStore
from costsched.store.leases import holder_name

T0 = datetime(2026, 12, 1, 8, tzinfo=timezone.utc)


def test_a_late_pass_is_charged_for_as_long_as_it_came_after_the_last() -> None:
    assert charged_seconds(30, None) == 30  # no two passes yet
    assert charged_seconds(30, 31) == 30  # whole seconds stored: one late is on time
    assert charged_seconds(30, 60.2) == 61  # rounded up to the second
    assert charged_seconds(30, 10) == 30  # an early pass charges the interval


def test_the_span_a_start_charges_is_the_watching_daemons(any_store: PriceStore) -> None:
    assert watch_span(any_store, 30, T0) == 30  # none watches
    holder = holder_name()
    any_store.daemons.register(holder, kind="auto", tasks=("watch",), watch_seconds=30,
                               log="", at=T0)
    any_store.daemons.passed(holder, "ok", "", T0 + timedelta(seconds=30))
    assert watch_span(any_store, 30, T0 + timedelta(seconds=30)) == 30  # one pass
    any_store.daemons.passed(holder, "ok", "", T0 + timedelta(seconds=61))
    assert watch_span(any_store, 30, T0 + timedelta(seconds=61)) == 30  # 31 s: on time
    any_store.daemons.passed(holder, "ok", "", T0 + timedelta(seconds=136))
    assert watch_span(any_store, 30, T0 + timedelta(seconds=136)) == 75
    any_store.daemons.unregister(holder)
    assert watch_span(any_store, 30, T0 + timedelta(seconds=136)) == 30

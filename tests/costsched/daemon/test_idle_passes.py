"""A supervisor records every pass, idle ones too, with the seconds since its last: a job
launched after a quiet spell is charged one watch interval ahead by its budget's cap, not
the quiet spell (an idle supervisor's passes came on time)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from costsched.config import Config
from costsched.daemon import watcher
from costsched.daemon.supervisor import Supervisor
from costsched.service.jobs.watch_span import watch_span
from costsched.store import PriceStore
from costsched.store.leases import holder_name

WATCH = Config.model_validate({"daemon": {"autostart": True, "watch_seconds": 30}})
T0 = datetime(2026, 12, 1, 8, tzinfo=timezone.utc)


def test_an_idle_supervisors_passes_keep_the_interval_charged(
        store: PriceStore, monkeypatch: pytest.MonkeyPatch) -> None:
    supervising = Supervisor(store, WATCH, holder=holder_name(), launchers=lambda _: None)
    store.daemons.register(supervising.holder, kind="auto", tasks=(), watch_seconds=30,
                           log="", at=T0)
    for seconds in (0, 30, 60, 90):  # no job: each pass looks at nothing, on time
        monkeypatch.setattr(watcher, "_now", lambda s=seconds: T0 + timedelta(seconds=s))
        supervising.watch()
    assert store.daemons.get(supervising.holder).pass_every == 30
    assert watch_span(store, 30, T0 + timedelta(seconds=150)) == 30  # a job launched now

    # A pass 70 s after the last (a slow one): the next check charges 70 s ahead.
    monkeypatch.setattr(watcher, "_now", lambda: T0 + timedelta(seconds=160))
    supervising.watch()
    assert watch_span(store, 30, T0 + timedelta(seconds=160)) == 70

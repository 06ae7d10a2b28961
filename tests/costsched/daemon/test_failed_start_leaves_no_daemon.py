"""A daemon whose start fails (its store refuses its row, its moves cannot be read) is not
left as this process's daemon: a later one starts in the same process (a CLI's retry, the
next test of a suite's worker), never refused as 'a daemon runs in this process already'."""

from __future__ import annotations

import pytest

from costsched.config import Config
from costsched.daemon.scheduler import Daemon
from costsched.model import InvalidInput
from costsched.store import PriceStore

WATCHING = Config.model_validate({"daemon": {"watch_seconds": 30}})


def test_a_daemon_whose_start_failed_leaves_the_place_to_the_next(
        store: PriceStore, monkeypatch: pytest.MonkeyPatch) -> None:
    failing = Daemon(store, WATCHING, tasks=())

    def refused(*_args: object, **_kwargs: object) -> None:
        raise OSError("the store is away")

    with monkeypatch.context() as patched:
        patched.setattr(store.daemons, "register", refused)
        with pytest.raises(OSError, match="the store is away"):
            failing.start()
    after = Daemon(store, WATCHING, tasks=())
    after.start()
    try:
        with pytest.raises(InvalidInput, match="a daemon runs in this process already"):
            Daemon(store, WATCHING, tasks=()).start()  # one per process all the same
    finally:
        after.stop()

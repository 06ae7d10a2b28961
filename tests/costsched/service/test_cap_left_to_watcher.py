"""A look at the jobs (`status`, `migrate`, the dashboard: `reconcile` without the
watcher's settings) leaves the budget caps to the daemon that watches the store when one
runs: a cap is judged once, by the watcher's interval and restart model, never by those
of the shell that looked. With no daemon watching, the look judges them as before."""

from __future__ import annotations

import os
import socket
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from costsched.config import BudgetsConfig
from costsched.service.jobs import watch
from costsched.store import PriceStore
from launchers.local import LocalLauncher

AT = datetime(2026, 6, 1, tzinfo=timezone.utc)


@pytest.fixture
def spied(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The watch intervals each cap check was made with."""
    checked: list[float] = []

    def enforce(store, launcher, config, at, interval_seconds, overheads=None):  # noqa: ANN001, ANN202, ARG001
        checked.append(interval_seconds)
        return []

    monkeypatch.setattr(watch, "enforce", enforce)
    return checked


def _daemon(store: PriceStore, watch_seconds: float) -> str:
    """A daemon of this process registered as watching the store every `watch_seconds`
    (0: running, not watching)."""
    holder = f"{socket.gethostname()}:{os.getpid()}:watching"
    store.daemons.register(holder, kind="auto", tasks=(), watch_seconds=watch_seconds,
                           log="", at=AT)
    return holder


def test_a_look_leaves_the_caps_to_the_watching_daemon(
        tmp_path: Path, store: PriceStore, spied: list[float],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_DAEMON_WATCH_SECONDS", "30")  # the looking shell's
    launcher = LocalLauncher(tmp_path / "instances")
    watch.reconcile(store, launcher, at=AT)  # no daemon: the look judges them
    assert spied == [30.0]
    holder = _daemon(store, 5)
    watch.reconcile(store, launcher, at=AT)  # a daemon watches: left to it
    assert spied == [30.0]
    # the watcher's own pass judges them, with its settings
    watch.reconcile(store, launcher, at=AT, budgets=BudgetsConfig(), watch_seconds=5)
    assert spied == [30.0, 5.0]
    store.daemons.unregister(holder)
    watch.reconcile(store, launcher, at=AT)
    assert spied == [30.0, 5.0, 30.0]


def test_a_daemon_that_does_not_watch_leaves_them_to_the_look(
        tmp_path: Path, store: PriceStore, spied: list[float],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_DAEMON_WATCH_SECONDS", "30")
    _daemon(store, 0)
    watch.reconcile(store, LocalLauncher(tmp_path / "instances"), at=AT)
    assert spied == [30.0]


def test_a_watcher_long_silent_leaves_them_to_the_look(
        tmp_path: Path, store: PriceStore, spied: list[float],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_DAEMON_WATCH_SECONDS", "30")
    _daemon(store, 5)  # started at AT, no pass since: hung
    launcher = LocalLauncher(tmp_path / "instances")
    watch.reconcile(store, launcher, at=AT + timedelta(seconds=70))
    assert spied == []
    watch.reconcile(store, launcher, at=AT + timedelta(seconds=80))
    assert spied == [30.0]

"""The daemons' rows, on SQLite and PostgreSQL: registered, beating, each pass recorded,
removed when the daemon stops; a daemon whose process is gone is not running."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from datetime import datetime, timedelta, timezone

import pytest

from costsched.model import InvalidInput
from costsched.store import PriceStore
from costsched.store.daemons import PRUNE_SECONDS, STALE_SECONDS
from costsched.store.leases import holder_name

T0 = datetime(2026, 11, 28, 8, tzinfo=timezone.utc)


def test_a_daemon_registers_beats_records_its_passes_and_leaves(any_store: PriceStore) -> None:
    rows = any_store.daemons
    holder = holder_name()
    rows.register(holder, kind="installed", tasks=("collect", "replan"), watch_seconds=30,
                  log="/var/log/c.log", at=T0)
    [row] = rows.running(T0)
    assert (row.pid, row.host, row.kind, row.tasks, row.log) == \
        (os.getpid(), socket.gethostname(), "installed", ("collect", "replan"),
         "/var/log/c.log")
    assert row.started_at == row.seen_at == T0 and row.pass_at is None and row.here
    assert rows.beat(holder, T0 + timedelta(seconds=10))
    rows.passed(holder, "failed", "aws: throttled (2 job(s) watched)", T0 + timedelta(minutes=1))
    row = rows.get(holder)
    assert (row.pass_at, row.pass_status, row.pass_detail) == \
        (T0 + timedelta(minutes=1), "failed", "aws: throttled (2 job(s) watched)")
    rows.unregister(holder)
    assert rows.rows() == [] and not rows.beat(holder, T0)
    with pytest.raises(InvalidInput, match="expected one of auto, installed, service"):
        rows.register(holder, kind="cron", tasks=(), watch_seconds=0, log="", at=T0)


def test_another_hosts_daemon_runs_while_it_beats(any_store: PriceStore) -> None:
    rows = any_store.daemons
    rows.register("gpu-box:77:a", kind="service", tasks=(), watch_seconds=30, log="", at=T0)
    assert [r.pid for r in rows.running(T0 + timedelta(seconds=STALE_SECONDS))] == [77]
    assert rows.running(T0 + timedelta(seconds=STALE_SECONDS + 1)) == []
    assert rows.prune(T0 + timedelta(seconds=STALE_SECONDS + 1)) == 0  # it may be back
    assert rows.prune(T0 + timedelta(seconds=PRUNE_SECONDS + 1)) == 1


def test_a_daemon_of_this_host_whose_process_is_gone_is_not_running(
        any_store: PriceStore) -> None:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    gone = f"{socket.gethostname()}:{done.pid}:x"
    any_store.daemons.register(gone, kind="auto", tasks=(), watch_seconds=30, log="", at=T0)
    assert any_store.daemons.running(T0) == []
    assert any_store.daemons.prune(T0) == 1 and any_store.daemons.rows() == []


def test_a_daemon_row_keeps_the_seconds_between_its_last_two_passes(
        any_store: PriceStore) -> None:
    rows = any_store.daemons
    holder = holder_name()
    rows.register(holder, kind="auto", tasks=(), watch_seconds=30, log="", at=T0)
    rows.passed(holder, "ok", "", T0 + timedelta(seconds=30))
    assert rows.get(holder).pass_every is None  # one pass: no span yet
    rows.passed(holder, "ok", "", T0 + timedelta(seconds=91))
    assert rows.get(holder).pass_every == 61.0
    rows.passed(holder, "ok", "", T0 + timedelta(seconds=121))
    assert rows.get(holder).pass_every == 30.0

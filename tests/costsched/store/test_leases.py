"""Leases and task runs, on SQLite and PostgreSQL: one holder at a time, even when many
writers race for an expired lease at the same instant."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
from datetime import datetime, timedelta, timezone

import pytest

from costsched.model import InvalidInput
from costsched.store import PriceStore

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def test_a_lease_has_one_holder_until_it_expires(any_store: PriceStore) -> None:
    leases = any_store.leases
    assert leases.acquire("collect", "a", 60, T0)
    assert not leases.acquire("collect", "b", 60, T0 + timedelta(seconds=59))
    assert leases.acquire("collect", "a", 60, T0 + timedelta(seconds=30))  # its own: extended
    assert not leases.acquire("collect", "b", 60, T0 + timedelta(seconds=89))
    assert leases.acquire("collect", "b", 60, T0 + timedelta(seconds=90))  # expired: taken
    [held] = leases.held()
    assert (held.name, held.holder) == ("collect", "b")
    assert held.expires_at == T0 + timedelta(seconds=150)
    assert not leases.renew("collect", "a", 60, T0 + timedelta(seconds=100))
    assert leases.renew("collect", "b", 60, T0 + timedelta(seconds=100))
    assert not leases.release("collect", "a")
    assert leases.held()[0].holder == "b"
    assert leases.release("collect", "b")
    assert leases.held() == []
    assert leases.acquire("collect", "a", 60, T0)  # a released lease is free again


def test_release_all_gives_up_only_the_holders_leases(any_store: PriceStore) -> None:
    leases = any_store.leases
    for name in ("collect", "job:1", "job:2"):
        assert leases.acquire(name, "a", 60, T0)
    assert leases.acquire("replan", "b", 60, T0)
    assert leases.release_all("a") == 3
    assert [(lease.name, lease.holder) for lease in leases.held()] == [("replan", "b")]
    assert leases.held(at=T0 + timedelta(seconds=61)) == []


@pytest.mark.parametrize("stored", ["absent", "expired"])
def test_racing_writers_never_both_get_a_lease(empty_url: str, stored: str) -> None:
    PriceStore(empty_url).dispose()
    if stored == "expired":
        first = PriceStore(empty_url, migrate=False)
        assert first.leases.acquire("replan", "old", 1, T0 - timedelta(hours=1))
        first.dispose()
    writers = [PriceStore(empty_url, migrate=False) for _ in range(8)]
    barrier = threading.Barrier(len(writers))
    won: list[str] = []

    def race(i: int) -> None:
        barrier.wait()
        if writers[i].leases.acquire("replan", f"w{i}", 60, T0):
            won.append(f"w{i}")

    threads = [threading.Thread(target=race, args=(i,)) for i in range(len(writers))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    [held] = writers[0].leases.held()
    assert won == [held.holder]
    for w in writers:
        w.dispose()


def test_task_runs_record_starts_ends_and_skips(any_store: PriceStore) -> None:
    runs = any_store.task_runs
    assert runs.last("collect") is None
    first = runs.start("collect", "a", T0)
    assert (first.status, first.finished_at) == ("running", None)
    done = runs.finish(first, "ok", T0 + timedelta(seconds=5), "12 prices")
    assert (done.status, done.detail, done.finished_at) == (
        "ok", "12 prices", T0 + timedelta(seconds=5))
    skip = runs.skipped("collect", "b", T0 + timedelta(seconds=6), "lease held by a")
    failed = runs.finish(runs.start("replan", "a", T0), "failed", T0, "boom")
    assert runs.last("collect") == skip
    assert runs.last("collect", statuses=("ok", "failed", "running")) == done
    assert [r.id for r in runs.recent()] == [failed.id, skip.id, first.id]
    assert runs.recent(statuses=("failed",)) == [failed]
    with pytest.raises(InvalidInput, match="expected ok or failed"):
        runs.finish(first, "skipped", T0)  # type: ignore[arg-type]


def test_a_lease_of_a_process_gone_from_this_host_is_free_at_once(tmp_path) -> None:  # noqa: ANN001
    leases = PriceStore(str(tmp_path / "s.sqlite")).leases
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    host = socket.gethostname()
    assert leases.acquire("steps:1", f"{host}:{gone.stdout.strip()}:dead", 600, T0)
    assert leases.acquire("steps:1", "b", 600, T0 + timedelta(seconds=1))  # not expired
    # A live process of this host, and any process of another host, keep theirs.
    assert leases.acquire("steps:2", f"{host}:{os.getppid()}:live", 600, T0)
    assert not leases.acquire("steps:2", "b", 600, T0 + timedelta(seconds=1))
    assert leases.acquire("steps:3", f"elsewhere:{gone.stdout.strip()}:x", 600, T0)
    assert not leases.acquire("steps:3", "b", 600, T0 + timedelta(seconds=1))
    with leases.holding("steps:4", 60) as first, leases.holding("steps:4", 60) as second:
        assert first and not second  # two holders of this process: one at a time
        assert [x.name for x in leases.held()].count("steps:4") == 1
    assert "steps:4" not in [x.name for x in leases.held()]


def test_many_leases_are_taken_as_each_would_be_alone(any_store: PriceStore) -> None:
    """`acquire_many` takes each lease as `acquire` would (new, expired, its own; not one
    another holder keeps, nor one of a live process); `renew_many` and `release_many`
    touch only the holder's own."""
    leases = any_store.leases
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()
    host = socket.gethostname()
    assert leases.acquire("steps:1", "other", 60, T0)  # expired at T0 + 60
    assert leases.acquire("steps:2", "other", 600, T0)  # still held at T0 + 90
    assert leases.acquire("steps:3", "a", 60, T0)  # its own
    assert leases.acquire("steps:4", f"{host}:{gone}:dead", 600, T0)  # its holder died
    assert leases.acquire("steps:5", f"{host}:{os.getppid()}:live", 600, T0)
    names = [f"steps:{n}" for n in range(1, 8)]
    taken = leases.acquire_many(names, "a", 60, T0 + timedelta(seconds=90))
    assert taken == {"steps:1", "steps:3", "steps:4", "steps:6", "steps:7"}
    held = {x.name: x.holder for x in leases.held()}
    assert held == {**{n: "a" for n in taken}, "steps:2": "other",
                    "steps:5": f"{host}:{os.getppid()}:live"}
    assert not leases.acquire_many(names, "b", 60, T0 + timedelta(seconds=100))
    assert leases.renew_many(names, "a", 60, T0 + timedelta(seconds=140)) == taken
    assert not leases.acquire("steps:6", "b", 60, T0 + timedelta(seconds=160))  # renewed
    assert leases.release_many(names, "a") == len(taken)
    assert {x.name for x in leases.held()} == {"steps:2", "steps:5"}


def test_a_job_stored_with_its_lease_is_its_creators_from_the_first_moment(
        any_store: PriceStore) -> None:
    now = datetime.now(timezone.utc)
    job = any_store.jobs.create("j", {}, 10, at=T0, lease=("steps:{id}", "creator", 60))
    assert not any_store.leases.acquire(f"steps:{job}", "daemon", 60, now)
    assert any_store.leases.acquire(f"steps:{job}", "creator", 60, now)  # its own
    [held] = any_store.leases.held()
    assert held.name == f"steps:{job}" and held.holder == "creator"
    assert any_store.leases.acquire(f"steps:{job}", "daemon", 60, now + timedelta(seconds=61))
    other = any_store.jobs.create("k", {}, 10, at=T0)  # no lease asked: none taken
    assert [lease.name for lease in any_store.leases.held()] == [f"steps:{job}"]
    assert any_store.leases.acquire(f"steps:{other}", "daemon", 60, now)

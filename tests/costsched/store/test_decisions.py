"""The decider's latest decision per job, on SQLite and PostgreSQL: one row per job, the
newest replacing the one before, dollars that are not numbers kept as none, a job
without one left out; and a store of the revision before gets the empty table."""

from __future__ import annotations

import math
import threading
import time
from datetime import datetime, timedelta, timezone

from sqlalchemy import insert, inspect, text

from costsched.store import PriceStore, database
from costsched.store.decisions import StoredDecision
from costsched.store.schema import job_decisions

T0 = datetime(2026, 11, 29, 9, 30, tzinfo=timezone.utc)
KEY = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")


def _job(store: PriceStore, name: str) -> tuple[int, int]:
    """A running job placed once: (its id, its placement's id)."""
    job = store.jobs.create(name, {"spec": {"name": name}}, 100, at=T0)
    store.jobs.transition(job, "running", at=T0)
    placement = store.jobs.place(job, KEY, gpu_model="V100", gpu_count=1, at=T0,
                                 usd_per_hour=0.9, reason="launch", instance=f"i-{name}")
    return job, placement


def test_each_jobs_newest_decision_replaces_the_one_before(any_store: PriceStore) -> None:
    a, pa = _job(any_store, "a")
    b, pb = _job(any_store, "b")
    c, _ = _job(any_store, "c")
    stays = StoredDecision(a, pa, T0, "the supervisor", False, "", 1.25, 1.25, None,
                           "stay: $1.25 expected here")
    moves = StoredDecision(b, pb, T0, "the supervisor", True, "aws us-east-1b p3.2xlarge spot",
                           2.0, 1.5, None, "move: saves $0.50")
    any_store.decisions.record([stays, moves])
    assert any_store.decisions.latest([a, b, c]) == {a: stays, b: moves}
    later = T0 + timedelta(hours=1)
    again = StoredDecision(a, pa, later, "costsched migrate", False, "", math.nan, math.inf,
                           None, "stay: no figure")
    any_store.decisions.record([again])
    found = any_store.decisions.latest([a, b])
    assert found[a] == again._replace(stay_usd=None, move_usd=None)  # not numbers: none
    assert found[a].decided_at == later and found[b] == moves
    assert any_store.decisions.latest([]) == {}


def test_two_passes_deciding_one_job_at_once_each_keep_theirs(any_store: PriceStore) -> None:
    """A pass's decision of a job not yet committed when another pass records its own (two
    `costsched migrate`s, a daemon's and a user's): the second waits, then replaces it;
    neither fails on the other's row."""
    a, pa = _job(any_store, "a")
    first = StoredDecision(a, pa, T0, "the supervisor", False, "", 1.0, 1.0, None, "stay")
    second = first._replace(decided_at=T0 + timedelta(minutes=1), decided_by="costsched "
                            "migrate", reason="stay: decided again")
    failed: list[BaseException] = []

    def record() -> None:
        try:
            any_store.decisions.record([second])
        except BaseException as exc:  # noqa: BLE001 - said below
            failed.append(exc)

    with any_store.engine.begin() as conn:  # the first pass, its row not yet committed
        conn.execute(insert(job_decisions).values(
            job_id=a, placement_id=pa, decided_ts=int(T0.timestamp()), decided_by="the "
            "supervisor", moves=False, choice="", stay_usd=1.0, move_usd=1.0, move_id=None,
            reason="stay"))
        other = threading.Thread(target=record)
        other.start()
        if any_store.engine.dialect.name == "postgresql":  # until it waits on that row
            deadline = time.monotonic() + 60
            while not conn.execute(text("SELECT count(*) FROM pg_locks WHERE NOT granted")
                                   ).scalar() and time.monotonic() < deadline:
                time.sleep(0.05)
        else:  # SQLite: it waits for the write lock
            time.sleep(0.3)
    other.join(60)
    assert not other.is_alive() and failed == []
    assert any_store.decisions.latest([a]) == {a: second}


def test_a_store_of_the_revision_before_gets_the_empty_table(empty_url: str) -> None:
    store = PriceStore(empty_url, migrate=False)
    database.upgrade(store.engine, "0017")
    assert "job_decisions" not in inspect(store.engine).get_table_names()
    store.upgrade()
    assert "job_decisions" in inspect(store.engine).get_table_names()
    assert store.decisions.latest([1]) == {}
    store.dispose()

"""The decider's latest decision per job, on SQLite and PostgreSQL: one row per job, the
newest replacing the one before, dollars that are not numbers kept as none, a job
without one left out; and a store of the revision before gets the empty table."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

from sqlalchemy import inspect

from costsched.store import PriceStore, database
from costsched.store.decisions import StoredDecision

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


def test_a_store_of_the_revision_before_gets_the_empty_table(empty_url: str) -> None:
    store = PriceStore(empty_url, migrate=False)
    database.upgrade(store.engine, "0017")
    assert "job_decisions" not in inspect(store.engine).get_table_names()
    store.upgrade()
    assert "job_decisions" in inspect(store.engine).get_table_names()
    assert store.decisions.latest([1]) == {}
    store.dispose()

"""Revision 0011 on SQLite and PostgreSQL: a job the user stopped is `stopped` (it was
`cancelled`), and starting it again is a `start` move (it was a `recovery`). Stores
written before it read the same jobs in the new words; real recoveries stay recoveries."""

from __future__ import annotations

from sqlalchemy import insert, select

from costsched.store import PriceStore, database
from costsched.store.schema import job_events, jobs, moves, placements
from tests.costsched.store.revision_steps import upgraded_then_downgraded
from tests.costsched.store.test_live_names import job_row, move_row

STARTED = "started again from its newest verified checkpoint"


def placement_row(job_id: int, start_ts: int, reason: str, instance: str) -> dict:
    return {"job_id": job_id, "cloud": "aws", "region": "us-east-1", "zone": "us-east-1a",
            "instance_type": "p3.2xlarge", "market": "spot", "os": "linux",
            "gpu_model": "V100", "gpu_count": 1, "start_ts": start_ts, "end_ts": None,
            "usd_per_hour": 0.9, "reason": reason, "instance": instance}


def old_store(url: str) -> None:
    """A store at revision 0009: job 1 stopped by its user; job 2 stopped and started
    again (a 'recovery' move then); job 3 recovered after a preemption."""
    old = PriceStore(url, migrate=False)
    database.upgrade(old.engine, "0009")
    with old.engine.begin() as conn:
        conn.execute(insert(jobs).values(job_row("stopped-one", "cancelled")))
        conn.execute(insert(jobs).values(job_row("started-again", "running")))
        conn.execute(insert(jobs).values(job_row("preempted", "running")))
        conn.execute(insert(moves).values({**move_row(2, "done"), "kind": "recovery",
                                           "detail": STARTED, "created_ts": 100,
                                           "updated_ts": 160}))
        conn.execute(insert(moves).values({**move_row(3, "done"), "kind": "recovery",
                                           "detail": "preempted", "created_ts": 100,
                                           "updated_ts": 160}))
        conn.execute(insert(placements).values([
            {**placement_row(2, 10, "launch", "i-1"), "end_ts": 50},
            placement_row(2, 120, "recovery", "i-2"),
            {**placement_row(3, 10, "launch", "i-3"), "end_ts": 90},
            placement_row(3, 120, "recovery", "i-4")]))
        conn.execute(insert(job_events).values([
            {"job_id": 1, "ts": 50, "kind": "state", "from_state": "running",
             "to_state": "cancelled", "detail": "stopped by the user"},
            {"job_id": 2, "ts": 100, "kind": "state", "from_state": "cancelled",
             "to_state": "pending", "detail": "started again by the user"},
            {"job_id": 2, "ts": 40, "kind": "move", "from_state": "target_running",
             "to_state": "cancelled", "detail": "a move's own state"}]))
    old.dispose()


def test_stores_from_before_read_in_the_new_words(empty_url: str) -> None:
    old_store(empty_url)
    store = PriceStore(empty_url)
    assert store.revision() == database.head()
    assert [store.jobs.get(i).state for i in (1, 2, 3)] == ["stopped", "running", "running"]
    assert [m.kind for m in store.moves.of_job(2)] == ["start"]
    assert [m.kind for m in store.moves.of_job(3)] == ["recovery"]
    assert store.jobs.placements(2)["reason"].tolist() == ["launch", "start"]
    assert store.jobs.placements(3)["reason"].tolist() == ["launch", "recovery"]
    with store.engine.connect() as conn:
        logged = conn.execute(select(job_events.c.kind, job_events.c.from_state,
                                     job_events.c.to_state).order_by(job_events.c.id)).all()
    assert [tuple(r) for r in logged] == [("state", "running", "stopped"),
                                          ("state", "stopped", "pending"),
                                          ("move", "target_running", "cancelled")]
    # A stopped job holds its name no more than a cancelled one did: a new job may take it.
    store.jobs.create("stopped-one", {}, 10.0, at=store.jobs.get(1).created_at)
    store.dispose()


def test_the_revision_goes_back_as_it_came(empty_url: str) -> None:
    old_store(empty_url)
    back = upgraded_then_downgraded(empty_url, "0010")
    with back.engine.connect() as conn:
        assert conn.execute(select(jobs.c.state).order_by(jobs.c.id)).scalars().all() == [
            "cancelled", "running", "running"]
        assert conn.execute(select(moves.c.kind).order_by(moves.c.id)).scalars().all() == [
            "recovery", "recovery"]
    back.dispose()

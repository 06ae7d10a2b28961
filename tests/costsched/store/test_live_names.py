"""Revision 0005 on SQLite and PostgreSQL: one live job per name and one unfinished move
per job, kept by the store. A store that already breaks the rule upgrades without losing
a row: the newer live namesakes are renamed, the newer unfinished moves cancelled, and
both are logged in the jobs' events."""

from __future__ import annotations

import pytest
from sqlalchemy import insert, select

from costsched.store import PriceStore, StaleState, database
from costsched.store.schema import job_events, jobs, moves


def job_row(name: str, state: str) -> dict:
    return {"name": name, "spec": "{}", "state": state, "policy": "", "steps_total": 10.0,
            "steps_done": 0.0, "checkpoint_location": "", "created_ts": 0, "updated_ts": 0}


def move_row(job_id: int, state: str) -> dict:
    return {"job_id": job_id, "kind": "recovery", "state": state, "source_instance": "",
            "candidates": "[]", "tried": 0, "target_instance": "", "detail": "",
            "created_ts": 0, "updated_ts": 0}


def test_a_store_that_breaks_the_rule_upgrades_keeping_every_row(empty_url: str) -> None:
    old = PriceStore(empty_url, migrate=False)
    database.upgrade(old.engine, "0004")
    with old.engine.begin() as conn:
        for state in ("running", "pending", "failed"):
            conn.execute(insert(jobs).values(job_row("train", state)))
        for state in ("target_launched", "planned", "done"):
            conn.execute(insert(moves).values(move_row(1, state)))
    old.dispose()

    store = PriceStore(empty_url)
    assert store.revision() == database.head()
    assert [(j.id, j.name, j.state) for j in [store.jobs.get(i) for i in (1, 2, 3)]] == [
        (1, "train", "running"), (2, "train#2", "pending"), (3, "train", "failed")]
    assert [m.state for m in store.moves.of_job(1)] == ["target_launched", "cancelled", "done"]
    with store.engine.connect() as conn:
        logged = conn.execute(select(job_events.c.job_id, job_events.c.detail)).all()
    assert (2, "renamed 'train#2': another live job is called 'train'") in logged
    assert any(j == 1 and "move 2 cancelled" in d for j, d in logged)
    # From now on the store keeps the rule itself.
    with pytest.raises(StaleState, match="move 1 of it is under way"):
        store.moves.create(1, "recovery", [], at=store.jobs.get(1).created_at)
    store.dispose()

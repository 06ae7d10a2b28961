"""Revision 0016 on SQLite and PostgreSQL: a store gets its own id when it is upgraded, and
a move under way then keeps the attempt tag its launch was sent with (a create whose answer
was lost is found by it); moves created afterwards carry the store's id."""

from __future__ import annotations

import re

from sqlalchemy import insert, inspect, select

from costsched.store import PriceStore, database
from costsched.store.schema import jobs, moves, store_identity
from tests.costsched.store.revision_steps import upgraded_then_downgraded
from tests.costsched.store.test_live_names import job_row, move_row


def old_store(url: str) -> None:
    """A store at revision 0015 with job 1's launch under way (its create sent)."""
    old = PriceStore(url, migrate=False)
    database.upgrade(old.engine, "0015")
    with old.engine.begin() as conn:
        conn.execute(insert(jobs).values(job_row("train", "launching")))
        conn.execute(insert(jobs).values(job_row("next", "pending")))
        conn.execute(insert(moves).values({**move_row(1, "checkpoint_verified"),
                                           "kind": "launch", "tried": 1}))
    old.dispose()


def test_a_move_under_way_keeps_its_attempt_and_the_store_gets_an_id(empty_url: str) -> None:
    old_store(empty_url)
    store = PriceStore(empty_url)
    assert store.revision() == database.head()
    [move] = store.moves.of_job(1)
    assert (move.scope, move.attempt) == ("", "j1-m1-1")  # as its create was sent
    scope = store.moves.scope
    assert re.fullmatch(r"[0-9a-f]{10}", scope)
    # Moves made from now on carry it (and the move under way still does not).
    store.moves.advance(move, "failed", at=move.updated_at, tried=2)
    assert store.moves.get(1).attempt == "j1-m1-2"
    new = store.moves.create(2, "launch", [], at=move.updated_at)
    assert (new.scope, new.attempt) == (scope, f"{scope}-j2-m2-0")
    store.dispose()
    again = PriceStore(empty_url)  # made once: the same id every time the store is opened
    assert again.moves.scope == scope
    assert again.moves.get(2).attempt == f"{scope}-j2-m2-0"
    again.dispose()


def test_two_stores_upgraded_apart_get_ids_of_their_own(empty_url: str, tmp_path) -> None:
    old_store(empty_url)
    other = str(tmp_path / "other.sqlite")
    old_store(other)
    first, second = PriceStore(empty_url), PriceStore(other)
    assert first.moves.scope != second.moves.scope
    first.dispose()
    second.dispose()


def test_the_revision_goes_back_as_it_came(empty_url: str) -> None:
    old_store(empty_url)
    back = upgraded_then_downgraded(empty_url, "0015")
    with back.engine.connect() as conn:
        assert not inspect(conn).has_table(store_identity.name)
        assert "scope" not in {c["name"] for c in inspect(conn).get_columns("moves")}
        assert conn.execute(select(moves.c.id, moves.c.state)).all() == [
            (1, "checkpoint_verified")]
    back.dispose()

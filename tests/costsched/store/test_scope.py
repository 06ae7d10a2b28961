"""Whose launch an instance is (`costsched.store.scope`): a tag with this store's id is
this store's, one with another's never is, and one of the old form only when it names a
move of this store stored before ids; every tag fits each cloud's names and labels."""

from __future__ import annotations

from datetime import datetime, timezone

from costsched.store.moves import MoveRecord
from costsched.store.scope import Attempt, attempt_tag, ours, parse_attempt
from launchers.gcp import label_value
from launchers.local_index import ID

T = datetime(2026, 1, 1, tzinfo=timezone.utc)


def move(move_id: int, job_id: int, scope: str) -> MoveRecord:
    return MoveRecord(move_id, job_id, "launch", "failed", "", [], 0, "", None, "", T, T,
                      scope=scope)


def test_both_forms_are_read() -> None:
    assert parse_attempt("0a1b2c3d4e-j12-m345-2") == Attempt("0a1b2c3d4e", 12, 345, 2)
    assert parse_attempt("j12-m345-2") == Attempt("", 12, 345, 2)
    for other in ("", "launch-1", "j1-m2", "0A1B2C3D4E-j1-m1-0", "xyz-j1-m1-0",
                  "0a1b2c3d4e-j1-m1-0\n"):
        assert parse_attempt(other) is None, other


def test_a_tag_is_this_stores_by_its_scope_or_by_an_old_move_of_its_own() -> None:
    mine, theirs = "0a1b2c3d4e", "ffeeddccbb"
    old, new = move(3, 1, ""), move(4, 1, mine)
    assert ours(f"{mine}-j1-m4-0", 1, mine, [])
    assert ours(f"{mine}-j1-m99-0", 1, mine, [])  # the scope says it: no move need be read
    assert not ours(f"{theirs}-j1-m4-0", 1, mine, [old, new])
    assert not ours(f"{mine}-j2-m4-0", 1, mine, [new])  # another job's tag
    assert ours("j1-m3-1", 1, mine, [old, new])
    assert not ours("j1-m4-0", 1, mine, [old, new])  # move 4 is tagged with the scope
    assert not ours("j1-m5-0", 1, mine, [old, new])  # not a move of this store
    assert not ours("launch-1", 1, mine, [old, new])


def test_every_tag_fits_the_clouds_names_and_labels() -> None:
    tag = attempt_tag("0a1b2c3d4e", 10**9, 10**12, 99)
    assert len(tag) <= 63 and label_value(tag) == tag  # a Compute Engine label value
    assert ID.fullmatch(f"{10**9}-{tag}")  # the local launcher's instance folder
    assert attempt_tag("", 7, 8, 0) == "j7-m8-0"

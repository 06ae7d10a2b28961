"""The line refusing a job id the store has no job of names the ids it holds, in words."""

from __future__ import annotations

from costsched.service.glance import no_such_id


def test_the_ids_held_are_said_as_a_sentence_one_a_run_or_a_few() -> None:
    assert no_such_id(7, []) == "job 7: no such job in the store; it holds no job yet"
    assert no_such_id(7, [1]) == ("job 7: no such job in the store; it holds job 1 "
                                  "(`costsched status` shows it)")
    assert no_such_id(99, list(range(1, 19))) == (
        "job 99: no such job in the store; it holds jobs 1 to 18 (`costsched status` lists "
        "them)")
    said = no_such_id(4, [1, 3, 5])
    assert said.startswith("job 4: no such job in the store; it holds jobs 1, 3"), said
    assert said.endswith("(`costsched status` lists them)"), said

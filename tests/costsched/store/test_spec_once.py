"""In a pass a job's stored spec is parsed once, however often the job's record is read;
outside a pass each read parses its own; a changed spec text is parsed anew."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from costsched.passes import one_pass
from costsched.store import PriceStore

T0 = datetime(2026, 1, 2, tzinfo=timezone.utc)


def test_a_pass_parses_each_stored_spec_once(tmp_path: Path) -> None:
    store = PriceStore(f"sqlite:///{tmp_path / 'jobs.sqlite'}")
    first = store.jobs.create("a", {"spec": {"name": "a", "steps": 10}}, 10, at=T0)
    second = store.jobs.create("b", {"spec": {"name": "b", "steps": 10}}, 10, at=T0)
    with one_pass():
        [one] = store.jobs.records([first])
        listed = {r.id: r for r in store.jobs.records()}
        assert listed[first].spec is one.spec  # read twice, parsed once
        assert store.jobs.get(first).spec is one.spec
        assert listed[second].spec is not one.spec
        assert listed[second].spec == {"spec": {"name": "b", "steps": 10}}
    again = store.jobs.get(first)
    assert again.spec == one.spec and again.spec is not one.spec  # outside the pass

"""The store's scale for charged figures is made again only when what it is made of
changes: kept between commands while the store's placements, bookings, jobs and the
prices its finished charges read are as they were, made again once a job finishes (or a
price of the past arrives), not for a price collected since."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from costsched.report import settled
from costsched.store import PriceStore
from tests.costsched.cli.test_status_store_decimals import _job, small_and_big
from tests.costsched.test_costs import EAST_A, WEST, observe

NOW = datetime(2030, 1, 1, tzinfo=timezone.utc)


def test_the_scale_is_made_again_only_when_the_store_changed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = str(tmp_path / "store.sqlite")
    small_and_big(db)
    made: list[list[int]] = []
    charge = settled.job_costs

    def counted(store: PriceStore, job_ids: list[int], **kw: object) -> dict:
        made.append(list(job_ids))
        return charge(store, job_ids, **kw)

    monkeypatch.setattr(settled, "job_costs", counted)
    store = PriceStore(db)
    first = settled.settled_scale(store, NOW)
    assert first.usd == 6 and made == [[1, 2]]  # 'small' takes six decimals to add up
    assert settled.settled_scale(store, NOW + timedelta(days=1)) == first
    assert made == [[1, 2]]  # kept: nothing charged again

    # A third job finishes: the scale is made again, as it is with nothing kept.
    _job(store, "third", [(EAST_A, 0.0243, 7), (WEST, 0.0412, 11)])
    again = settled.settled_scale(store, NOW)
    assert made == [[1, 2], [1, 2, 3]]
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "nothing-kept"))
    assert settled.settled_scale(store, NOW) == again and len(made) == 3, made

    # A price collected now charges nothing finished; one of the past arrives: the
    # finished charges may change with it.
    observe(store, EAST_A, [(1000, 0.0245)])
    settled.settled_scale(store, NOW)
    assert len(made) == 3, made
    observe(store, EAST_A, [(0.5, 0.0244)])
    settled.settled_scale(store, NOW)
    assert len(made) == 4, made
    store.dispose()

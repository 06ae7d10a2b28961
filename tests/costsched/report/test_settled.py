"""The store's scale for charged figures is its smallest settled charge's decimals and
nothing more: the same as more jobs of larger charges finish, finer only when a smaller
charge settles; one read of an aggregate, nothing kept in the user cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.amounts import Scale
from costsched.report import settled
from costsched.store import PriceStore
from tests.costsched.cli.test_status_store_decimals import _job, small_and_big
from tests.costsched.test_costs import EAST_A, WEST


def test_the_scale_is_the_smallest_settled_charge_s_and_grows_not_with_the_store(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    db = str(tmp_path / "store.sqlite")
    small_and_big(db)
    store = PriceStore(db)
    # $0.000243 over 0.01 h: five decimals of money, two of hours ('small' adds up to
    # $0.00065 at them: no more decimals for it).
    assert settled.settled_scale(store) == Scale(5, 2)
    for n in range(20):  # larger charges finish: the scale stays
        _job(store, f"more-{n}", [(EAST_A, 0.0243, 60 + n), (WEST, 0.0412, 50 + 3 * n)])
    assert settled.settled_scale(store) == Scale(5, 2)
    _job(store, "tiny", [(EAST_A, 0.0243, 3)])  # $0.00002025 over 0.00083 h: finer
    assert settled.settled_scale(store) == Scale(6, 5)
    store.dispose()
    assert not (tmp_path / "cache").exists()  # nothing kept between commands

"""The report writes charged figures at one precision (`amounts.CHARGED`) whatever the
store holds: the same as more jobs of larger charges finish, and as a smaller charge
settles."""

from __future__ import annotations

from pathlib import Path

from costsched.report import build
from costsched.store import PriceStore
from tests.costsched.cli.test_status_store_decimals import _job, small_and_big
from tests.costsched.test_costs import EAST_A, WEST


def test_the_reports_precision_is_one_whatever_charges_settle(
        tmp_path: Path) -> None:
    db = str(tmp_path / "store.sqlite")
    small_and_big(db)
    store = PriceStore(db)
    four = {"usd": 4, "hours": 4}
    assert build(store).tables()["scale"] == four  # $0.000243 over 0.01 h settled
    for n in range(20):  # larger charges finish
        _job(store, f"more-{n}", [(EAST_A, 0.0243, 60 + n), (WEST, 0.0412, 50 + 3 * n)])
    assert build(store).tables()["scale"] == four
    _job(store, "tiny", [(EAST_A, 0.0243, 3)])  # $0.00002025 over 0.00083 h settles
    assert build(store).tables()["scale"] == four  # (it was six decimals, then)
    store.dispose()

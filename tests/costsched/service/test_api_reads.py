"""The Python API's reading functions never make a store: a misspelt store path is one
line naming it (a notebook would else show an empty answer from a new, empty store)."""

from __future__ import annotations

from pathlib import Path

import pytest

import costsched
from costsched.model import InvalidInput


@pytest.mark.parametrize("call", [
    lambda db: costsched.budgets(db=db),
    lambda db: costsched.prices_as_of("2026-01-01", db=db),
    lambda db: costsched.price_history("p3.2xlarge", db=db),
])
def test_a_store_that_is_not_there_is_named_and_not_made(tmp_path: Path, call) -> None:
    db = tmp_path / "prices.sqlte"
    with pytest.raises(InvalidInput, match=r"^db '.*prices\.sqlte': no such store \("):
        call(str(db))
    assert not db.exists()


def test_a_store_that_is_there_is_read(tmp_path: Path) -> None:
    db = tmp_path / "prices.sqlite"
    costsched.import_prices([], db=str(db))  # makes it
    assert costsched.budgets(db=str(db)).empty

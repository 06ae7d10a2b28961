"""Recorded price logs (AWS spot history JSON, Azure daily CSV) with fuzzed fields: a bad
file is one error line naming it and stores nothing; what is stored meets the rules."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsched.service import import_prices
from costsched.store import PriceStore
from tests.reliability.fuzz import FUZZ, assert_all_valid, scalars, stored

GOOD_ITEM = {"AvailabilityZone": "us-east-2a", "InstanceType": "p3.2xlarge",
             "ProductDescription": "Linux/UNIX", "SpotPrice": "0.9364",
             "Timestamp": "2020-03-23T13:59:14.000Z"}
FIELD_VALUES = {
    "AvailabilityZone": st.sampled_from(["us-east-2a", "us-west-2b", "eu-west-1c", "nowhere-1a",
                                         "us-east-2", ""]),
    "InstanceType": st.sampled_from(["p3.2xlarge", "p3.16xlarge", "g4dn.xlarge", "t3.micro",
                                     "p9.huge", "[bold]x"]),
    "ProductDescription": st.sampled_from(["Linux/UNIX", "Windows", "BeOS"]),
    "SpotPrice": st.one_of(st.sampled_from(["0.9364", "50000", "0.000001", "-1", "nan", "inf",
                                            "1e309", "$1.2", ""]),
                           st.floats(0, 100).map(lambda p: f"{p:.4f}")),
    "Timestamp": st.sampled_from([
        "2020-03-23T13:59:14.000Z", "2020-03-23T13:59:14+02:00", "2020-03-23T13:59:14",
        "03/04/2020 10:00", "4/3/2020", "March 4 2020", "tomorrow", "3000-01-01T00:00:00Z",
        "1900-01-01T00:00:00Z", "2262-04-12T00:00:00Z", "99999-01-01T00:00:00Z",
        "2020-13-40T00:00:00Z", "2020-02-18 00:00:00Z", "", "2020-02-18"]),
}
items = st.fixed_dictionaries({}, optional={
    f: st.one_of(v, scalars) for f, v in FIELD_VALUES.items()}).map(
    lambda fuzzed: {**GOOD_ITEM, **fuzzed})
AZURE_SIZES = st.sampled_from(["NC6s v3", "NC24s v3", "NC6", "ND40rs v2", "XY9 v9", "[/]"])
AZURE_DATES = st.sampled_from(["2/24/2020", "24/2/2020", "2020-02-24", "2/30/2020",
                               "2/24/1850", "2/24/9999", "", "soon"])
AZURE_PRICES = st.sampled_from(["$0.60313", "0.6", "$9000", "$0.0000001", "", "-1", "abc",
                                "$nan", "$inf"])


@pytest.fixture()
def fresh(tmp_path: Path):
    """A SQLite store holding one good file already."""
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"SpotPriceHistory": [GOOD_ITEM]}))
    store = PriceStore(str(tmp_path / "fuzz.sqlite"))
    assert not import_prices(store, [good], partial=False).errors
    yield store
    store.dispose()


def _import_one(store: PriceStore, path: Path) -> None:
    """Import `path` with a good file beside it: either it is stored whole, or it gives one
    error line naming it and the store holds only the good file's new rows."""
    good = path.parent / f"good-{uuid.uuid4().hex[:8]}.json"
    fresh_item = {**GOOD_ITEM, "Timestamp": "2020-03-24T00:00:00Z",
                  "SpotPrice": f"{0.5 + len(good.name) / 1000:.4f}"}
    good.write_text(json.dumps({"SpotPriceHistory": [fresh_item]}))
    before = stored(store)
    result = import_prices(store, [path, good], partial=False)
    assert result.files >= 1  # the good file is never blocked by the bad one
    if result.errors:
        assert len(result.errors) == 1 and "\n" not in result.errors[0]
        assert str(path) in result.errors[0]
        # Nothing more to add: it is all stored.
        only_good = import_prices(store, [good], partial=False)
        assert only_good.inserted == 0 and not only_good.errors
        added = set(stored(store)) - set(before)
        assert all(row[-1] == f"import:{good.name}" for row in added)
    assert_all_valid(store)


@settings(FUZZ, max_examples=15)  # a store write per example
@given(history=st.lists(items, min_size=1, max_size=4))
def test_fuzzed_spot_history(fresh: PriceStore, tmp_path: Path, history: list[dict]) -> None:
    path = tmp_path / f"{uuid.uuid4().hex[:8]}.json"
    path.write_text(json.dumps({"SpotPriceHistory": history}))
    _import_one(fresh, path)


@settings(FUZZ, max_examples=15)  # a store write per example
@given(sizes=st.lists(AZURE_SIZES, min_size=1, max_size=3, unique=True),
       rows=st.lists(st.tuples(AZURE_DATES, st.lists(AZURE_PRICES, min_size=3, max_size=3)),
                     min_size=1, max_size=3))
def test_fuzzed_azure_daily_csv(fresh: PriceStore, tmp_path: Path, sizes: list[str],
                                rows: list[tuple[str, list[str]]]) -> None:
    folder = tmp_path / uuid.uuid4().hex[:8]
    folder.mkdir()
    lines = [",".join(["Date", *sizes])]
    lines += [",".join([day, *prices[:len(sizes)]]) for day, prices in rows]
    path = folder / "us_east.csv"
    path.write_text("\n".join(lines) + "\n")
    _import_one(fresh, path)


@settings(FUZZ, max_examples=15)  # a store write per example
@given(data=st.binary(max_size=200), suffix=st.sampled_from([".json", ".csv", ".parquet"]))
def test_arbitrary_bytes(fresh: PriceStore, tmp_path: Path, data: bytes, suffix: str) -> None:
    path = tmp_path / f"{uuid.uuid4().hex[:8]}{suffix}"
    path.write_bytes(data)
    _import_one(fresh, path)

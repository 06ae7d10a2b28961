"""Billed line items in the store, SQLite and PostgreSQL: replacing, not adding."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest

from costsched.bills.lines import LINE_COLUMNS, finish
from costsched.store import PriceStore
from costsched.store.bills import STORED_COLUMNS, BillStore

T = datetime(2024, 6, 1, tzinfo=timezone.utc)
H = timedelta(hours=1)


def _lines(source: str, costs: list[float], *, keys: list[str] | None = None,
           start: datetime = T) -> pd.DataFrame:
    rows = [{"cloud": "aws", "account": "1", "source": source, "line_key": (keys or [""] * len(
        costs))[n], "usage_start": pd.Timestamp(start + n * H),
             "usage_end": pd.Timestamp(start + (n + 1) * H), "resource_id": "i-1",
             "category": "compute", "line_type": "Usage", "service": "AmazonEC2",
             "usage_type": "SpotUsage:p3.2xlarge", "region": "us-east-1", "usage_amount": 1.0,
             "usage_unit": "Hrs", "usd": usd, "currency": "USD", "job_tag": "1",
             "attempt_tag": ""} for n, usd in enumerate(costs)]
    return finish(pd.DataFrame(rows, columns=LINE_COLUMNS))


@pytest.fixture()
def bills(empty_url: str):  # noqa: ANN201
    store = PriceStore(empty_url)
    yield BillStore(store.engine)
    store.dispose()


def test_the_same_export_twice_is_stored_once(bills: BillStore) -> None:
    lines = _lines("s3://b/a.csv.gz", [1.0, 1.0, 2.5])  # two identical lines: both kept
    assert bills.replace("s3://b/a.csv.gz", lines, at=T) == 3
    assert bills.replace("s3://b/a.csv.gz", lines, at=T + H) == 3
    stored = bills.lines()
    assert list(stored.columns) == STORED_COLUMNS
    assert stored["usd"].tolist() == [1.0, 1.0, 2.5]
    assert stored["imported_at"].iloc[0] == pd.Timestamp(T + H)
    assert stored["usage_start"].iloc[2] == pd.Timestamp(T + 2 * H)
    # The file rewritten with a corrected line: the old lines go, the new ones come.
    bills.replace("s3://b/a.csv.gz", _lines("s3://b/a.csv.gz", [1.0, 1.5]), at=T)
    assert bills.lines()["usd"].tolist() == [1.0, 1.5]


def test_an_identity_seen_in_another_file_replaces_it(bills: BillStore) -> None:
    bills.replace("s3://b/v1.csv", _lines("s3://b/v1.csv", [1.0, 2.0], keys=["aws:x", "aws:y"]),
                  at=T)
    bills.replace("s3://b/v2.csv", _lines("s3://b/v2.csv", [1.25], keys=["aws:x"]), at=T)
    stored = bills.lines()
    assert sorted(zip(stored["line_key"], stored["usd"], stored["source"], strict=True)) == [
        ("aws:x", 1.25, "s3://b/v2.csv"), ("aws:y", 2.0, "s3://b/v1.csv")]


def test_a_window_replaces_only_the_lines_it_read(bills: BillStore) -> None:
    source = "bigquery:p.d.gcp_billing_export_resource_v1_X"
    bills.replace(source, _lines(source, [1.0, 2.0, 3.0]), at=T)  # hours 0, 1, 2
    bills.replace(source, _lines(source, [9.0], start=T + H), at=T, window=(T + H, T + 2 * H))
    assert bills.lines()["usd"].tolist() == [1.0, 9.0, 3.0]
    assert bills.lines(since=T + H, until=T + 2 * H)["usd"].tolist() == [9.0]


def test_matches_are_recorded_and_unmatched_counted(bills: BillStore) -> None:
    bills.replace("f", _lines("f", [1.0, 2.0]), at=T)
    ids = bills.lines()["id"].tolist()
    bills.set_matches(pd.DataFrame({"id": ids, "placement_id": [7, pd.NA],
                                    "job_id": [3, pd.NA], "matched_by": ["instance", ""]}))
    stored = bills.lines()
    assert stored["placement_id"].tolist()[0] == 7 and pd.isna(stored["placement_id"].iloc[1])
    assert stored["matched_by"].tolist() == ["instance", ""]
    assert bills.count() == 2 and bills.count(unmatched=True) == 1


def test_long_names_are_cut_to_their_column(bills: BillStore) -> None:
    lines = _lines("f", [1.0]).assign(usage_type="x" * 300, resource_id="arn:" + "r" * 600)
    bills.replace("f", lines, at=T)
    stored = bills.lines()
    assert len(stored["usage_type"].iloc[0]) == 256 and len(stored["resource_id"].iloc[0]) == 512

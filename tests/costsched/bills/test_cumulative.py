"""Importing exports delivered cumulatively (each run writes the period so far again)
counts each day's costs once: Azure's daily month-to-date runs, AWS Data Exports in
"create new" mode, legacy CUR report versions; and importing every day leaves only the
newest delivery's lines stored."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from costsched.bills.imports import import_export
from costsched.store import PriceStore
from costsched.store.bills import BillStore
from tests.costsched.bills.exports import BlobService, azure_csv, azure_row, cur_csv_gz, cur_row

VM = "/subscriptions/0000-sub/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/vm1"
JUNE = "daily/costsched/20240601-20240630/"
MAY = "daily/costsched/20240501-20240531/"
SAS = "sv=2022-11-02&sig=secret"
NOW = datetime(2024, 6, 10, tzinfo=timezone.utc)
H = timedelta(hours=1)


@pytest.fixture()
def store(empty_url: str):  # noqa: ANN201 - SQLite and PostgreSQL
    opened = PriceStore(empty_url)
    yield opened
    opened.dispose()


def _month_to_date(month: int, days: int, revision: float) -> bytes:
    """A run's file: days 1..`days` of the month, each $10 + day, the first day revised
    by `revision` (a later run revises it, so its line differs from the earlier run's)."""
    return azure_csv([azure_row(f"2024-{month:02d}-{d:02d}", VM, "Virtual Machines",
                                10.0 + d + (revision if d == 1 else 0.0))
                      for d in range(1, days + 1)])


def _june_run(k: int) -> dict[str, bytes]:
    """Improved layout: run k (on June k+1) in its own folder, with its manifest."""
    folder = f"{JUNE}0000000{k}-run/"
    return {folder + "part_0_0001.csv": _month_to_date(6, k, 0.1 * k),
            folder + "manifest.json": json.dumps({"blobs": [
                {"blobName": folder + "part_0_0001.csv"}]}).encode()}


def _june_times(k: int) -> dict[str, datetime]:
    at = datetime(2024, 6, k + 1, 6, 0, tzinfo=timezone.utc)
    folder = f"{JUNE}0000000{k}-run/"
    return {folder + "part_0_0001.csv": at, folder + "manifest.json": at + 5 * 60 * H / 60}


MAY_RUNS = {  # the older layout: one <export>_<guid>.csv per run, in the period folder
    MAY + "costsched_8a1d3a1e-1111-4c2b-9d1e-000000000001.csv": _month_to_date(5, 30, 0.5),
    MAY + "costsched_1b2c3d4e-2222-4c2b-9d1e-000000000002.csv": _month_to_date(5, 31, 0.7),
}
MAY_TIMES = {MAY + "costsched_8a1d3a1e-1111-4c2b-9d1e-000000000001.csv":
             datetime(2024, 5, 31, 6, tzinfo=timezone.utc),
             MAY + "costsched_1b2c3d4e-2222-4c2b-9d1e-000000000002.csv":
             datetime(2024, 6, 1, 6, tzinfo=timezone.utc)}


def _by_day(store: PriceStore) -> dict[str, float]:
    lines = BillStore(store.engine).lines()
    return {d: round(float(v), 6) for d, v in lines.groupby(
        lines["usage_start"].dt.strftime("%Y-%m-%d"))["usd"].sum().items()}


def test_azure_daily_runs_of_two_layouts_count_each_day_once(loopback, store: PriceStore
                                                             ) -> None:  # noqa: ANN001
    blobs = {**_june_run(1), **_june_run(2), **_june_run(3), **MAY_RUNS}
    times = {**_june_times(1), **_june_times(2), **_june_times(3), **MAY_TIMES}
    loopback.handler = BlobService("acct", "costs", blobs, page=3, modified=times)

    result = import_export(store, f"{loopback.url}/acct/costs/daily/costsched?{SAS}",
                           now=NOW, correct_prices=False, rate_tolerance=0.01)

    days = _by_day(store)
    # June: run 3 (June 1-3, June 1 as revised last); May: the run of June 1 (31 days).
    assert days["2024-06-01"] == pytest.approx(11.3)
    assert [days[f"2024-06-0{d}"] for d in (2, 3)] == pytest.approx([12.0, 13.0])
    assert days["2024-05-01"] == pytest.approx(11.7) and days["2024-05-31"] == 41.0
    assert len(days) == 3 + 31
    assert result.usd == pytest.approx(11.3 + 12 + 13 + 0.7 + sum(10 + d for d in range(1, 32)))
    assert [s.removeprefix(f"{loopback.url}/acct/costs/") for s, _ in result.files] == [
        MAY + "costsched_1b2c3d4e-2222-4c2b-9d1e-000000000002.csv",
        JUNE + "00000003-run/part_0_0001.csv"]
    assert len(result.skipped) == 3 and result.dropped == []  # runs 1 and 2, May's first
    assert not any("sig=" in s for s in result.skipped)


def test_importing_every_day_leaves_the_newest_run_only(loopback, store: PriceStore
                                                        ) -> None:  # noqa: ANN001
    # An older-layout file first, then runs of the new layout in the same period.
    older = JUNE + "costsched_0a1b2c3d-0000-4000-8000-00000000000a.csv"
    blobs = {older: _month_to_date(6, 1, 0.0)}
    times = {older: datetime(2024, 6, 2, 1, tzinfo=timezone.utc)}
    loopback.handler = BlobService("acct", "costs", blobs, modified=times)
    location = f"{loopback.url}/acct/costs/daily/costsched?{SAS}"
    import_export(store, location, now=NOW, correct_prices=False, rate_tolerance=0.01)
    assert _by_day(store) == {"2024-06-01": 11.0}

    for k in (1, 2):  # the export runs again the next days; each day's import
        blobs.update(_june_run(k))
        times.update(_june_times(k))
        result = import_export(store, location, now=NOW, correct_prices=False,
                               rate_tolerance=0.01)
        assert _by_day(store) == pytest.approx(
            {f"2024-06-0{d}": 10.0 + d + (0.1 * k if d == 1 else 0) for d in range(1, k + 1)})
        stored = set(BillStore(store.engine).lines()["source"])
        assert stored == {f"{loopback.url}/acct/costs/{JUNE}0000000{k}-run/part_0_0001.csv"}
        gone = older if k == 1 else f"{JUNE}00000001-run/part_0_0001.csv"
        assert [s.removeprefix(f"{loopback.url}/acct/costs/") for s in result.dropped] == [gone]
        # The older delivery's revised June 1 line; its unchanged days are the same lines
        # as the newer run's, replaced when it was stored.
        assert result.dropped_lines == 1
    # The old advice, importing one run's folder: an older run is skipped, not added.
    result = import_export(store, f"{loopback.url}/acct/costs/{JUNE}00000001-run?{SAS}",
                           now=NOW, correct_prices=False, rate_tolerance=0.01)
    assert result.files == [] and len(result.skipped) == 1
    assert _by_day(store) == pytest.approx({"2024-06-01": 11.2, "2024-06-02": 12.0})


# --- AWS ----------------------------------------------------------------------------------

CUR = "exports/costsched/"
T = datetime(2024, 6, 1, tzinfo=timezone.utc)


def _cur_rows(start: datetime, hours: int, revision: float) -> list[dict]:
    """The period so far: `hours` hourly lines of $1 (the first revised by `revision`),
    without an identity (a digest keys them: a revised line is another line)."""
    return [cur_row(start + h * H, start + (h + 1) * H, "SpotUsage:p3.2xlarge",
                    1.0 + (revision if h == 0 else 0.0), resource="i-0aaa")
            for h in range(hours)]


def _deliver(s3, period: str, delivery: str, rows: list[dict]) -> str:  # noqa: ANN001
    """A CUR 2.0 "create new" delivery: its files in the delivery's folder of the period,
    the period's manifest naming them."""
    key = f"{CUR}data/BILLING_PERIOD={period}/{delivery}/costsched-00001.csv.gz"
    s3.put_object(Bucket="cur-bucket", Key=key, Body=cur_csv_gz(rows))
    s3.put_object(Bucket="cur-bucket",
                  Key=f"{CUR}metadata/BILLING_PERIOD={period}/costsched-Manifest.json",
                  Body=json.dumps({"executionId": delivery, "dataFiles": [
                      f"s3://cur-bucket/{key}"]}).encode())
    return f"s3://cur-bucket/{key}"


def test_cur2_create_new_deliveries_count_once_per_period(s3, store: PriceStore
                                                           ) -> None:  # noqa: ANN001
    may = datetime(2024, 5, 31, tzinfo=timezone.utc)
    _deliver(s3, "2024-05", "d-may", _cur_rows(may, 24, 0.0))
    first = _deliver(s3, "2024-06", "d-1", _cur_rows(T, 2, 0.0))
    import_export(store, f"s3://cur-bucket/{CUR}", now=NOW, client=s3, correct_prices=False,
                  rate_tolerance=0.01)
    assert BillStore(store.engine).lines()["usd"].sum() == pytest.approx(24 + 2)

    newest = _deliver(s3, "2024-06", "d-2", _cur_rows(T, 3, 0.25))  # a day later
    result = import_export(store, f"s3://cur-bucket/{CUR}", now=NOW, client=s3,
                           correct_prices=False, rate_tolerance=0.01)
    lines = BillStore(store.engine).lines()
    assert lines["usd"].sum() == pytest.approx(24 + 3.25)  # both periods, June once
    assert set(lines["source"]) == {newest, f"s3://cur-bucket/{CUR}data/BILLING_PERIOD="
                                    "2024-05/d-may/costsched-00001.csv.gz"}
    assert result.skipped == [first] and result.dropped == [first]
    assert result.dropped_lines == 1  # the revised hour; the other is the same line in d-2


def test_legacy_cur_report_versions_count_once(s3, store: PriceStore) -> None:  # noqa: ANN001
    period = "cur/costsched/20240601-20240701/"
    keys = []
    for assembly, hours, revision in [("a1b2-1", 2, 0.0), ("c3d4-2", 4, 0.5)]:
        key = f"{period}{assembly}/costsched-1.csv.gz"
        s3.put_object(Bucket="cur-bucket", Key=key, Body=cur_csv_gz(_cur_rows(T, hours,
                                                                            revision)))
        manifest = json.dumps({"assemblyId": assembly, "reportKeys": [key]}).encode()
        s3.put_object(Bucket="cur-bucket", Key=f"{period}{assembly}/costsched-Manifest.json",
                      Body=manifest)
        # The period's own manifest names the current version's files.
        s3.put_object(Bucket="cur-bucket", Key=f"{period}costsched-Manifest.json",
                      Body=manifest)
        keys.append(key)
    result = import_export(store, "s3://cur-bucket/cur/", now=NOW, client=s3,
                           correct_prices=False, rate_tolerance=0.01)
    assert [s for s, _ in result.files] == [f"s3://cur-bucket/{keys[1]}"]
    assert result.skipped == [f"s3://cur-bucket/{keys[0]}"]
    assert BillStore(store.engine).lines()["usd"].sum() == pytest.approx(4.5)


def test_the_store_finds_and_drops_the_sources_under_a_folder(store: PriceStore) -> None:
    import pandas as pd

    from costsched.bills.aws import lines_of

    bills = BillStore(store.engine)
    for n, source in enumerate(["s3://b/P=1/a.csv", "s3://b/P=1/d/b.csv", "s3://b/p=1/c.csv",
                                "s3://b/P_1/e.csv", "s3://b/P=10/f.csv"]):
        rows = pd.DataFrame([cur_row(T + n * H, T + (n + 1) * H, "BoxUsage:x", 1.0 + n)])
        bills.replace(source, lines_of(rows.astype(str), source), at=NOW)
    # Exactly the prefix: not another case, not '_' or '%' read as LIKE's wildcards.
    assert bills.sources("s3://b/P=1/") == {"s3://b/P=1/a.csv": 1, "s3://b/P=1/d/b.csv": 1}
    assert bills.sources("s3://b/P%") == {}
    assert bills.drop(["s3://b/P=1/a.csv", "s3://b/none.csv"]) == 1
    assert sorted(bills.lines()["source"]) == ["s3://b/P=1/d/b.csv", "s3://b/P=10/f.csv",
                                               "s3://b/P_1/e.csv", "s3://b/p=1/c.csv"]
    assert bills.drop([]) == 0


def test_a_name_longer_than_the_stored_source_is_not_dropped_after_storing(
        s3, store: PriceStore) -> None:  # noqa: ANN001
    folder = f"{CUR}data/BILLING_PERIOD=2024-06/{'d' * 950}/"
    key = _deliver(s3, "2024-06", "d" * 950, _cur_rows(T, 2, 0.0))
    # A key within S3's 1024 bytes, its source (s3://bucket/key) past the column's 1024.
    assert key.startswith(f"s3://cur-bucket/{folder}") and 1024 < len(key) < 1024 + 16
    result = import_export(store, f"s3://cur-bucket/{CUR}", now=NOW, client=s3,
                           correct_prices=False, rate_tolerance=0.01)
    assert result.dropped == [] and result.lines == 2
    assert BillStore(store.engine).lines()["usd"].sum() == pytest.approx(2.0)


def test_from_the_data_folder_the_manifest_is_read_by_its_name(s3, store: PriceStore
                                                               ) -> None:  # noqa: ANN001
    _deliver(s3, "2024-06", "d-1", _cur_rows(T, 2, 0.0))
    current = _deliver(s3, "2024-06", "d-2", _cur_rows(T, 3, 0.25))
    # A delivery being written: its files are there, the manifest does not name them yet.
    s3.put_object(Bucket="cur-bucket", Body=cur_csv_gz(_cur_rows(T, 1, 9.0)),
                  Key=f"{CUR}data/BILLING_PERIOD=2024-06/d-3/costsched-00001.csv.gz")
    result = import_export(store, f"s3://cur-bucket/{CUR}data/", now=NOW, client=s3,
                           correct_prices=False, rate_tolerance=0.01)
    assert [s for s, _ in result.files] == [current] and len(result.skipped) == 2
    assert BillStore(store.engine).lines()["usd"].sum() == pytest.approx(3.25)

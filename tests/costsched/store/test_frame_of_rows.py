"""The store's frames, built in one go from the rows (`frame_of_rows`), are the frames a
frame of the rows gives once its columns are cast, its times read and its columns put in
order: the same values, types, names and index, with rows or without."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from costsched.store.database import frame_of_rows, from_epoch_seconds

KEYS = ["cloud", "zone", "gpu_count", "up", "usd", "start_ts", "end_ts", "note"]
ROWS = [("aws", "us-east-1a", 1, 1, "0.9", 1_760_000_000, 1_760_003_600, None),
        ("gcp", "", 8, 0, None, 1_760_000_000, None, "x"),
        ("azure", "eastus-1", 2, True, 3, 0, 4_102_444_800, "y")]
COLUMNS = ["zone", "cloud", "start", "end", "gpu_count", "up", "usd", "note"]


def by_frame(rows: list[tuple]) -> pd.DataFrame:
    """The same frame, made as the store made its frames before: cast column by column."""
    frame = pd.DataFrame(rows, columns=KEYS)
    frame["start"] = from_epoch_seconds(frame.pop("start_ts"))
    frame["end"] = pd.to_datetime(frame.pop("end_ts").astype(float), unit="s", utc=True)
    frame["gpu_count"] = frame["gpu_count"].astype("int64")
    frame["up"] = frame["up"].astype(bool)
    frame["usd"] = frame["usd"].astype(float)
    return frame[COLUMNS]


@pytest.mark.parametrize("rows", [ROWS, ROWS[:1], ROWS[2:], []],
                         ids=["rows", "one", "no-missing-time", "none"])
def test_a_frame_of_rows_is_the_frame_cast_column_by_column(rows: list[tuple]) -> None:
    built = frame_of_rows(KEYS, rows, COLUMNS, times={"start_ts": "start", "end_ts": "end"},
                          types={"gpu_count": "int64", "up": "bool", "usd": "float64"})
    expected = by_frame(rows)
    pd.testing.assert_frame_equal(built, expected, check_exact=True)
    assert list(built.dtypes) == list(expected.dtypes)
    assert str(built["start"].dtype) == "datetime64[us, UTC]"


def test_a_missing_time_is_nat_and_the_others_are_the_seconds_given() -> None:
    built = frame_of_rows(KEYS, ROWS, ["end"], times={"end_ts": "end"})
    assert built["end"].isna().tolist() == [False, True, False]
    assert built["end"].iloc[2] == pd.Timestamp("2100-01-01", tz="UTC")


def test_epoch_seconds_keep_the_index_and_name_of_the_series_given() -> None:
    seconds = pd.Series([1_760_000_000, 5], index=[7, 3], name="at")
    times = from_epoch_seconds(seconds)
    pd.testing.assert_series_equal(
        times, pd.to_datetime(seconds, unit="s", utc=True), check_exact=True)
    assert list(times.index) == [7, 3] and times.name == "at"


@pytest.mark.parametrize("seconds", [np.array([1_760_000_000, 0], dtype="int32"),
                                     np.array([], dtype="int64"), [4_102_444_800],
                                     np.array([3.0, 1_760_000_000.0])])
def test_epoch_seconds_read_as_pandas_reads_them(seconds: object) -> None:
    pd.testing.assert_series_equal(
        from_epoch_seconds(seconds),
        pd.to_datetime(pd.Series(seconds, dtype="int64"), unit="s", utc=True),
        check_exact=True)

"""Values no source may store: absurd prices, guessed timestamps, wrong GPUs, times outside
the supported range; each rejects its file only, and the offering stays right."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from costsched.model import InvalidInput
from costsched.service import import_prices
from costsched.service.values import as_time, at_least, positive
from costsched.store import OBSERVATION_COLUMNS, PriceStore
from costsched.validation import ZONED
from price_collectors import base

ITEM = {"AvailabilityZone": "us-east-2a", "InstanceType": "p3.2xlarge",
        "ProductDescription": "Linux/UNIX", "SpotPrice": "0.9364",
        "Timestamp": "2020-03-23T13:59:14.000Z"}
ROW = dict(cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
           market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
           usd_per_hour=1.0, effective_at="2020-03-01T00:00:00Z", source="x")


def _spot(path: Path, **fields: str) -> Path:
    path.write_text(json.dumps({"SpotPriceHistory": [{**ITEM, **fields}]}))
    return path


def _export(path: Path, **fields: object) -> Path:
    pd.DataFrame([{**ROW, **fields}], columns=OBSERVATION_COLUMNS).to_csv(path, index=False)
    return path


@pytest.mark.parametrize(("fields", "says"), [
    ({"SpotPrice": "50000"}, "above ceiling"),
    ({"SpotPrice": "0.000001"}, "below floor"),
    ({"Timestamp": "03/04/2020 10:00"}, ZONED),
    ({"Timestamp": "2020-03-04T10:00:00"}, ZONED),
    ({"Timestamp": "March 4 2020"}, ZONED),
    ({"Timestamp": "3000-01-01T00:00:00Z"}, "expected a time from 2000-01-01 to 2100-01-01"),
    ({"Timestamp": "1900-01-01T00:00:00Z"}, "expected a time from"),
])
def test_bad_spot_history_rejects_its_file_only(any_store: PriceStore, tmp_path: Path,
                                                fields: dict, says: str) -> None:
    bad = _spot(tmp_path / "bad.json", **fields)
    good = _spot(tmp_path / "good.json", Timestamp="2020-03-24T00:00:00Z")
    # Read whole (partial=False): the source names the file alone, not a partial update.
    result = import_prices(any_store, [bad, good], partial=False)
    assert result.files == 1 and result.inserted == 1
    assert len(result.errors) == 1 and result.errors[0].startswith(f"{bad}: row 1: ")
    assert says in result.errors[0]
    assert set(any_store.observations()["source"]) == {"import:good.json"}


@pytest.mark.parametrize(("fields", "says"), [
    ({"gpu_count": -4}, "gpu_count '-4': expected a whole number from 1 to 16"),
    ({"gpu_count": 0}, "gpu_count '0'"),
    ({"gpu_model": "Z9000"}, "unknown GPU model 'Z9000'"),
    ({"instance_type": "p3.2xlarge", "gpu_count": 8}, "has 1xV100 in the catalog, not 8xV100"),
    ({"instance_type": "p3.2xlarge", "usd_per_hour": 9e6}, "above ceiling"),
    ({"effective_at": "2020-03-01T00:00:00"}, ZONED),
    ({"effective_at": "03/01/2020"}, ZONED),
    ({"effective_at": "9999-03-01T00:00:00Z"}, "expected a time from"),
    ({"vcpus": -1}, "vcpus '-1'"),
])
def test_bad_export_rows_are_not_stored(any_store: PriceStore, tmp_path: Path, fields: dict,
                                        says: str) -> None:
    result = import_prices(any_store, [_export(tmp_path / "bad.csv", **fields)])
    assert result.files == 0 and len(result.errors) == 1
    error = result.errors[0]
    assert error.startswith(f"{tmp_path / 'bad.csv'}: row 2: ") and says in error
    assert any_store.count() == 0 and any_store.offerings().empty


def test_a_rejected_export_does_not_corrupt_the_offering(any_store: PriceStore,
                                                          tmp_path: Path) -> None:
    bad = _export(tmp_path / "bad.csv", gpu_count=-4)
    assert import_prices(any_store, [bad]).errors
    good = _export(tmp_path / "good.csv")
    assert not import_prices(any_store, [good]).errors
    offering = any_store.offerings()
    assert offering[["gpu_model", "gpu_count"]].values.tolist() == [["V100", 1]]


def test_times_outside_pandas_range_are_per_file(any_store: PriceStore, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = {c: [str(ROW[c])] for c in OBSERVATION_COLUMNS if c != "effective_at"}
    columns["gpu_count"], columns["vcpus"] = [1], [8]
    columns["memory_gb"], columns["usd_per_hour"] = [61.0], [1.0]
    far = pa.array([pd.Timestamp("2020-01-01").to_pydatetime().replace(year=9000)],
                   pa.timestamp("us", tz="UTC"))
    pq.write_table(pa.table({**columns, "effective_at": far}), tmp_path / "far.parquet")
    json_far = _spot(tmp_path / "far.json", Timestamp="99999-01-01T00:00:00Z")
    good = _spot(tmp_path / "good.json")
    result = import_prices(any_store, [tmp_path / "far.parquet", json_far, good])
    assert result.files == 1 and result.inserted == 1 and len(result.errors) == 2


def test_azure_keeps_its_own_date_layout(any_store: PriceStore, tmp_path: Path) -> None:
    (tmp_path / "az").mkdir()
    (tmp_path / "az" / "us_east.csv").write_text("Date,NC6s v3\n2/24/2020,$0.60313\n")
    result = import_prices(any_store, [tmp_path / "az"])
    assert not result.errors and result.inserted == 1
    (tmp_path / "az" / "us_east.csv").write_text("Date,NC6s v3\n2/25/2020,$9000\n")
    result = import_prices(any_store, [tmp_path / "az"])
    assert result.errors and "row 2: NC6s v3" in result.errors[0] and any_store.count() == 1


def test_collectors_share_the_rules() -> None:
    frame = pd.DataFrame([{**ROW, "gpu_count": -1}, {**ROW, "gpu_model": "Z9000"}, ROW],
                         columns=OBSERVATION_COLUMNS)
    frame["effective_at"] = pd.to_datetime(frame["effective_at"], utc=True)
    good, rejected = base.validate(frame)
    assert len(good) == 1 and len(rejected) == 2
    assert "gpu_count" in rejected[0].reason and "Z9000" in rejected[1].reason


@pytest.mark.parametrize("value", [float("inf"), float("nan"), -1.0])
def test_service_numbers_must_be_finite(value: float) -> None:
    with pytest.raises(InvalidInput, match="days"):
        positive("days", value)
    with pytest.raises(InvalidInput, match="margin"):
        at_least("margin", value, 0)


@pytest.mark.parametrize("text", ["1/2/2020", "tomorrow", "2020-03-01T00:00Z junk",
                                  "9999-01-01", "1999-12-31"])
def test_time_arguments_are_iso_8601_in_range(text: str) -> None:
    with pytest.raises(InvalidInput, match="^at "):
        as_time(text)
    assert as_time("2020-03-01").isoformat() == "2020-03-01T00:00:00+00:00"


@pytest.mark.parametrize("text", ["2026-13-01", "2026-02-30", "2026-03-01T25:00Z"])
def test_a_time_off_the_calendar_is_refused_with_the_form_expected(text: str) -> None:
    """Shaped as a time but no time of the calendar: one line naming the form, as any other
    time refused."""
    with pytest.raises(InvalidInput) as info:
        as_time(text)
    assert str(info.value) == (f"at {text!r}: not a date and time of the calendar: "
                               "expected an ISO 8601 time such as 2020-03-01T00:00Z")

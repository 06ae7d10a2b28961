"""Export-format files (CSV and Parquet) with fuzzed columns: a bad file is one error line
and stores nothing; an offering is never created with wrong GPUs; exports re-import."""

from __future__ import annotations

import uuid
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from costsched.service import export_prices, import_prices
from costsched.store import OBSERVATION_COLUMNS, PriceStore
from tests.reliability.fuzz import FUZZ, assert_all_valid, scalars, stored

GOOD_ROW = dict(cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
                market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8,
                memory_gb=61.0, usd_per_hour=0.9, effective_at="2020-03-01T00:00:00Z",
                source="fuzz")
FIELD_VALUES = {
    "cloud": st.sampled_from(["aws", "gcp", "azure", "ibm", ""]),
    "region": st.sampled_from(["us-east-1", "us central", "", "[bold]x", "a\x1bb"]),
    "instance_type": st.sampled_from(["p3.2xlarge", "p3.16xlarge", "p9.fake", ""]),
    "market": st.sampled_from(["spot", "on_demand", "reserved"]),
    "gpu_model": st.sampled_from(["V100", "v100", "nvidia-tesla-v100", "Z9000", "", "A100"]),
    "gpu_count": st.sampled_from([1, 8, 0, -4, 1.5, 17, "two"]),
    "vcpus": st.sampled_from([8, 0, -1, 2.5, "x"]),
    "memory_gb": st.sampled_from([61.0, 0, -3, "nan", "inf"]),
    "usd_per_hour": st.sampled_from([0.9, 3.0, 9e6, 1e-6, 0, -1, "nan", "inf", "x"]),
    "effective_at": st.sampled_from([
        "2020-03-01T00:00:00Z", "2020-03-01T00:00:00+05:30", "2020-03-01T00:00:00",
        "03/01/2020", "1/2/2020 10:00", "yesterday", "9999-03-01T00:00:00Z",
        "1677-01-01T00:00:00Z", "2020-02-30T00:00:00Z"]),
}
rows = st.fixed_dictionaries({}, optional={
    f: st.one_of(v, scalars) for f, v in FIELD_VALUES.items()}).map(
    lambda fuzzed: {**GOOD_ROW, **fuzzed})


@pytest.fixture()
def fresh(tmp_path: Path):
    store = PriceStore(str(tmp_path / "fuzz.sqlite"))
    yield store
    store.dispose()


def _write(frame: pd.DataFrame, path: Path) -> None:
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    else:
        frame.astype(str).to_parquet(path, index=False)  # mixed fuzz types: as text


@FUZZ
@given(fuzzed=st.lists(rows, min_size=1, max_size=3),
       suffix=st.sampled_from([".csv", ".parquet"]),
       drop=st.one_of(st.none(), st.sampled_from(OBSERVATION_COLUMNS)))
def test_fuzzed_export_file(fresh: PriceStore, tmp_path: Path, fuzzed: list[dict],
                            suffix: str, drop: str | None) -> None:
    frame = pd.DataFrame(fuzzed, columns=OBSERVATION_COLUMNS)
    if drop:
        frame = frame.drop(columns=[drop])
    path = tmp_path / f"{uuid.uuid4().hex[:8]}{suffix}"
    _write(frame, path)
    before, offerings = stored(fresh), fresh.offerings()
    result = import_prices(fresh, [path])
    if result.errors:
        assert len(result.errors) == 1 and "\n" not in result.errors[0]
        assert str(path) in result.errors[0]
        assert stored(fresh) == before
        pd.testing.assert_frame_equal(fresh.offerings(), offerings)
    assert_all_valid(fresh)


@settings(FUZZ, max_examples=8)  # two stores per example
@given(good=st.lists(st.floats(0.1, 2.5).map(lambda p: round(p, 4)), min_size=1, max_size=4),
       suffix=st.sampled_from([".csv", ".parquet"]))
def test_export_reimports_the_same_observations(tmp_path: Path, good: list[float],
                                                suffix: str) -> None:
    frame = pd.DataFrame([{**GOOD_ROW, "usd_per_hour": p,
                           "effective_at": f"2020-03-{i + 1:02d}T00:00:00Z"}
                          for i, p in enumerate(good)], columns=OBSERVATION_COLUMNS)
    source = tmp_path / f"{uuid.uuid4().hex[:8]}.csv"
    frame.to_csv(source, index=False)
    first = PriceStore(str(tmp_path / f"{uuid.uuid4().hex[:8]}.sqlite"))
    second = PriceStore(str(tmp_path / f"{uuid.uuid4().hex[:8]}.sqlite"))
    try:
        assert not import_prices(first, [source]).errors
        exported = tmp_path / f"{uuid.uuid4().hex[:8]}{suffix}"
        assert export_prices(first, exported) == len(good)
        result = import_prices(second, [exported])
        assert not result.errors and result.inserted == len(good)
        assert stored(second) == stored(first)
    finally:
        first.dispose()
        second.dispose()

"""Importing spot availability: the spot traces and the probe logs, through the price
import; intervals that re-expand to the traces' ticks, idempotent re-import, rates
hand-checked on hand-made traces, and bad files rejected one line each."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from costsched import clouds
from costsched.model import InvalidInput
from costsched.optimize.availability import lifetimes, preemption_rates, read_probe_log
from costsched.optimize.decision import offering_rates
from costsched.optimize.hazard import PRIOR_HOURS
from costsched.service.decide import observed_rates
from costsched.service.prices import import_prices
from costsched.store import PriceStore
from price_collectors import availability

HOUR = 3600


def write_trace(root: Path, kind: str, name: str, data: list, gap: int = HOUR,
                folder: str = "aws-01-02-2023") -> Path:
    path = root / kind / "1-node" / folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"metadata": {"gap_seconds": gap}, "data": data}))
    return path


def expand(intervals: pd.DataFrame, start: pd.Timestamp, gap: int) -> np.ndarray:
    """The tick array that run-length encoded intervals stand for."""
    ticks = ((intervals["end"] - intervals["start"]).dt.total_seconds() / gap).astype(int)
    assert intervals["start"].iloc[0] == start
    assert (intervals["start"].iloc[1:].to_numpy() == intervals["end"].iloc[:-1].to_numpy()).all()
    return np.repeat(intervals["available"].to_numpy(), ticks.to_numpy())


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory, spot_traces: Path, dispa: Path):
    """A store holding every spot trace and every dispa2020 probe log, and the result."""
    store = PriceStore(str(tmp_path_factory.mktemp("avail") / "p.sqlite"))
    result = import_prices(store, [spot_traces, dispa / "aws" / "availability",
                                   dispa / "gcp" / "availability"])
    yield store, result
    store.dispose()


def test_every_trace_and_probe_log_imports(imported, spot_traces: Path, dispa: Path) -> None:
    store, result = imported
    traces = sorted(spot_traces.rglob("*.json"))
    probes = sorted(dispa.glob("*/availability/*.out"))
    assert result.errors == []
    assert result.files == len(traces) + len(probes) == 16
    assert result.read == result.inserted == 0  # no price file among them
    files = {Path(f["file"]): f["intervals"] for f in result.availability}
    assert set(files) == set(traces) | set(probes)
    assert all(n > 0 for n in files.values())
    assert result.intervals == result.intervals_inserted == sum(files.values())
    assert store.spot_availability.count() == result.intervals
    summary = store.spot_availability.summary()
    assert set(summary["kind"]) == {"availability", "preemption", "probe"}
    assert (summary[summary["kind"] == "availability"]["first"]
            == pd.Timestamp("2023-02-15", tz="UTC")).all()


@pytest.mark.parametrize("relative", [
    "availability/1-node/aws-02-15-2023/us-east-1a_v100_1.json",
    "availability/1-node/aws-02-15-2023/us-west-2c_v100_1.json",
    "preemption/1-node/aws-04-22-2023/us-east-1f_v100_1.json",
])
def test_intervals_re_expand_to_the_ticks(imported, spot_traces: Path, relative: str) -> None:
    store, _ = imported
    doc = json.loads((spot_traces / relative).read_text())
    kind, zone = relative.split("/")[0], Path(relative).name.split("_")[0]
    stored = store.spot_availability.intervals(zones=[zone], kind=kind, source=relative)
    assert len(stored) < len(doc["data"]) / 10  # run-length encoded
    assert (stored["instance_type"] == "p3.2xlarge").all()
    start = pd.Timestamp(relative.split("/")[2][4:], tz="UTC")
    ticks = expand(stored, start, doc["metadata"]["gap_seconds"])
    np.testing.assert_array_equal(ticks, np.asarray(doc["data"]) > 0)


def test_importing_again_adds_nothing(imported, spot_traces: Path, dispa: Path) -> None:
    store, first = imported
    before = store.spot_availability.count()
    again = import_prices(store, [spot_traces, dispa / "aws" / "availability",
                                  dispa / "gcp" / "availability"])
    assert again.errors == []
    assert again.intervals == first.intervals
    assert again.intervals_inserted == 0
    assert store.spot_availability.count() == before


def test_probe_rates_from_the_store_match_the_probe_log_parser(imported, dispa: Path) -> None:
    store, _ = imported
    logs = sorted(dispa.glob("*/availability/*.out"))
    keys = ["cloud", "region", "gpu_model", "gpu_count"]
    direct = preemption_rates(lifetimes(logs)).set_index(keys).sort_index()
    stored = preemption_rates(store.spot_availability.spells(kinds=["probe"])).set_index(keys)
    stored = stored.sort_index()
    assert direct.index.equals(stored.index)
    np.testing.assert_array_equal(stored["preemptions"], direct["preemptions"])
    np.testing.assert_allclose(stored["hours"], direct["hours"], rtol=1e-3)


def test_hand_made_preemption_trace_rates(tmp_path: Path, store: PriceStore) -> None:
    # Running 2 h then preempted, 3 h then preempted, 1 h at the end: 2 in 6 h.
    write_trace(tmp_path, "preemption", "us-east-1a_v100_1.json", [0, 1, 1, 0, 1, 1, 1, 0, 0, 1])
    result = import_prices(store, [tmp_path])
    assert result.errors == [] and result.intervals == 6
    rates = preemption_rates(store.spot_availability.spells())
    assert rates[["cloud", "region", "gpu_model", "gpu_count"]].iloc[0].tolist() == [
        "aws", "us-east-1", "V100", 1]
    assert (rates["preemptions"].iloc[0], rates["hours"].iloc[0]) == (2, 6.0)
    assert rates["per_hour"].iloc[0] == pytest.approx(1 / 3)


def test_hand_made_probe_log(tmp_path: Path, store: PriceStore) -> None:
    log = tmp_path / "gcp" / "availability" / "probe.out"
    log.parent.mkdir(parents=True)
    log.write_text(
        "[2020-03-01T00:00:00.000Z] Created instance a with 1 GPU(s) of type "
        "nvidia-tesla-v100 in zone us-west1-b\n"
        "[2020-03-01T00:00:01.000Z] Instance a running in zone us-west1-b\n"
        "[2020-03-01T02:00:00.000Z] Instance a not running in zone us-west1-b\n"
        "[2020-03-01T02:00:05.000Z] Successfully deleted instance a\n"
        "[2020-03-01T02:30:00.000Z] Instance a creation failed\n"
        "[2020-03-01T02:30:01.000Z] Instance a not running in zone us-west1-b\n"
        "[2020-03-01T03:00:00.000Z] Created instance a with 1 GPU(s) of type "
        "nvidia-tesla-v100 in zone us-west1-b\n"
        "[2020-03-01T04:00:00.000Z] Instance a running in zone us-west1-b\n")
    result = import_prices(store, [log])
    assert result.errors == []
    got = store.spot_availability.intervals(kind="probe")
    t = pd.Timestamp("2020-03-01", tz="UTC")
    hours = [(r.start - t) / pd.Timedelta(hours=1) for r in got.itertuples()]
    ends = [(r.end - t) / pd.Timedelta(hours=1) for r in got.itertuples()]
    # up 0-2 (preempted), down 2-2.5 (next attempt), down 2.5-3 (failed), up 3-4 (censored)
    assert list(zip(hours, ends, got["available"], strict=True)) == [
        (0, 2, True), (2, 2.5, False), (2.5, 3, False), (3, 4, True)]
    assert set(got["instance_type"]) == {"n1-standard-8+1xnvidia-tesla-v100"}
    rates = preemption_rates(store.spot_availability.spells()).iloc[0]
    assert (rates["preemptions"], rates["hours"]) == (1, 3.0)


def test_a_bad_file_is_one_line_and_the_good_ones_import(tmp_path: Path,
                                                         store: PriceStore) -> None:
    good = write_trace(tmp_path, "availability", "us-east-1a_v100_1.json", [1, 1, 0])
    bad = {
        "binary": tmp_path / "binary.out",
        "latin": write_trace(tmp_path, "availability", "us-east-1c_v100_1.json", []),
        "empty": tmp_path / "empty.out",
        "ticks": write_trace(tmp_path, "availability", "us-east-1d_v100_1.json", [1, "x"]),
        "folder": write_trace(tmp_path, "preemption", "us-east-1f_v100_1.json", [1],
                              folder="traces"),
    }
    bad["binary"].write_bytes(b"\x00\x01\x02\xff")
    bad["latin"].write_bytes(b'{"metadata": {"gap_seconds": 60}, "data": [1], "x": "\xe9"}')
    bad["empty"].write_text("\n\n")
    result = import_prices(store, [tmp_path])
    assert len(result.errors) == len(bad)
    for path, error in zip(sorted(bad.values()), sorted(result.errors), strict=True):
        assert error.startswith(f"{path}: ") and "\n" not in error
    assert any("binary or not UTF-8" in e for e in result.errors)
    assert any("data[1] 'x': expected a count >= 0" in e for e in result.errors)
    assert any("trace start unknown" in e for e in result.errors)
    assert result.availability == [{"file": str(good), "intervals": 2}]
    assert store.spot_availability.count() == 2


def test_prices_and_availability_in_one_call(tmp_path: Path, dispa: Path,
                                              store: PriceStore) -> None:
    write_trace(tmp_path, "availability", "us-east-1a_v100_1.json", [1, 0])
    prices = dispa / "aws" / "cost" / "us-east-1"
    result = import_prices(store, [prices, tmp_path])
    assert result.inserted > 0 and store.count() == result.inserted
    assert result.intervals_inserted == 2
    assert result.errors == []


def test_a_path_that_does_not_exist_is_refused_before_anything_is_stored(
        tmp_path: Path, dispa: Path, store: PriceStore) -> None:
    write_trace(tmp_path, "availability", "us-east-1a_v100_1.json", [1, 0])
    prices = dispa / "aws" / "cost" / "us-east-1"
    with pytest.raises(InvalidInput) as raised:
        import_prices(store, [prices, tmp_path, tmp_path / "missing"])
    assert str(raised.value) == f"{tmp_path / 'missing'}: cannot read: no such file or directory"
    assert store.count() == 0 and store.spot_availability.count() == 0


def test_an_explicit_start_places_a_trace_whose_folder_names_no_day(tmp_path: Path,
                                                                   store: PriceStore) -> None:
    write_trace(tmp_path, "availability", "us-west-2b_v100_1.json", [0, 1], gap=60,
                folder="mine")
    result = import_prices(store, [tmp_path], trace_start="2024-05-01T12:00Z")
    assert result.errors == []
    got = store.spot_availability.intervals()
    assert got["start"].tolist() == [pd.Timestamp("2024-05-01T12:00Z"),
                                     pd.Timestamp("2024-05-01T12:01Z")]


def test_store_rates_feed_the_decision_model(tmp_path: Path, store: PriceStore) -> None:
    # 30 h running, preempted, 20 h running: 1 preemption in 50 h in us-east-1.
    write_trace(tmp_path, "preemption", "us-east-1c_v100_1.json", [1] * 30 + [0] + [1] * 20)
    import_prices(store, [tmp_path])
    end = pd.Timestamp("2023-01-05", tz="UTC")
    rates = observed_rates(store, end.to_pydatetime())
    assert (rates["preemptions"].iloc[0], rates["hours"].iloc[0]) == (1, 50.0)
    # Before 20 h were seen, the cloud's default stands.
    assert observed_rates(store, pd.Timestamp("2023-01-02T20:00Z").to_pydatetime()) is None
    offers = pd.DataFrame({"cloud": ["aws", "aws", "aws"], "region": ["us-east-1"] * 2
                           + ["us-west-2"], "zone": ["us-east-1c", "us-east-1a", "us-west-2a"],
                           "gpu_model": ["V100"] * 3, "gpu_count": [1] * 3,
                           "market": ["spot"] * 3})
    got = offering_rates(offers, rates)
    # The zone's own data; its region's other zone and another region pool it.
    assert got["preemption_basis"].tolist() == [
        "measured in zone: 1 in 50 h; prior aws default",
        "measured in region: 1 in 50 h; prior aws default",
        "pooled from instance type: 1 in 50 h; prior aws default"]
    aws = clouds.default_preemption("aws").per_hour
    assert got["preemptions_per_hour"].tolist() == pytest.approx(
        [(1 + aws * PRIOR_HOURS) / (50 + PRIOR_HOURS)] * 3)


def test_probe_log_parser_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "x.out"
    path.write_text("[2020-03-01T00:00:00Z] Hello\n")
    with pytest.raises(InvalidInput, match=f"^{path}: line 1: unrecognised message"):
        read_probe_log(path)
    assert availability.is_availability_file(path)

"""The risk backtest on handmade traces: where charging for risk pays, and where it does
not."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from costsched.backtest.risk import HourlyHazards, RiskJob, Traces, replay, summary
from costsched.model import InvalidInput

TICK = 360  # 10 ticks an hour


def hourly(pattern: str, hours: int) -> list[int]:
    """A trace of `hours` hours from a repeating pattern of hours ('1' up, '0' down)."""
    return [int(pattern[h % len(pattern)]) for h in range(hours) for _ in range(10)]


def write(folder: Path, zones: dict[str, list[int]]) -> Path:
    folder.mkdir()
    for zone, data in zones.items():
        (folder / f"{zone}_v100_1.json").write_text(json.dumps(
            {"metadata": {"gap_seconds": TICK}, "data": data}))
    return folder


def run(traces: Traces, prices: list[float]) -> dict[str, dict]:
    job = RiskJob(work_hours=8, deadline_hours=30, checkpoint_hours=1, restart_hours=0.2)
    starts = np.arange(48, 48 + 5 * 12, 12.0)
    runs = replay(traces, job, starts, np.array(prices), 3.06, HourlyHazards(traces, 48))
    return {r["policy"]: r for r in summary(runs).to_dict("records")}


def test_a_flaky_cheap_zone_is_avoided_and_that_pays(tmp_path: Path) -> None:
    # us-east-1a: down one hour in every three, always; us-east-1b: always up.
    traces = Traces.read(write(tmp_path / "t", {
        "us-east-1a": hourly("110", 200), "us-east-1b": hourly("1", 200)}))
    out = run(traces, [0.90, 1.00])
    cheap, aware = out["price-only"], out["risk-aware"]
    assert aware["preemptions"] == 0 < cheap["preemptions"]
    assert aware["realised_usd"] < cheap["realised_usd"]
    # Each believed its own model: price-only expected less than it paid.
    assert cheap["expected_usd"] < cheap["realised_usd"]
    assert aware["late"] == cheap["late"] == 0


def test_a_zone_that_calmed_down_is_avoided_and_that_costs(tmp_path: Path) -> None:
    # us-east-1a was flaky over the lookback, then became steady: its record misleads.
    flaky_then_calm = hourly("10", 48) + hourly("1", 152)
    traces = Traces.read(write(tmp_path / "t", {
        "us-east-1a": flaky_then_calm, "us-east-1b": hourly("1", 200)}))
    out = run(traces, [0.90, 1.00])
    assert out["price-only"]["preemptions"] == out["risk-aware"]["preemptions"] == 0
    assert out["risk-aware"]["realised_usd"] > out["price-only"]["realised_usd"]


def test_bad_trace_folders_are_one_line(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no trace files"):
        Traces.read(tmp_path)
    (tmp_path / "us-east-1a_v100_1.json").write_text("{}")
    with pytest.raises(InvalidInput, match=r"us-east-1a_v100_1.json: expected \{metadata"):
        Traces.read(tmp_path)

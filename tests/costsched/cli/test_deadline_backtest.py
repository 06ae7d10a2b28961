"""`costsched backtest-deadline` on a trace whose regions the bundled catalog does not
list (il-central-1, me-central-1), its availability and per-tick spot prices imported with
`costsched prices import`, over named windows: the optimum and the runs are billed at
the stored price of each tick."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from costsched.cli import app

TICK = 60
START = pd.Timestamp("2024-05-01T00:00:00Z")
ZONES = ["il-central-1a", "me-central-1a"]
TICKS = 400
# Spot in il-central-1a always, at a price that changes every tick; in me-central-1a every
# other tick, dearer than on-demand (never worth it).
PRICES = 1.0 + 0.01 * (np.arange(TICKS) % 17)
OTHER = [i % 2 for i in range(TICKS)]


def _inputs(folder: Path) -> Path:
    (folder / "availability").mkdir(parents=True)
    for zone, data in zip(ZONES, ([1] * TICKS, OTHER), strict=True):
        (folder / "availability" / f"{zone}_v100_1.json").write_text(json.dumps(
            {"metadata": {"gap_seconds": TICK}, "data": data}))
    items = [{"AvailabilityZone": ZONES[0], "InstanceType": "p3.2xlarge",
              "ProductDescription": "Linux/UNIX", "SpotPrice": f"{p:.4f}",
              "Timestamp": (START + pd.Timedelta(seconds=i * TICK)).isoformat()}
             for i, p in enumerate(PRICES)]
    items.append({**items[0], "AvailabilityZone": ZONES[1], "SpotPrice": "5.0000"})
    (folder / "spot.json").write_text(json.dumps({"SpotPriceHistory": items}))
    return folder


def _run(argv: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(app, argv, catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture()
def imported(tmp_path: Path) -> str:
    db = f"sqlite:///{tmp_path / 'store.sqlite'}"
    code, out = _run(["prices", "import", str(_inputs(tmp_path / "in")), "--trace-start",
                      START.isoformat(), "--new-store", "--db", db])
    assert code == 0, out
    return db


JOB = ["--job-hours", "1", "--deadline", "1.05", "--restart-minutes", "3",
       "--checkpoint-minutes", "10", "--on-demand-price", "4", "--policies", "greedy"]


def test_unknown_regions_replay_from_stored_per_tick_prices_over_named_windows(
        imported: str, tmp_path: Path) -> None:
    windows = tmp_path / "windows.csv"
    windows.write_text("start\n2024-05-01T01:00:00Z\n2024-05-01T02:30:30Z\n")
    code, out = _run(["backtest-deadline", "--db", imported, *JOB, "--windows",
                      str(windows), "--optimum-step", "exact", "--json"])
    assert code == 0, out
    document = json.loads(out)
    assert document["trace"]["zones"] == ZONES
    assert document["trace"]["regions"] == ["il-central-1", "me-central-1"]
    per_window = pd.DataFrame(document["windows"])
    optimum = per_window[per_window["policy"] == "optimum"]
    # The optimum from each window: no slack beyond the restart, so spot in il-central-1a
    # for the 3-minute restart and the hour of work (63 ticks from the tick holding the
    # start), at each tick's stored price.
    for row, first in zip(optimum.itertuples(), (60, 150), strict=True):
        expected = PRICES[first:first + 63].sum() * TICK / 3600
        assert row.cost_usd == pytest.approx(expected, rel=1e-5)
    assert list(pd.to_datetime(optimum["start"], utc=True)) == [
        START + pd.Timedelta(hours=1), START + pd.Timedelta(minutes=150)]
    assert document["trace"]["prices"].startswith("given prices")  # on-demand given
    assert (per_window["misses"] == 0).all()


def test_the_table_shows_each_window_beside_the_mean(imported: str) -> None:
    code, out = _run(["backtest-deadline", "--db", imported, *JOB, "--windows",
                      "2024-05-01T01:00:00Z,2024-05-01T03:00:00Z", "--wide"])
    assert code == 0, out
    assert "2024-05-01 01:00" in out and "2024-05-01 03:00" in out and "mean" in out
    assert "il-central-1 -> me-central-1" in out  # the egress rates used
    # Runs that were late are counted alike in each window's row and in the mean's.
    late = [line.split("│")[-2].strip() for line in out.splitlines()
            if "2024-05-01 01:00" in line or "│ mean" in line]
    assert late and all(cell.isdigit() for cell in late), late


def test_missing_prices_bad_windows_and_steps_are_one_line_errors(imported: str,
                                                                    tmp_path: Path) -> None:
    job = [a for a in JOB if a not in ("--on-demand-price", "4")]
    code, out = _run(["backtest-deadline", "--db", imported, *job])
    assert code == 2
    assert "--on-demand-price: no price of p3.2xlarge in il-central-1a" in out
    assert "Traceback" not in out
    code, out = _run(["backtest-deadline", "--db", imported, *JOB, "--windows",
                      "2024-06-01T00:00:00Z"])
    assert code == 2 and "--windows 2024-06-01T00:00:00Z: expected a start from" in out
    code, out = _run(["backtest-deadline", "--db", imported, *JOB, "--optimum-step", "7"])
    assert code == 2 and "--optimum-step '7': expected exact or seconds" in out


def test_egress_rates_given_are_the_ones_charged(imported: str, tmp_path: Path) -> None:
    rates = tmp_path / "egress.csv"
    rates.write_text("from_region,to_region,usd_per_gb\nil-central-1,me-central-1,0.5\n")
    code, out = _run(["backtest-deadline", "--db", imported, *JOB, "--egress-rates",
                      str(rates), "--checkpoint-gb", "10", "--starts", "2", "--json"])
    assert code == 0, out
    rates_used = json.loads(out)["trace"]["egress_usd_per_gb"]
    assert {"from_region": "il-central-1", "to_region": "me-central-1",
            "usd_per_gb": 0.5} in rates_used
    # The other direction keeps AWS's listed rate for the pair.
    back = next(r for r in rates_used if r["from_region"] == "me-central-1")
    assert back["usd_per_gb"] > 0 and back["usd_per_gb"] != 0.5


def test_with_no_history_each_window_starts_from_the_policy_prior(imported: str) -> None:
    args = ["backtest-deadline", "--db", imported, "--job-hours", "1", "--deadline", "2",
            "--restart-minutes", "3", "--checkpoint-minutes", "10", "--on-demand-price", "4",
            "--policies", "spot-hedge", "--windows", "2024-05-01T03:00:00Z", "--json"]
    documents = {}
    for history in ("full", "none"):
        code, out = _run([*args, "--history", history])
        assert code == 0, out
        documents[history] = json.loads(out)
    assert documents["none"]["trace"]["history"] == "none"
    windows = pd.DataFrame(documents["none"]["windows"])
    assert {"region_moves", "egress_usd"} <= set(windows.columns)
    runs = pd.DataFrame(documents["none"]["runs"])
    assert runs["met"].all() and {"region_moves", "egress_usd"} <= set(runs.columns)
    code, out = _run([*args, "--history", "some"])
    assert code == 2 and "--history 'some': expected one of full, none" in out
    code, out = _run([*args[:-1], "--history", "none"])  # the table says so
    assert code == 0 and "market history: none before each run" in out


def test_deadlines_are_written_as_every_deadline_is(imported: str) -> None:
    """'--deadline 2h,150m' is '--deadline 2,2.5': the durations every other deadline takes."""
    args = ["backtest-deadline", "--db", imported, "--job-hours", "1", "--restart-minutes",
            "3", "--checkpoint-minutes", "10", "--on-demand-price", "4", "--policies",
            "greedy", "--windows", "2024-05-01T03:00:00Z", "--json"]
    found = []
    for deadline in ("2,2.5", "2h,150m"):
        code, out = _run([*args, "--deadline", deadline])
        assert code == 0, out
        found.append(json.loads(out))
    assert found[0] == found[1]
    assert sorted({r["deadline_hours"] for r in found[1]["runs"]}) == [2.0, 2.5]

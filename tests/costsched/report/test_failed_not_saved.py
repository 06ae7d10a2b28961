"""Money spent on a failed run is not a saving: `report` counts the savings of the jobs
that succeeded, and of those running or stopped (their work is kept), and says the failed
runs' spend apart ("failed runs cost $X"); `report --json` carries the same figures (its
totals' `failed_usd`, and null savings on a failed job's row)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from costsched.report import build
from costsched.report.html import render
from costsched.store import OBSERVATION_COLUMNS, PriceStore
from tests.costsched.report.scenario import at, job

EAST = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")


def _ran(store: PriceStore, name: str, hours: int, steps: float, state: str) -> int:
    made = job(store, name, {"V100": 2.0})
    store.jobs.place(made, EAST, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=1.0,
                     reason="launch", instance=f"i-{name}", keep_open=False)
    if steps:
        store.jobs.record_step(made, steps, at=at(hours))
    store.jobs.end_placement(made, at(hours))
    if state != "pending":
        store.jobs.transition(made, state, at=at(hours))
    return made


@pytest.fixture()
def mixed_db(db_path: Path) -> Path:
    """On EAST at $1/h spot (on-demand p3.2xlarge is dearer): `ok` succeeded after 2 h,
    `broke` failed after 1 h (at step 3,600), `idle` was stopped before its first step."""
    store = PriceStore(str(db_path))
    store.ingest(pd.DataFrame([(*EAST, "V100", 1, 8, 61.0, 1.0, pd.Timestamp(at(-10)),
                                "test")], columns=OBSERVATION_COLUMNS))
    _ran(store, "ok", 2, 7200.0, "succeeded")
    _ran(store, "broke", 1, 3600.0, "failed")
    _ran(store, "idle", 1, 0.0, "stopped")
    store.dispose()
    return db_path


def test_a_failed_run_saves_nothing_and_its_spend_is_said(cli, mixed_db: Path) -> None:
    store = PriceStore(str(mixed_db))
    report = build(store, now=at(5))
    rows = {r["name"]: r for r in report.jobs.to_dict("records")}
    ok = rows["ok"]
    assert ok["saved_vs_on_demand_usd"] > 0
    broke, idle = rows["broke"], rows["idle"]
    assert math.isnan(broke["saved_vs_on_demand_usd"])
    assert math.isnan(broke["saved_vs_launch_choice_usd"])
    assert idle["saved_vs_on_demand_usd"] > 0  # stopped: its hour cost less than on-demand
    totals = report.totals
    assert totals["saved_vs_on_demand_usd"] == pytest.approx(
        ok["saved_vs_on_demand_usd"] + idle["saved_vs_on_demand_usd"])
    assert totals["failed_usd"] == pytest.approx(1.0)  # broke's hour at $1/h
    assert totals["usd"] == pytest.approx(4.0)  # every run's spend is still spend

    data = json.loads(cli("report", "--json").stdout)
    assert data["totals"]["failed_usd"] == pytest.approx(1.0)
    broke = next(r for r in data["jobs"] if r["name"] == "broke")
    assert broke["saved_vs_on_demand_usd"] is None and broke["state"] == "failed"

    shown = cli("report").output
    said = "; failed runs cost $1.0000 (job 2 (broke), failed 2024-06-01 21:00 UTC: $1.0000)"
    assert said + " " in " ".join(shown.split()), shown  # (the line wraps at the width)
    assert said[2:] + "." in render(report)
    store.dispose()


def test_no_failed_run_says_nothing_of_one(cli, mixed_db: Path) -> None:
    store = PriceStore(str(mixed_db))
    report = build(store, job="ok", now=at(5))
    store.dispose()
    assert report.totals["failed_usd"] == 0.0
    assert "failed runs" not in cli("report", "--job", "ok").output


def test_the_spend_page_says_what_failed_runs_cost(mixed_db: Path) -> None:
    from starlette.testclient import TestClient

    from costsched.dashboard.app import create_app

    store = PriceStore(str(mixed_db))
    page = TestClient(create_app(store)).get("/spend", params={"until": at(5).isoformat()})
    store.dispose()
    assert page.status_code == 200
    assert ('<span class="figure">$1.0000</span><span>spent on failed runs (no saving)</span>'
            in " ".join(page.text.split())), page.text

"""The dashboard's forecast of a running job (the jobs page's and the job page's) prices
the rest of it at the speed it runs at, as the decider, the budget's forecast and
`status --json` do (`tests/costsched/service/test_rest_priced.py`)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from costsched.dashboard import data
from costsched.service import jobs as service
from costsched.service.jobs.budgets import budgets_now
from costsched.store import PriceStore
from launchers import make_launcher
from tests.costsched.service.test_rest_priced import (
    DONE,
    MEASURED,
    PRICE,
    STEPS,
    credited,
    slow_job,
)


def test_the_dashboard_forecasts_the_rest_at_the_measured_speed(
        store: PriceStore, client: TestClient, instances: Path) -> None:
    """4x slower than planned: the job page's forecast and the jobs page's are its spend
    plus the rest at 1 step/s ($79.50 left, less the time since its last reading), the
    budget's forecast, and the decider's stay cost is the rest from that reading."""
    now = datetime.now(timezone.utc).replace(microsecond=0)  # readings keep whole seconds
    job = slow_job(store, instances, now)
    rest = (STEPS - DONE) / MEASURED / 3600 * PRICE

    doc = client.get(f"/api/jobs/{job}").json()
    [advice] = doc["advice"]
    assert advice["stay_usd"] == pytest.approx(rest, rel=1e-9)
    # (read a moment after its cost: the same figure at one time, `test_one_forecast`; the
    # rest now, less the time since its last reading that its cost bills already)
    assert doc["forecast_usd"] == pytest.approx(doc["job"]["cost_usd"] + rest - credited(),
                                                abs=0.005)
    assert doc["job"]["rest"]["source"] == "measured"
    [budget] = budgets_now(store)
    assert doc["forecast_usd"] == pytest.approx(budget.forecast_usd, abs=0.005)
    listed = client.get("/api/jobs").json()
    forecast = data.forecasts(store, listed["jobs"])[job]["forecast_usd"]
    assert forecast == pytest.approx(budget.forecast_usd, abs=0.005)
    [decided] = service.migrate(store, make_launcher("local"), job, dry_run=True)
    assert decided.stay_usd == advice["stay_usd"]

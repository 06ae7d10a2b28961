"""One job's forecast is one figure: the dashboard's (the jobs page's, the job page's and
`/api/jobs/JOB`'s) is its own budget's forecast in `status`'s budgets, what it spent plus
its cost to its end, computed in one place (`service.jobs.budgets.job_forecasts`)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

from costsched.dashboard import data
from costsched.service.jobs.budgets import budgets_now, job_forecasts
from costsched.store import PriceStore
from tests.costsched.service.test_rest_priced import slow_job


def test_the_dashboards_forecast_is_the_budgets(store: PriceStore, instances: Path) -> None:
    now = datetime.now(timezone.utc).replace(microsecond=0)
    job = slow_job(store, instances, now)
    [budget] = budgets_now(store, at=now)  # its own: `status --json`'s "budgets"
    assert budget.forecast_usd > budget.spent_usd  # a rest to price
    listed = data.jobs_document(store)["jobs"]
    assert data.forecasts(store, listed, at=now)[job]["forecast_usd"] == budget.forecast_usd
    assert data.job_document(store, job, at=now)["forecast_usd"] == budget.forecast_usd
    assert job_forecasts(store, [job], at=now) == {job: budget.forecast_usd}
    assert job_forecasts(store, [], at=now) == {}


"""`status` charges its jobs and its budgets at one instant: a running job's cost and its
budget's spent, read on one screen, are the same figure."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

from costsched.service.jobs.caps import raise_budget
from tests.costsched.service.test_status_without_pandas import _store


def test_a_running_jobs_cost_and_its_budgets_spent_are_read_at_one_time(
        cli, tmp_path: Path) -> None:  # noqa: ANN001
    now = datetime.now(timezone.utc) - timedelta(seconds=1)
    url, store = _store(tmp_path, now)
    raise_budget(store, 2, 50.0, at=now)  # the running job's own budget
    store.dispose()
    shown = cli("status", "--db", url, "--no-reconcile", "--json")  # its cost grows as read
    assert shown.exit_code == 0, shown.output
    document = json.loads(shown.stdout)
    live = next(j for j in document["jobs"] if j["name"] == "live")
    [budget] = [b for b in document["budgets"] if b["jobs"] == [2]]
    assert budget["spent_usd"] == live["cost_usd"] > 0

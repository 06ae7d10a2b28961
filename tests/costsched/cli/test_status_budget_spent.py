"""One spend per job in one `status`: with the daemon off and no reconcile, a job whose
instance was taken is charged until it was lost, in its row and in its budget alike (the
budget does not go on charging the gone instance until a reconcile). The local launcher,
a real SQLite store, the CLI."""

from __future__ import annotations

import json
import time
from datetime import datetime, timezone

import pytest

from costsched.service import jobs as service
from costsched.service.jobs.caps import raise_budget
from tests.costsched.service.test_jobs import world, write_spec  # noqa: F401 - the fixture


def test_a_budget_spends_what_the_jobs_row_costs_when_its_instance_is_gone(
        world, cli, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811, ANN001
    store, launcher, tmp = world
    [job] = service.launch(store, write_spec(tmp, run="exec sleep 600"), launcher=launcher,
                           wait_seconds=20, checkpoint_root=str(tmp / "checkpoints"))
    raise_budget(store, job.id, 50.0, at=datetime.now(timezone.utc))
    time.sleep(1.1)  # (charged by the second) it ran a while before it was taken
    launcher.preempt(str(store.jobs.placements(job.id)["instance"].iloc[-1]))
    time.sleep(1.1)  # the look comes after the loss: charged on, the budget would differ
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp / "instances"))
    db = str(tmp / "store.sqlite")
    shown = cli("status", str(job.id), "--db", db, "--no-reconcile", "--json")
    assert shown.exit_code == 0, shown.output
    doc = json.loads(shown.stdout)
    [row] = doc["jobs"]
    [budget] = [b for b in doc["budgets"] if b["name"] == f"job {job.id} (train)"]
    assert row["instance_state"] == "preempted"
    cost = row["cost_usd"]
    assert cost > 0 and budget["spent_usd"] == pytest.approx(cost, rel=1e-9, abs=0)
    text = cli("status", str(job.id), "--db", db, "--no-reconcile")
    assert text.exit_code == 0, text.output
    assert store.jobs.placements(job.id)["end_at"].isna().all()  # nothing reconciled

"""The daemon says each budget threshold once: the watcher's 50/80/100% notifications, and
no second alarm of its own from the re-plan (80% was said twice)."""

from __future__ import annotations

import sys
from datetime import timedelta
from typing import Any

import pandas as pd
import yaml

from costsched.config import BudgetsConfig, Config
from costsched.daemon import Daemon
from costsched.service import jobs as service
from tests.costsched.service.test_jobs import STEPS, TRAIN, world, write_spec

__all__ = ["world"]  # the fixture, shared with the jobs tests


def test_each_budget_threshold_is_notified_once(world) -> None:  # noqa: ANN001
    store, launcher, tmp = world
    # Slow enough to run through the test (its instance is ended with the world).
    path = write_spec(tmp, "budgeted", run=f"{sys.executable} {TRAIN} --steps {STEPS} "
                      "--step-seconds 1 --checkpoint-every 1")
    spec = yaml.safe_load(path.read_text())
    spec["constraints"]["budget"] = 50.0  # the plan expects about $43
    path.write_text(yaml.safe_dump(spec))
    [job] = service.launch(store, path, launcher=launcher, wait_seconds=10,
                           checkpoint_root=str(tmp / "checkpoints"))
    start = pd.Timestamp(store.jobs.placements(job.id)["start_at"].iloc[0]).to_pydatetime()
    daemon = Daemon(store, Config(), tasks=("replan",), launchers=lambda _: launcher,
                    settle_seconds=0)
    told: list[tuple[str, dict[str, Any]]] = []
    daemon._notify = lambda event, **details: told.append((event, details))  # noqa: SLF001

    def watch_and_replan(hours: float) -> None:
        at = start + timedelta(hours=hours)
        # The watcher's pass (what the daemon does every watch interval), then a re-plan.
        for event in service.reconcile(store, launcher, at=at, budgets=BudgetsConfig(),
                                       watch_seconds=60):
            daemon._reported(event)  # noqa: SLF001
        daemon.replan(at)

    # Zone a at $1.00/h: 30 hours in, 60% of the budget is spent; 45 hours in, 90%.
    for hours in (30, 31, 45, 46):
        watch_and_replan(hours)
    said = [d["detail"] for event, d in told if event == "budget"]
    assert [d.split(" of $")[0] for d in said] == [
        f"job {job.id}: its budget reached 50%",
        f"job {job.id}: its budget reached 80%"]
    assert all(set(d) == {"job", "detail"} for event, d in told if event == "budget")

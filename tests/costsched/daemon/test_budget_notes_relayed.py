"""Whichever process crosses a budget's threshold first, the daemon's log carries it: a
`status` between two passes of the supervisor reconciles too, notes the 80% threshold and
says nothing of it; the supervisor's next pass logs (and notifies) it, once."""

from __future__ import annotations

import logging
import sys
from datetime import timedelta
from typing import Any

import pandas as pd
import pytest
import yaml

from costsched.config import BudgetsConfig, Config
from costsched.daemon import Daemon
from costsched.service import jobs as service
from tests.costsched.service.test_jobs import STEPS, TRAIN, world, write_spec

__all__ = ["world"]  # the fixture, shared with the jobs tests


def test_a_threshold_a_status_crossed_is_in_the_daemons_log(
        world, caplog: pytest.LogCaptureFixture) -> None:  # noqa: ANN001
    store, launcher, tmp = world
    path = write_spec(tmp, "budgeted", run=f"{sys.executable} {TRAIN} --steps {STEPS} "
                      "--step-seconds 1 --checkpoint-every 1")
    spec = yaml.safe_load(path.read_text())
    spec["constraints"]["budget"] = 50.0  # the plan expects about $43
    path.write_text(yaml.safe_dump(spec))
    [job] = service.launch(store, path, launcher=launcher, wait_seconds=10,
                           checkpoint_root=str(tmp / "checkpoints"))
    start = pd.Timestamp(store.jobs.placements(job.id)["start_at"].iloc[0]).to_pydatetime()
    daemon = Daemon(store, Config(), tasks=(), launchers=lambda _: launcher,
                    settle_seconds=0, watch_seconds=0.01)
    # A second daemon on the store: it logs what the first does, and notifies nothing twice.
    other = Daemon(store, Config(), tasks=(), launchers=lambda _: launcher,
                   settle_seconds=0, watch_seconds=0.01, holder="vm:1:other")
    told: list[tuple[str, dict[str, Any]]] = []
    daemon._notify = lambda event, **details: told.append((event, details))  # noqa: SLF001
    other._notify = lambda event, **details: told.append((event, details))  # noqa: SLF001
    caplog.set_level(logging.INFO, logger="costsched.daemon")

    def supervisor(hours: float) -> None:
        """The supervisor's pass at `hours` into the job, as its watcher makes it."""
        for event in service.reconcile(store, launcher, at=start + timedelta(hours=hours),
                                       budgets=BudgetsConfig(), watch_seconds=60):
            daemon._reported(event)  # noqa: SLF001
        daemon.relay_budget_notes()
        other.relay_budget_notes()

    def status(hours: float) -> None:
        """`costsched status` between two passes: it reconciles, and keeps only errors."""
        service.reconcile(store, launcher, at=start + timedelta(hours=hours),
                          budgets=BudgetsConfig(), watch_seconds=60)

    # Zone a at $1.00/h: 30 hours in, 60% of the budget is spent; 45 hours in, 90%.
    supervisor(20)  # 40%: each daemon marks where it starts
    supervisor(30)
    status(45)
    supervisor(46)
    supervisor(47)
    logged = [r.getMessage() for r in caplog.records if "reached" in r.getMessage()]
    # The first daemon's own 50% (said as it passed it), then the 80% of the status, by
    # both daemons (each its log; one process here, one capture).
    assert [line.split(" of $")[0].split("detail=")[1] for line in logged] == [
        f'"job {job.id}: its budget reached 50%', f'"job {job.id}: its budget reached 50%',
        f'"job {job.id}: its budget reached 80%', f'"job {job.id}: its budget reached 80%']
    assert "level=info" in logged[0] and "level=warning" in logged[-1], logged
    said = [d["detail"] for event, d in told if event == "budget"]
    assert [d.split(" of $")[0] for d in said] == [
        f"job {job.id}: its budget reached 50%", f"job {job.id}: its budget reached 80%"]

"""A job that trains past its declared steps (its file declares fewer than it does) is
stopped at its budget's cap as any other: `stopped`, its stop said, startable with a
raised budget from its checkpoint; never closed as succeeded for having passed a total
that is not its end (a job that did all its declared steps as the cap came still has).
In-memory launcher, SQLite store."""

from __future__ import annotations

from datetime import datetime, timezone

from costsched.config import BudgetsConfig
from costsched.service import jobs as service
from costsched.service.jobs import caps
from costsched.service.views import status_document
from tests.costsched.service.test_budget_cap_done import (  # noqa: F401
    HOUR,
    STEPS,
    _budget_notes,
    capped,
)


def test_a_job_past_its_declared_steps_is_stopped_at_its_cap_not_succeeded(capped) -> None:  # noqa: F811
    store, launcher, job_id = capped
    store.jobs.record_step(job_id, 2480, at=datetime.now(timezone.utc))  # past its 2,000
    launcher.last = 3292  # it saves and exits as the stop asks, still short of its end
    events = caps.enforce(store, launcher, BudgetsConfig(), datetime.now(timezone.utc), HOUR)
    assert "finished" not in [e.kind for e in events if e.job_id == job_id], events
    assert store.jobs.get(job_id).state == "stopped"  # was: succeeded
    notes = _budget_notes(store, job_id)
    assert any(d.startswith("stopped at its own budget: ") for d in notes), notes
    [shown] = service.status(store, launcher, job_id, reconcile_first=False)
    [doc] = status_document([shown])
    assert doc["state"] == "stopped", doc
    # A raised budget starts it again: the same job (this launcher keeps no checkpoint:
    # its start prices all its steps).
    started = service.start(store, launcher, job_id, budget=5.0)
    assert (started.id, started.state) == (job_id, "running")


def test_a_job_at_its_declared_steps_as_the_cap_comes_still_succeeds(capped) -> None:  # noqa: F811
    store, launcher, job_id = capped  # at step 1,990 of 2,000
    launcher.last = STEPS
    caps.enforce(store, launcher, BudgetsConfig(), datetime.now(timezone.utc), HOUR)
    assert store.jobs.get(job_id).state == "succeeded"

"""A job that has done all its declared steps is never stopped at its budget's cap: the
watch's cap check (spent plus the next interval's charge) can fire as the job reaches its
last step, and a job that exits 0 after a stop was asked reads `stopped` from its
instance, so the step tells. One that reports its last step as the stop is asked is
closed as succeeded; one that has reported all its steps already is left to end by
itself. In-memory launcher, SQLite store."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched.config import BudgetsConfig
from costsched.report.data import build
from costsched.service import jobs as service
from costsched.service.jobs import caps
from costsched.service.jobs.caps import raise_budget
from costsched.service.views import status_document
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices

STEPS = 2000
HOUR = 3600.0  # a watch interval longer than the rest: the rest is charged


class Finishing(FakeLauncher):
    """Instances that report the job's last step (`last`) and exit 0 as they are asked to
    stop: the job reached its end as the stop came. Ended, they still say their step."""

    last = STEPS

    def request_stop(self, instance_id: str) -> None:
        super().request_stop(instance_id)
        self.states[instance_id] = replace(self.states[instance_id], step=self.last)

    def terminate(self, instance_id: str) -> None:
        step = self.states[instance_id].step
        super().terminate(instance_id)
        self.states[instance_id] = replace(self.states[instance_id], step=step)


def _now() -> datetime:
    return datetime.now(timezone.utc)


@pytest.fixture()
def capped(store: PriceStore, tmp_path: Path) -> tuple[PriceStore, Finishing, int]:
    """A running job of 2,000 declared steps at step 1,990, with a budget of its own of
    $0.001 that its rest (its 10 steps left at 0.5 steps/s, $0.0058) passes."""
    set_prices(store, {"us-east-1a": 1.0}, _now() - timedelta(hours=1))
    spec = {"name": "digits-budget", "throughputs": {"V100": 0.5}, "steps": STEPS,
            "run": "true", "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
            "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(spec))
    launcher = Finishing()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    store.jobs.record_step(job.id, 1990, at=_now())
    raise_budget(store, job.id, 0.001, at=_now())
    return store, launcher, job.id


def _budget_notes(store: PriceStore, job_id: int) -> list[str]:
    events = store.jobs.events(job_id)
    return events[events["kind"] == "budget"]["detail"].tolist()


def _assert_succeeded(store: PriceStore, launcher: Finishing, job_id: int) -> None:
    [shown] = service.status(store, launcher, job_id, reconcile_first=False)
    [doc] = status_document([shown])  # as `status` and its --json say it
    assert (doc["state"], doc["step"]) == ("succeeded", STEPS)
    assert store.jobs.get(job_id).steps_done == STEPS
    assert not any(d.startswith("stopped at ") for d in _budget_notes(store, job_id))
    assert store.jobs.placements_of([job_id], open_only=True).empty
    [state] = caps.budget_states(store, BudgetsConfig(), _now(), HOUR)
    assert state.stopped == () and state.running == ()
    report = build(store, now=_now())
    assert report.jobs.set_index("job_id").loc[job_id, "state"] == "succeeded"
    budgets = report.budgets
    assert budgets.empty or "stopped at its budget" not in budgets["status"].tolist()


def test_a_job_that_reports_its_last_step_as_the_cap_stops_it_has_succeeded(
        capped) -> None:
    store, launcher, job_id = capped
    events = caps.enforce(store, launcher, BudgetsConfig(), _now(), HOUR)
    assert ("stop", launcher.instances(job_id)[0].id) in launcher.calls  # it was asked
    assert [e.kind for e in events if e.job_id == job_id] == ["finished"]
    _assert_succeeded(store, launcher, job_id)
    assert not any(i.live for i in launcher.instances(job_id))


def test_a_job_short_of_its_steps_at_the_cap_is_still_stopped_there(capped) -> None:
    store, launcher, job_id = capped
    launcher.last = 1995  # it checkpointed and exited short of its end
    caps.enforce(store, launcher, BudgetsConfig(), _now(), HOUR)
    assert store.jobs.get(job_id).state == "stopped"
    notes = _budget_notes(store, job_id)
    assert any(d.startswith("stopped at its own budget: ") for d in notes), notes


def test_a_job_that_reported_all_its_steps_is_left_to_end_by_itself(capped) -> None:
    store, launcher, job_id = capped
    store.jobs.record_step(job_id, STEPS, at=_now())  # its last step, read before the check
    events = caps.enforce(store, launcher, BudgetsConfig(), _now(), HOUR)
    assert not [c for c in launcher.calls if c[0] == "stop"]  # never asked to stop
    assert not [e for e in events if "stopped" in e]
    assert store.jobs.get(job_id).state == "running"
    [instance] = launcher.instances(job_id)
    launcher.states[instance.id] = replace(instance, state="succeeded", step=STEPS)
    service.reconcile(store, launcher)  # its exit 0: the watch's end pass closes it
    _assert_succeeded(store, launcher, job_id)

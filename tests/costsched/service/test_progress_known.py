"""A job's progress is a step it reached, never one guessed from the hours it ran: before
its first step it has every step left (and `status` says so in words, not a percentage),
and after a stop its newest verified checkpoint stands for its progress when that is
later than the last step read. In-memory launcher, SQLite store."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched.cli import jobs as cli_jobs
from costsched.service import jobs as service
from costsched.service.jobs.runs import _running, steps_left
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices


@pytest.fixture()
def launched(store: PriceStore, tmp_path: Path) -> tuple[PriceStore, FakeLauncher, int]:
    set_prices(store, {"us-east-1a": 1.0, "us-east-1b": 2.0},
               datetime.now(timezone.utc) - timedelta(hours=1))
    spec = {"name": "fit", "throughputs": {"V100": 0.5}, "steps": 2000,
            "setup": "sleep 20", "run": "true",
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
            "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}
    path = tmp_path / "fit.yaml"
    path.write_text(yaml.safe_dump(spec))
    launcher = FakeLauncher()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    return store, launcher, job.id


def test_no_step_is_guessed_before_the_first(launched) -> None:
    store, launcher, job = launched
    later = datetime.now(timezone.utc) + timedelta(minutes=30)  # 900 steps at its speed
    [shown] = service.status(store, launcher, job, at=later, reconcile_first=False)
    assert shown.record.state == "running" and not shown.reported
    assert shown.steps_left == 2000 and shown.progress is None
    assert shown.progress_source is None
    assert cli_jobs._progress(shown) == "no step yet"
    # What the decider prices the job from is the same: every step left.
    assert steps_left(store, _running(store, job), later) == 2000


def test_a_stopped_job_is_at_its_newest_checkpoint(launched) -> None:
    store, launcher, job = launched
    now = datetime.now(timezone.utc)
    store.jobs.record_step(job, 598, at=now)
    store.jobs.record_progress(job, 598, at=now, checkpoint_step=834)
    service.stop(store, launcher, job)
    [shown] = service.status(store, launcher, job, reconcile_first=False)
    assert shown.record.state == "stopped" and shown.reported
    assert shown.steps_left == 2000 - 834
    assert cli_jobs._progress(shown) == "41%"  # 834 of 2,000, rounded down
    assert steps_left(store, _running(store, job), now) == 2000 - 834


def launch_task_without_work(store: PriceStore, tmp_path: Path) -> tuple:
    """A SkyPilot V100 spot task with no work, launched on a fake launcher: (job, launcher)."""
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    path = tmp_path / "sky.yaml"
    path.write_text(yaml.safe_dump({"name": "clf", "run": "true", "resources": {
        "accelerators": "V100:1", "use_spot": True, "infra": "aws/us-east-1"}}))
    launcher = FakeLauncher()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    return job, launcher


def test_a_task_without_work_counts_its_steps_but_no_share_of_an_assumed_hour(
        store: PriceStore, tmp_path: Path) -> None:
    """A SkyPilot task that gives no work is priced on an assumed hour: the steps it
    reports are its own, not that hour's. They are shown as steps, never as a share, and
    what is left is not known (no total, nothing left counted)."""
    from costsched.service.views import status_document

    job, launcher = launch_task_without_work(store, tmp_path)
    now = datetime.now(timezone.utc)
    store.jobs.record_step(job.id, 2700, at=now)
    [shown] = service.status(store, launcher, job.id, reconcile_first=False)
    assert shown.record.steps_total is None
    assert shown.steps_left is None and not shown.reported and shown.progress is None
    assert shown.step == 2700 and cli_jobs._progress(shown) == "step 2,700"
    assert steps_left(store, _running(store, job.id), now) is None
    [doc] = status_document([shown])
    assert doc["step"] == 2700 and doc["progress"] is None and doc["steps_left"] is None

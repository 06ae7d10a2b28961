"""A job whose work is hours on a reference GPU (no model, no throughputs) and whose script
reports its own steps: those steps are no share of the hours its plan priced (stored in
the reference GPU's seconds), so its progress is the step it reports and its measured
pace, never a percentage; a line names the key that gives one (`steps:`). Its rest is
priced as all of its hours, as before its first step (never from a mix of units).
In-memory launcher, SQLite store."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched.cli import jobs as cli_jobs
from costsched.service import jobs as service
from costsched.service.jobs.runs import _running, steps_left
from costsched.service.jobs.steps import _step_news
from costsched.service.speeds import short_work
from costsched.service.views import status_document
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices


@pytest.fixture()
def launched(store: PriceStore, tmp_path: Path) -> tuple[PriceStore, FakeLauncher, int]:
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    spec = {"name": "fit", "hours": 1, "reference_gpu": "V100", "run": "true",
            "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
            "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}
    path = tmp_path / "fit.yaml"
    path.write_text(yaml.safe_dump(spec))
    launcher = FakeLauncher()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    return store, launcher, job.id


def test_its_steps_are_no_share_of_its_hours(launched) -> None:
    store, launcher, job = launched
    now = datetime.now(timezone.utc).replace(microsecond=0)  # readings keep whole seconds
    store.jobs.record_step(job, 2700, at=now - timedelta(seconds=100))
    store.jobs.record_step(job, 2900, at=now)  # 200 steps in 100 s: 2 steps/s
    [shown] = service.status(store, launcher, job, reconcile_first=False)
    assert shown.record.steps_total == 3600  # the hour its plan priced, in V100 seconds
    assert shown.progress is None and shown.progress_source is None
    assert cli_jobs._progress(shown) == "step 2,900"
    assert shown.pace == pytest.approx(2.0)
    # What the decider prices: all of its hour, as before its first step.
    assert shown.steps_left == 3600
    assert steps_left(store, _running(store, job), now) == 3600
    [doc] = status_document([shown])
    assert doc["steps_total"] is None and doc["steps_left"] is None
    assert doc["progress"] is None and doc["step"] == 2900
    assert doc["steps_per_second"] == pytest.approx(2.0)
    assert "`steps: N`" in doc["progress_note"]
    line = short_work(shown)
    assert line.startswith("step 2,900 at 2 steps/s measured: its work is given as 1 h "
                           "of work on 1xV100, not in its own steps")
    assert "`steps: N`" in line and "fit.yaml" in line


def test_a_step_past_its_hours_in_seconds_is_kept_as_reported(launched) -> None:
    store, _, job = launched
    record = store.jobs.get(job)
    assert _step_news(record, 5000) == 5000  # never cut to 3,600 (V100 seconds)


def test_a_job_of_steps_still_shows_its_share(store: PriceStore, tmp_path: Path) -> None:
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    path = tmp_path / "steps.yaml"
    path.write_text(yaml.safe_dump({
        "name": "steps", "throughputs": {"V100": 1.0}, "steps": 4000, "run": "true",
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"]}}))
    launcher = FakeLauncher()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    store.jobs.record_step(job.id, 1000, at=datetime.now(timezone.utc))
    [shown] = service.status(store, launcher, job.id, reconcile_first=False)
    assert cli_jobs._progress(shown) == "25%" and shown.steps_left == 3000
    [doc] = status_document([shown])
    assert doc["steps_total"] == 4000 and doc["progress_note"] is None
    assert short_work(shown) == ""


def test_once_succeeded_its_progress_is_still_its_step(launched) -> None:
    """Succeeded, it did all its work, yet its steps are still no share of its hours:
    `step 2,900` (as a job with no work given keeps), never 100% beside its own note
    'never a share', on status, `--json` and (same document) the dashboard."""
    store, launcher, job = launched
    now = datetime.now(timezone.utc).replace(microsecond=0)  # readings keep whole seconds
    store.jobs.record_step(job, 2700, at=now - timedelta(seconds=100))
    store.jobs.record_step(job, 2900, at=now)
    store.jobs.transition(job, "succeeded", at=now)
    [shown] = service.status(store, launcher, job, reconcile_first=False)
    assert shown.progress is None
    assert cli_jobs._progress(shown) == "step 2,900"
    [doc] = status_document([shown])
    assert doc["progress"] is None and doc["step"] == 2900
    assert "never a share" in doc["progress_note"]


def test_a_job_of_steps_that_succeeded_reads_all_done(store: PriceStore,
                                                      tmp_path: Path) -> None:
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    path = tmp_path / "steps.yaml"
    path.write_text(yaml.safe_dump({
        "name": "steps", "throughputs": {"V100": 1.0}, "steps": 4000, "run": "true",
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"]}}))
    launcher = FakeLauncher()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    store.jobs.record_step(job.id, 4000, at=datetime.now(timezone.utc))
    store.jobs.transition(job.id, "succeeded", at=datetime.now(timezone.utc))
    [shown] = service.status(store, launcher, job.id, reconcile_first=False)
    assert shown.progress == 1.0 and cli_jobs._progress(shown) == "100%"

"""A job's setup (boot, installs, data loading before its first step) is not slow training:
its measured speed counts only the time from its first reported step on each placement,
and until it has trained long enough to judge, `status` says it is measuring (no "2.69x
slower" a minute after launch). In-memory launcher, SQLite store, readings at set times."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched.cli import jobs as cli_jobs
from costsched.measured import MEASURING, MIN_TRAINING_SECONDS
from costsched.report import build
from costsched.service import jobs as service
from costsched.service.speeds import checks, status_flags
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices
from tests.costsched.service.test_progress_known import launch_task_without_work

DECLARED = 10.0  # steps/s, and what the job makes once it trains


@pytest.fixture()
def launched(store: PriceStore, tmp_path: Path) -> tuple[PriceStore, FakeLauncher, int]:
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    path = tmp_path / "setup.yaml"
    path.write_text(yaml.safe_dump({
        # A model named: a speed flagged would be kept with costsched's measurements.
        "name": "setup-heavy", "model": "Transformer (batch size 256)",
        "throughputs": {"V100": DECLARED}, "steps": 100_000,
        "run": "true", "constraints": {"regions": ["us-east-1"], "markets": ["spot"]}}))
    launcher = FakeLauncher()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    return store, launcher, job.id


def started(store: PriceStore, job: int) -> datetime:
    return store.jobs.placements(job)["start_at"].iloc[0].to_pydatetime()


def flags(store: PriceStore, launcher: FakeLauncher, job: int, at: datetime) -> dict:
    shown = service.status(store, launcher, job, at=at, reconcile_first=False)
    return status_flags(shown)


def test_ten_minutes_of_setup_do_not_read_as_slow_training(launched) -> None:
    store, launcher, job = launched
    t0 = started(store, job)
    # Setup takes 10 minutes; then 10 steps/s, read every 30 s.
    for seconds, step in ((600, 5), (630, 305), (660, 605)):
        store.jobs.record_step(job, step, at=t0 + timedelta(seconds=seconds))
    placed = store.jobs.placements(job)
    [found] = checks(store.jobs.records([job]), placed,
                     readings=store.jobs.readings([job])).values()
    assert found.measured_sps == pytest.approx(DECLARED)  # 600 steps in 60 s of training
    assert not found.flagged
    # Counted from the launch, the same steps would read about 11x slower.
    whole = checks(store.jobs.records([job]), placed, readings=None)[job]
    assert whole.flagged and 1 / whole.ratio > 10
    assert flags(store, launcher, job, t0 + timedelta(seconds=660)) == {}


def test_until_it_has_trained_long_enough_it_is_measuring(
        launched, capsys: pytest.CaptureFixture[str]) -> None:
    store, launcher, job = launched
    t0 = started(store, job)
    store.jobs.record_step(job, 3, at=t0 + timedelta(seconds=600))  # its first step
    store.jobs.record_step(job, 40, at=t0 + timedelta(seconds=604))
    assert MIN_TRAINING_SECONDS > 4
    assert flags(store, launcher, job, t0 + timedelta(seconds=604)) == {job: MEASURING}
    shown = service.status(store, launcher, job, at=t0 + timedelta(seconds=604),
                           reconcile_first=False)
    cli_jobs._print_status(shown, json_out=False)
    assert f"job {job}: throughput: {MEASURING}" in " ".join(capsys.readouterr().out.split())
    cli_jobs._print_status(shown, json_out=True)
    assert json.loads(capsys.readouterr().out)[0]["throughput_flag"] == MEASURING
    report = build(store, now=t0 + timedelta(seconds=604))
    [row] = report.speeds.to_dict("records")
    assert row["flag"].endswith(MEASURING) and not row["flagged"]
    # Nothing is learned from a speed still measured.
    assert service.reconcile(store, launcher) is not None
    assert store.measured_throughputs.rows().empty


def test_a_task_without_work_is_not_said_to_be_measured_against_a_plan(
        store: PriceStore, tmp_path: Path) -> None:
    """A task that gives no work has no plan's speed to be judged against: its first
    steps bring no 'measuring' line (nothing will ever be judged)."""
    job, launcher = launch_task_without_work(store, tmp_path)
    t0 = started(store, job.id)
    store.jobs.record_step(job.id, 3, at=t0 + timedelta(seconds=600))
    store.jobs.record_step(job.id, 40, at=t0 + timedelta(seconds=604))
    assert flags(store, launcher, job.id, t0 + timedelta(seconds=604)) == {}


def test_a_job_of_seconds_is_too_short_to_read_slow_but_not_to_read_fast(launched) -> None:
    """Ended after 8 s, 5 of them setup, with one reading: over all it ran it made 20 steps
    in 8 s (2.5 steps/s against the 10 declared). That bounds its speed from below only:
    not "4x slower" (nothing flagged, nothing learned), but too short to judge."""
    from costsched.measured import TOO_SHORT

    store, launcher, job = launched
    t0 = started(store, job)
    store.jobs.record_step(job, 20, at=t0 + timedelta(seconds=8))
    store.jobs.end_placement(job, t0 + timedelta(seconds=8))
    store.jobs.transition(job, "succeeded", at=t0 + timedelta(seconds=8))
    placed = store.jobs.placements(job)
    assert checks(store.jobs.records([job]), placed,
                  readings=store.jobs.readings([job])) == {}
    assert flags(store, launcher, job, t0 + timedelta(seconds=9)) == {}
    [row] = build(store, now=t0 + timedelta(seconds=9)).speeds.to_dict("records")
    assert row["flag"] == f"job {job} (setup-heavy): {TOO_SHORT}" and not row["flagged"]
    assert store.measured_throughputs.rows().empty


@pytest.mark.parametrize("look", ["status", "reconcile"])
def test_the_wait_until_a_preemption_is_seen_is_not_slow_training(launched, look: str) -> None:
    """10 steps/s read at 630 s (step 305); preempted at step 405, seen gone at 700 s: its
    reading stays at 630 s, so its speed is 10 steps/s, not 400 steps over 100 s (4 steps/s,
    "2.5x slower"), whether `status` or the watcher's pass sees it gone."""
    from dataclasses import replace

    store, launcher, job = launched
    t0 = started(store, job)
    store.jobs.record_step(job, 5, at=t0 + timedelta(seconds=600))
    store.jobs.record_step(job, 305, at=t0 + timedelta(seconds=630))
    [first] = list(launcher.states)
    launcher.states[first] = replace(launcher.states[first], state="preempted", step=405,
                                     checkpoint_step=300)
    seen = t0 + timedelta(seconds=700)
    if look == "status":
        service.status(store, launcher, job, at=seen, reconcile_first=False)
    else:
        service.reconcile(store, launcher, at=seen)
    [read] = store.jobs.readings([job]).head(1).itertuples()
    assert (read.last_step, read.last_at) == (305.0, t0 + timedelta(seconds=630))
    # A recovery (the watcher's pass) stands the job at the step its next instance resumes
    # from, its checkpoint's; `status` here only looks, and keeps the step read.
    assert store.jobs.get(job).steps_done == (405 if look == "status" else 300)
    found = checks(store.jobs.records([job]), store.jobs.placements(job),
                   readings=store.jobs.readings([job]))
    assert found[job].measured_sps == pytest.approx(DECLARED) and not found[job].flagged

"""Estimate versus actual of a job stopped and started again: what it adds up over the
job's placements (their hours and cost, the steps it made on each) leaves the stopped
interval out, and compares the steps the job made up to its stop, not only those read
before it (the job checkpoints on its stop, after the last look), at the pace read before
its stop (when the job reached its last step, some time after the stop was asked for, is
not known). In-memory launcher, SQLite store, times set."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from costsched.report.data import build
from costsched.service import jobs as service
from costsched.store import PriceStore
from tests.costsched.service.test_jobs import set_prices
from tests.costsched.service.test_stopped_step import Ending

STEPS = 3600  # at 0.5 steps/s: 2 hours of training planned
T0 = [datetime.now(timezone.utc)]  # when the job's launch placed it (set at its launch)


def h(hours: float) -> datetime:
    """`hours` after the launch placed the job (the times after it are set, not waited)."""
    return T0[0] + timedelta(hours=hours)


def estimate(store: PriceStore, at: datetime) -> dict:
    [row] = build(store, until=at, now=at).rows["estimates"]
    return row


@pytest.fixture()
def stopped(store: PriceStore, tmp_path: Path) -> tuple[PriceStore, Ending, int, dict]:
    """A job launched at 0 h that trained from 0.1 h (step 0) to 0.5 h (step 720, the
    last look), ran on to step 900 by its stop at 0.6 h and checkpointed there."""
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    path = tmp_path / "fit.yaml"
    path.write_text(yaml.safe_dump({
        "name": "fit", "throughputs": {"V100": 0.5}, "steps": STEPS, "run": "true",
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"]},
        "checkpoint": {"interval_minutes": 30, "size_gb": 1.0}}))
    launcher = Ending()
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    T0[0] = store.jobs.placements(job.id)["start_at"].iloc[0].to_pydatetime()
    store.jobs.record_step(job.id, 1, at=h(0.1))
    store.jobs.record_step(job.id, 720, at=h(0.5))
    launcher.last = (900, 900)
    service.stop(store, launcher, job.id, at=h(0.6))
    [plan] = store.jobs.predictions([job.id]).to_dict("records")
    return store, launcher, job.id, plan


def test_a_stopped_job_is_compared_on_the_steps_it_made_up_to_its_stop(stopped) -> None:
    store, _, job, plan = stopped
    row = estimate(store, h(1.5))  # stopped since 0.6 h
    assert row["done"] == pytest.approx(900 / STEPS)
    assert row["usd"] == pytest.approx(0.6)  # its one placement: 0 to 0.6 h at $1/h
    # The plan's dollars count its first start (10 min boot + 5 min warm-up at $1/h), paid
    # whole at the start; its work's by the share done.
    start = plan["expected_usd"] - plan["expected_hours"] * plan["usd_per_hour"]
    assert start == pytest.approx(0.25)
    assert row["expected_usd"] == pytest.approx(start + (plan["expected_usd"] - start)
                                                * 900 / STEPS)
    # The work done (900 steps) at the pace measured from its first step read (step 1 at
    # 0.1 h) to its last look (step 720 at 0.5 h): 719 steps in 0.4 h. The step its stop
    # reached is done, but when it reached it is not known: no pace is read to it.
    assert row["training_hours"] == pytest.approx(0.4 * 900 / 719)
    assert row["expected_training_hours"] == pytest.approx(plan["expected_hours"] * 900 / STEPS)


def test_a_job_started_again_adds_up_both_placements_and_not_the_stop(stopped) -> None:
    store, launcher, job, plan = stopped
    service.start(store, launcher, job, at=h(2.0))  # stopped for 1.4 h
    store.jobs.record_step(job, 900, at=h(2.1))  # it resumed from its checkpoint
    store.jobs.record_step(job, 1620, at=h(2.5))
    row = estimate(store, h(2.5))
    assert row["state"] == "running" and row["done"] == pytest.approx(1620 / STEPS)
    assert row["usd"] == pytest.approx(0.6 + 0.5)  # 0-0.6 h and 2.0-2.5 h, not between
    start = 0.25  # its first start, whole (a start after a stop is billed as it ran)
    assert row["expected_usd"] == pytest.approx(start + (plan["expected_usd"] - start)
                                                * 1620 / STEPS)
    # 1,439 steps read over 0.4 + 0.4 h of training, not the 1.4 h stopped between.
    assert row["training_hours"] == pytest.approx((0.4 + 0.4) * 1620 / (719 + 720))
    assert row["expected_training_hours"] == pytest.approx(
        plan["expected_hours"] * 1620 / STEPS)
    assert row["preemptions"] == 0  # a start is no recovery

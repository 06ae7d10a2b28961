"""A move the deadline decider makes of a running job is priced with the work it loses as
the price-driven decider prices it: the steps since the checkpoint its instance reports."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pandas as pd
import pytest
import yaml

from costsched.jobspec import parse, resolve
from costsched.optimize.decision import Overheads
from costsched.service.jobs.checkpoint_seen import Reported
from costsched.service.jobs.decider import JobNow, decider_for, market_at
from costsched.store import PriceStore
from costsched.throughput import ThroughputTable
from tests.costsched.service.test_deadline_jobs import WORK_HOURS, deadline_spec
from tests.costsched.service.test_decider import NOW, key, store  # noqa: F401
from tests.costsched.service.test_jobs import offer

PLAN_STEPS_PER_SECOND = 0.01  # the spec's, on a V100


def _moved(store: PriceStore, tmp_path: Path,  # noqa: F811
           reported: Reported | None):  # noqa: ANN202
    """A spot-anywhere job running in zone c ($2.50/h) since 6 h ago; zone a ($1.00/h)
    is cheaper: the decider moves it there."""
    at = NOW - timedelta(hours=1)
    store.ingest(pd.DataFrame([offer(z, p, at) for z, p in
                               {"us-east-1a": 1.0, "us-east-1b": 2.0, "us-east-1c": 2.5}.items()]))
    path = deadline_spec(tmp_path, "due", WORK_HOURS + 10)
    spec = yaml.safe_load(path.read_text())
    start = NOW - timedelta(hours=6)
    job_id = store.jobs.create("due", {"spec": spec, "source": str(path), "launcher": "memory"},
                               spec["steps"], at=start, policy="spot-anywhere")
    store.jobs.transition(job_id, "running", at=start)
    store.jobs.place(job_id, key("us-east-1c"), gpu_model="V100", gpu_count=1, at=start,
                     usd_per_hour=2.5, reason="launch", instance="m-1")
    resolved = resolve(parse(spec, str(path)), ThroughputTable(), NOW)
    job = JobNow(resolved, start, "spot-anywhere", "us-east-1", key("us-east-1c"),
                 resolved.job.steps - 720, job_id=job_id, reported=reported)
    moved = decider_for("spot-anywhere").decide(job, market_at(store, NOW), NOW)
    assert moved.moves and moved.choice == key("us-east-1a") and moved.move is not None
    return moved


def test_a_deadline_job_s_move_loses_the_steps_since_its_instance_s_checkpoint(
        store: PriceStore, tmp_path: Path) -> None:  # noqa: F811
    moved = _moved(store, tmp_path, Reported(720, 708))
    hours = 12 / PLAN_STEPS_PER_SECOND / 3600
    assert moved.move.lost_work_usd == pytest.approx(hours * 1.0)
    assert moved.reason.endswith("; lost work: up to 12 steps since its checkpoint at step 708 "
                                 "(none if the job checkpoints when stopped): "
                                 "20 min at its plan's 0.01 steps/s")


def test_without_a_checkpoint_step_the_assumption_prices_it_as_before(
        store: PriceStore, tmp_path: Path) -> None:  # noqa: F811
    moved = _moved(store, tmp_path, None)
    assert moved.move.lost_work_usd == pytest.approx(Overheads().lost_work_hours(0.5) * 1.0)
    assert "lost work:" not in moved.reason

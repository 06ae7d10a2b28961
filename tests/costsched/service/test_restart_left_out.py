"""A launcher that boots no instance (the local one) leaves a restart's instance boot out
of every decision, as it leaves out a job's start: a move's restart and a recovery's are
priced without boot, warm-up or copy, through the one resolution the running jobs'
decisions read (`service.resolve`), whatever restart model the decider is handed; a
cloud's launcher prices the configured restart, and the decision says it is assumed and
which settings give it."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from costsched.jobspec import ResolvedJob, parse
from costsched.optimize.decision import Overheads, expected_hours
from costsched.service.jobs.decider import JobNow, decider_for, market_at, planned
from costsched.service.resolve import resolve
from costsched.store import PriceStore
from costsched.throughput import ThroughputTable
from tests.costsched.service.test_deadline_jobs import WORK_HOURS, deadline_spec
from tests.real_jobs import offer, write_spec

NOW = datetime(2026, 3, 2, 12, tzinfo=timezone.utc)
LEFT_OUT = ("restart left out: the local launcher boots no instance, and the job's setup "
            "is in its billed hours")
# 10 min boot + 5 min warm-up + the 1 GB checkpoint's copy at 1 Gbit/s (8 s).
CLOUD_RESTART_H = 15 / 60 + 8 / 3600


@pytest.fixture()
def store(tmp_path: Path):  # noqa: ANN201
    opened = PriceStore(str(tmp_path / "store.sqlite"))
    at = NOW - timedelta(hours=1)
    opened.ingest(pd.DataFrame([offer(z, p, at) for z, p in
                                {"us-east-1a": 1.0, "us-east-1b": 2.0,
                                 "us-east-1c": 2.5}.items()]))
    yield opened
    opened.dispose()


def key(zone: str) -> tuple:
    return ("aws", "us-east-1", zone, "p3.2xlarge", "spot", "linux")


def resolved(path: Path, launcher: str) -> ResolvedJob:
    spec = parse(yaml.safe_load(path.read_text()), str(path))
    return resolve(spec, ThroughputTable(), NOW, source=str(path), launcher=launcher)


def test_the_restart_model_of_a_job_on_the_local_launcher_boots_nothing(
        tmp_path: Path) -> None:
    path = write_spec(tmp_path)
    local, cloud = resolved(path, "local"), resolved(path, "gcp")
    # As the decider is handed it: the job's own, or migrate's configured model over it.
    for given in (None, Overheads()):
        assert local.overheads(given).restart_hours(1.0) == 0
        assert cloud.overheads(given).restart_hours(1.0) == pytest.approx(CLOUD_RESTART_H)
        # What really happens there stands: the work lost, the egress, the overlap.
        for item in ("lost_work_hours", "egress_gb"):
            assert getattr(local.overheads(given), item)(1.0) == \
                getattr(cloud.overheads(given), item)(1.0)
    assert local.restart_hours == local.start_hours == 0
    assert cloud.restart_hours == pytest.approx(CLOUD_RESTART_H)
    assert local.restart_said() == LEFT_OUT
    assert cloud.restart_said().startswith("restart 0.2522 h: 10 min boot and set-up "
                                           "([migration] restart_minutes) + 5 min warm-up")


@pytest.mark.parametrize("kind", ["price", "deadline"])
@pytest.mark.parametrize("given", [None, Overheads()])
def test_a_move_on_the_local_launcher_pays_no_boot(store: PriceStore, tmp_path: Path,
                                                     kind: str, given: Overheads | None) -> None:
    path = (write_spec(tmp_path) if kind == "price" else
            deadline_spec(tmp_path, "due", WORK_HOURS + 10))
    policy = "dynamic-aware" if kind == "price" else "spot-anywhere"
    decider, market = decider_for(policy, overheads=given), market_at(store, NOW)
    moves = {}
    for launcher in ("local", "gcp"):
        job = resolved(path, launcher)
        d = decider.decide(JobNow(job, NOW, policy, "us-east-1", key("us-east-1c"),
                                  job.job.steps), market, NOW)
        assert d.moves and d.choice == key("us-east-1a") and d.move is not None, d.reason
        moves[launcher] = d
    local, cloud = moves["local"], moves["gcp"]
    assert float(local.move.restart_usd) == 0
    assert float(cloud.move.restart_usd) == pytest.approx(CLOUD_RESTART_H * 1.0)
    assert float(local.move.lost_work_usd) == pytest.approx(float(cloud.move.lost_work_usd))
    assert float(local.move.egress_usd) == float(cloud.move.egress_usd)
    assert LEFT_OUT in local.reason and "restart assumed" not in local.reason
    assert ("restart assumed: 0.2522 h at $1.0000/h, 10 min boot and set-up ([migration] "
            "restart_minutes) + 5 min warm-up ([migration] warmup_minutes) + 0.1333 min to copy "
            "the 1 GB checkpoint at 1 Gbit/s ([migration] transfer_gbps)") in cloud.reason, \
        cloud.reason
    assert "left out" not in cloud.reason


def test_a_recovery_on_the_local_launcher_prices_its_preemptions_without_a_boot(
        store: PriceStore, tmp_path: Path) -> None:
    path = write_spec(tmp_path)
    market = market_at(store, NOW)
    for launcher, restart, start in (("local", 0.0, 0.0),
                                     ("gcp", CLOUD_RESTART_H, CLOUD_RESTART_H)):
        job = resolved(path, launcher)
        # A recovery: placed again from its checkpoint, with a stored id.
        rest = JobNow(job, NOW, "dynamic-aware", "us-east-1", None, job.job.steps,
                      lost=frozenset({key("us-east-1c")}), job_id=1).rest()
        assert rest.resumes and rest.restart_hours == pytest.approx(restart)
        ranked = planned(rest, market, NOW).ranked
        row = ranked[ranked["zone"] == "us-east-1a"].iloc[0]
        assert float(row["preemptions_per_hour"]) > 0  # its restarts are priced at all
        want = expected_hours(float(row["work_hours"]), float(row["preemptions_per_hour"]),
                              job.checkpoint_hours, restart) + start
        assert float(row["expected_hours"]) == pytest.approx(float(np.asarray(want)))

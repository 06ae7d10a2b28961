"""A task that gives no work is planned on an assumed hour, and stays a job whose total is
not known once it runs: its record has no total (None, not the assumed hour's 3,600
"steps"), `status` (text and JSON) shows no share and no steps left, its measured speed is
set beside no plan (its own steps/s against a relative speed would be no comparison), the
report gives it no estimate, and the decider, whatever it would save elsewhere on the
assumed hour, keeps it where it is: its rest cannot be priced, nor its budget forecast."""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest

from costsched.measured import sps
from costsched.report import build
from costsched.service import jobs as service
from costsched.service import views
from costsched.service.jobs.budgets import budgets_now
from costsched.store import PriceStore
from costsched.work import NOT_KNOWN
from launchers import make_launcher
from tests.costsched.service.test_rest_priced import instances, store  # noqa: F401

HERE = ("aws", "us-east-1", "", "p3.2xlarge", "on_demand", "linux")
SHORT = f"{NOT_KNOWN} and the rest cannot be priced"


def running_task_without_work(store: PriceStore, instances: Path, now: datetime) -> int:  # noqa: F811
    """A SkyPilot task that gives no work, stored as a launch stores it (its assumed hour
    of V100 work as 3,600 steps), running two hours on demand at $3/h where the same V100
    costs $0.30/h in another region; it reported its own steps 1,000 then 40,000 (10.8
    steps/s, against the relative 1.0 its plan's hour assumed)."""
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region=region, zone="", instance_type="p3.2xlarge", market="on_demand",
        os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=usd, effective_at=now - timedelta(hours=10), source="test")
        for region, usd in (("us-east-1", 3.0), ("us-west-2", 0.3))]))
    spec = {"spec": {"name": "plain", "run": "python train.py", "hours": 1.0,
                     "reference_gpu": "V100",
                     "task": {"work_assumed": True, "sky": True},
                     "constraints": {"budget": 500.0, "markets": ["on_demand"]}},
            "launcher": "local", "source": "plain.yaml"}
    job = store.jobs.create("plain", spec, 3600, at=now - timedelta(hours=3))
    store.jobs.place(job, HERE, gpu_model="V100", gpu_count=1, at=now - timedelta(hours=2),
                     usd_per_hour=3.0, reason="launch", instance=f"{job}-1", keep_open=True)
    store.jobs.transition(job, "running", at=now - timedelta(hours=2))
    store.jobs.predict(job, {  # as a launch keeps its plan: the L4-like "an estimate" basis
        "model": "plain", "cloud": "aws", "region": "us-east-1", "zone": "",
        "instance_type": "p3.2xlarge", "market": "on_demand", "gpu_model": "V100",
        "gpu_count": 1, "usd_per_hour": 3.0, "steps": 3600, "steps_per_second": 1.0,
        "throughput_source": "an estimate", "expected_hours": 1.0, "expected_usd": 3.0,
        "expected_preemptions": 0.0}, at=now - timedelta(hours=2))
    store.jobs.record_steps({job: 1_000}, at=now - timedelta(hours=1.5))
    store.jobs.record_steps({job: 40_000}, at=now - timedelta(hours=0.5))
    folder = instances / f"{job}-1"
    folder.mkdir(parents=True)
    (folder / "instance.json").write_text(json.dumps({
        "id": f"{job}-1", "job_id": job, "attempt": 1, "offering_key": list(HERE),
        "pid": None, "launched_at": (now - timedelta(hours=2)).isoformat()}))
    return job


def test_a_running_job_without_work_has_no_total_no_share_and_is_not_moved(
        store: PriceStore, instances: Path, capsys: pytest.CaptureFixture) -> None:  # noqa: F811
    now = datetime.now(timezone.utc).replace(microsecond=0)
    job = running_task_without_work(store, instances, now)
    launcher = make_launcher("local")
    assert store.jobs.get(job).steps_total is None

    [advice] = service.migrate(store, launcher, job, dry_run=True, at=now)
    assert not advice.decision.moves and math.isnan(advice.stay_usd)
    assert advice.reason == f"stay: {SHORT}"
    [budget] = budgets_now(store, at=now)
    assert math.isnan(budget.forecast_usd)

    shown = service.status(store, launcher, job, at=now, reconcile_first=False)
    doc = json.loads(json.dumps(views.status_document(shown, [], budgets_now(store, at=now)),
                                default=str))
    [one] = doc["jobs"]
    assert (one["steps_total"], one["steps_left"], one["progress"]) == (None, None, None)
    assert one["step"] == 40_000 and one["rest"]["work_short"] == SHORT
    assert one["throughput_flag"] is None  # its steps/s against no plan's
    from costsched.cli import status_lines

    capsys.readouterr()
    status_lines.print_status(shown, json_out=False)
    out = " ".join(capsys.readouterr().out.split())
    assert "step 40,000" in out and (  # said once, with what gives the total
        f"job {job}: the work is not given in plain.yaml, so its total is not known and the "
        "rest cannot be priced; a total needs the work:") in out
    # Its measured speed, as the report's, against no plan's
    assert f"job {job}: throughput: measured {sps(one['steps_per_second'])} steps/s" in out
    assert "its plan used" not in out

    report = build(store, now=now)
    assert report.estimates.empty  # no share done, no expected hours of an assumed hour
    [speed] = report.speeds.to_dict("records")
    assert speed["measured_sps"] > 10 and math.isnan(speed["planned_sps"])
    assert report.flags() == [f"job {job} (plain): {NOT_KNOWN}. Its steps/s are its own, "
                              "with no plan's beside them, and its run has no estimate"]
    assert not speed["flagged"] and speed["planned_from"] == "an assumed hour of work"


def test_a_job_without_work_that_succeeded_shows_its_step_and_no_share(
        store: PriceStore, instances: Path) -> None:  # noqa: F811
    """Succeeded: it did all it had to, but a total not known is no share of it: no 100%,
    the step it reached."""
    now = datetime.now(timezone.utc).replace(microsecond=0)
    job = running_task_without_work(store, instances, now)
    store.jobs.end_placement(job, now)
    store.jobs.transition(job, "succeeded", at=now)
    shown = service.status(store, make_launcher("local"), job, at=now, reconcile_first=False)
    [one] = json.loads(json.dumps(views.status_document(shown, [], []), default=str))["jobs"]
    assert (one["steps_total"], one["steps_left"], one["progress"]) == (None, None, None)
    assert views.progress_words(shown[0].progress, shown[0].progress_source,
                                step=shown[0].step) == "step 40,000"

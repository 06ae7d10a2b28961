"""The rest of a running job is priced at the speed it runs at: its measured speed where
one is trusted, else its plan's, the same figure wherever the rest is priced (the decider's
stay and move costs, a budget's forecast, `status --json`); a job that reported more steps
than it declares has a rest that cannot be priced, never $0."""

from __future__ import annotations

import atexit
import json
import math
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest

from costsched.service import jobs as service
from costsched.service import views
from costsched.service.jobs.budgets import budgets_now
from costsched.service.jobs.runs import _running
from costsched.store import PriceStore
from launchers import make_launcher
from launchers.procfs import proc_stat

OD = ("aws", "us-east-1", "", "p3.2xlarge", "on_demand", "linux")
PLANNED = 4.0  # steps/s the job file declares on a V100
MEASURED = 1.0  # what it makes: 3,600 steps in the hour between its readings
PRICE = 3.0  # $/h on demand: no preemption, so the decision model's cost is hours x price
STEPS = 100_000
DONE = 4_600


def credited() -> float:
    """What a budget's rest leaves out of the decider's: the job's last reading is half an
    hour old, so one watch interval of training, at PRICE."""
    from costsched.config import effective

    return effective().daemon.watch_seconds / 3600 * PRICE


@pytest.fixture()
def store(tmp_path: Path):  # noqa: ANN201
    opened = PriceStore(str(tmp_path / "store.sqlite"))
    yield opened
    opened.dispose()


@pytest.fixture()
def instances(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "instances"
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(folder))
    return folder


def slow_job(store: PriceStore, instances: Path, now: datetime, *, steps: float = STEPS,
             done: float = DONE, model: str | None = None, name: str = "slow") -> int:
    """A job of the local launcher on a V100 on demand for two hours, declared at 4 steps/s
    and measured at 1 (step 1,000 at -1.5 h, step 4,600 at -0.5 h), with a budget of $500
    (so its budget forecasts the rest); its file names `model` (None: none)."""
    store.ingest(pd.DataFrame([dict(  # (again for a second job: the same price)
        cloud="aws", region="us-east-1", zone="", instance_type="p3.2xlarge",
        market="on_demand", os="linux", gpu_model="V100", gpu_count=1, vcpus=8,
        memory_gb=61.0, usd_per_hour=PRICE, effective_at=now - timedelta(hours=10),
        source="test")]))
    spec = {"spec": {"name": name, "throughputs": {"V100": PLANNED}, "steps": steps,
                     "constraints": {"budget": 500.0, "markets": ["on_demand"],
                                     "regions": ["us-east-1"]},
                     **({"model": model} if model else {})},
            "launcher": "local", "source": "test"}
    job = store.jobs.create(name, spec, steps, at=now - timedelta(hours=3))
    store.jobs.place(job, OD, gpu_model="V100", gpu_count=1, at=now - timedelta(hours=2),
                     usd_per_hour=PRICE, reason="launch", instance=f"{job}-1", keep_open=True)
    store.jobs.transition(job, "running", at=now - timedelta(hours=2))
    store.jobs.record_steps({job: 1_000}, at=now - timedelta(hours=1.5))
    store.jobs.record_steps({job: done}, at=now - timedelta(hours=0.5))
    folder = instances / f"{job}-1"
    folder.mkdir(parents=True)
    agent = _agent()  # the instance runs: its job is read running, not failing
    (folder / "instance.json").write_text(json.dumps({  # an instance it knows of
        "id": f"{job}-1", "job_id": job, "attempt": 1, "offering_key": list(OD),
        "pid": agent.pid, "start_time": proc_stat(agent.pid).start_time,
        "launched_at": (now - timedelta(hours=2)).isoformat()}))
    return job


def _agent() -> subprocess.Popen:
    """A process standing in for the instance's agent, in a group of its own (as the local
    launcher starts one), ended when the tests end."""
    agent = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"],
                             start_new_session=True)
    atexit.register(agent.kill)
    return agent


def test_the_rest_is_priced_at_the_measured_speed_everywhere(store: PriceStore,
                                                             instances: Path) -> None:
    """4x slower than planned: the decider's stay cost (`migrate --dry-run`), the budget's
    forecast and `status --json` price the rest at 1 step/s (95,400 steps left: 26.5 h at
    $3/h, $79.50), not at the plan's 4 ($19.875); a move elsewhere is priced at the same
    pace (its cost against staying is what the plan's speeds make it)."""
    now = datetime.now(timezone.utc).replace(microsecond=0)
    job = slow_job(store, instances, now)
    launcher = make_launcher("local")
    rest = (STEPS - DONE) / MEASURED / 3600 * PRICE
    assert rest == pytest.approx(79.5)

    [advice] = service.migrate(store, launcher, job, dry_run=True, at=now)
    assert advice.stay_usd == pytest.approx(rest, rel=1e-9)
    assert "$79.50 to finish here" in advice.reason
    [budget] = budgets_now(store, at=now)
    # The budget's rest is the same rest now: less the time since its step was read, which
    # its spend bills already (a watch interval at most: `own_budget.rest_now`).
    assert budget.forecast_usd - budget.spent_usd == pytest.approx(rest - credited(),
                                                                   rel=1e-9)
    assert budget.spent_usd == pytest.approx(2 * PRICE, rel=1e-9)

    shown = service.status(store, launcher, job, at=now, reconcile_first=False)
    doc = json.loads(json.dumps(views.status_document(shown, [], budgets_now(store, at=now)),
                                default=str))
    [shown_job] = doc["jobs"]
    assert shown_job["rest"] == {"steps_per_second": MEASURED, "source": "measured",
                                 "work_short": None}
    assert doc["budgets"][0]["forecast_usd"] == pytest.approx(
        shown_job["cost_usd"] + advice.stay_usd - credited(), rel=1e-9)

    # Elsewhere (an A10G from the catalog, cheaper on demand) at the same measured pace:
    # the table's ratio between the two GPUs times 1 step/s, never the plan's figure there.
    d = advice.decision
    assert d.moves and d.offering.gpu_model != "V100"
    table = _running(store, job).resolved.table
    ratio = (table.get("slow", d.offering.gpu_model, d.offering.gpu_count).steps_per_second
             / table.get("slow", "V100", 1).steps_per_second)
    there = (STEPS - DONE) / (MEASURED * ratio) / 3600 * d.usd_per_hour
    assert advice.move_usd - d.move.total == pytest.approx(there, rel=1e-9)


def test_a_job_past_its_declared_steps_has_a_rest_that_cannot_be_priced(
        store: PriceStore, instances: Path, capsys: pytest.CaptureFixture) -> None:
    """It declares 100 steps and reported 4,600: `status --json` says the declared work is
    short; the decider keeps it where it is with its rest unknown (never "$0 expected
    here"), and its budget's forecast is unknown rather than its spend alone."""
    now = datetime.now(timezone.utc).replace(microsecond=0)
    job = slow_job(store, instances, now, steps=100)
    launcher = make_launcher("local")
    short = ("reported 4,600 steps, more than the 100 declared (steps in test): the plan's "
             "hours and cost assumed 100; the rest cannot be priced")

    [advice] = service.migrate(store, launcher, job, dry_run=True, at=now)
    assert not advice.decision.moves and math.isnan(advice.stay_usd)
    assert advice.reason == f"stay: {short}"
    [budget] = budgets_now(store, at=now)
    assert math.isnan(budget.forecast_usd) and budget.spent_usd == pytest.approx(2 * PRICE)

    shown = service.status(store, launcher, job, at=now, reconcile_first=False)
    doc = json.loads(json.dumps(views.status_document(shown, [], budgets_now(store, at=now)),
                                default=str))
    [shown_job] = doc["jobs"]
    assert shown_job["state"] == "running" and shown_job["rest"]["work_short"] == short
    assert doc["budgets"][0]["forecast_usd"] is None  # unknown, not the spend alone
    advised = views.advice_document([advice], {})
    assert advised[0]["stay_usd"] is None
    # The text says it under the job, as the JSON does.
    from costsched.cli import status_lines

    capsys.readouterr()
    status_lines.print_status(shown, json_out=False)
    assert f"job {job}: {short}" in " ".join(capsys.readouterr().out.split())

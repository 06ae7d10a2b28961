"""A launch's budget line prices the offering the launch places the job on, as `plan`
prices it: one figure for the line, the refusal and the plan (the preemptions costsched's
own jobs met counted alike), and a hint that names the key the job's file has."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pandas as pd
import pytest
import yaml

from costsched.config import BudgetsConfig
from costsched.model import Offering
from costsched.service.jobs.budget_launch import launch_fits
from costsched.service.plan import plan
from costsched.store import PriceStore

AT = pd.Timestamp("2026-01-01T00:00:00Z").to_pydatetime()
KEY = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")


@pytest.fixture
def priced(db_path: Path) -> PriceStore:
    """One V100 spot price the jobs may use; the bundled catalog has cheaper ones that
    their region and cloud leave out."""
    store = PriceStore(f"sqlite:///{db_path}")
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=1.0, effective_at=AT, source="test")]))
    return store


def _job(tmp_path: Path, budget: float) -> Path:
    """10 hours of work on a V100 (about $10 at $1/h)."""
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump({
        "name": "ar", "run": "true", "throughputs": {"V100": 1}, "steps": 36_000,
        "checkpoint": {"size_gb": 1, "interval_minutes": 30},
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"], "budget": budget}}))
    return path


def _task(tmp_path: Path, budget: float) -> Path:
    """The same work as a SkyPilot task, its budget in its `costsched:` section."""
    path = tmp_path / "task.yaml"
    path.write_text(yaml.safe_dump({
        "name": "ar", "run": "true",
        "resources": {"accelerators": "V100:1", "infra": "aws/us-east-1", "use_spot": True},
        "costsched": {"throughputs": {"V100": 1}, "steps": 36_000, "budget": budget,
                      "checkpoint": {"size_gb": 1, "interval_minutes": 30}}}))
    return path


def _plan_cost(store: PriceStore, job: Path, at=AT) -> float:
    """The plan's figure for the job: its choice's expected cost, or the one its refusal
    prices (`budget $B is $S short: ..., costs $C`)."""
    result = plan(store, [job], at=at)
    [p] = result.jobs
    if p.best is not None:
        return float(p.best["expected_cost"])
    return float(re.search(r"costs \$([\d.,]+)(?: |$)", p.reason)[1].replace(",", ""))


def test_a_budget_too_small_for_every_allowed_offering_is_priced_as_the_plan_prices_it(
        tmp_path: Path, priced: PriceStore) -> None:
    """Its line was priced on the first offering of every one ranked, a cheaper one its
    region leaves out: 'fits', then the launch refused it."""
    job = _job(tmp_path, budget=5)
    [fit] = launch_fits(priced, [job], BudgetsConfig(), AT)
    assert fit.expected_usd == pytest.approx(_plan_cost(priced, job), abs=5e-3)
    assert fit.expected_usd > 10 and not fit.fits
    [roomy] = launch_fits(priced, [_job(tmp_path, budget=50)], BudgetsConfig(), AT)
    assert roomy.expected_usd == pytest.approx(fit.expected_usd) and roomy.fits


def test_the_launch_refuses_in_one_line_with_the_plans_figure(
        tmp_path: Path, priced: PriceStore, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    job = _job(tmp_path, budget=5)
    refused = cli("launch", job, "--launcher", "local", "--wait", "0")
    assert refused.exit_code != 0
    [line] = refused.output.splitlines()
    expected = f"${_plan_cost(priced, job, at=None):,.2f}"  # no start: none on this launcher
    assert line.startswith(f"error: job ar: expected {expected} ("), line
    assert ("; its start left out: the local launcher boots no instance, and the job's setup is "
            "in its billed hours), pessimistic ") in line, line
    assert re.search(r"\+ \$0\.01 for the first watch interval \(30 s at \$1\.0000/h\) "
                     r"against \$5\.00 left of its own budget: does not fit; raise "
                     rf"constraints\.budget in {re.escape(str(job))} to [0-9.]+$", line), line
    assert priced.jobs.list().empty


def test_a_tasks_hint_names_its_costsched_section_and_raising_it_there_launches(
        tmp_path: Path, priced: PriceStore, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    task = _task(tmp_path, budget=5)
    refused = cli("launch", task, "--launcher", "local", "--wait", "0")
    hint = re.search(r"raise (\S+) in (\S+) to ([0-9.]+)$", refused.output.strip())
    assert hint is not None, refused.output
    assert hint[1] == "costsched.budget" and hint[2] == str(task)
    section, key = hint[1].split(".")  # the hint applied: the key it names, to its amount
    doc = yaml.safe_load(task.read_text())
    doc[section][key] = float(hint[3])
    task.write_text(yaml.safe_dump(doc))
    launched = cli("launch", task, "--launcher", "local", "--wait", "0")
    assert launched.exit_code == 0, launched.output
    assert f"against ${float(hint[3]):,.2f} left of its own budget: fits" in " ".join(
        launched.output.split()), launched.output
    assert len(priced.jobs.list()) == 1


def test_a_plan_counts_the_preemptions_costsched_met_as_the_launch_does(
        tmp_path: Path, priced: PriceStore) -> None:
    """The launch's market counts its own jobs' preemptions; the plan counted none, and
    priced the same job lower than the launch's budget line did. A plan as of a time
    before those jobs counts none of them."""
    job = _job(tmp_path, budget=50)
    before = _plan_cost(priced, job, at=AT + timedelta(hours=1))
    ran = priced.jobs.create("earlier", {"spec": {}}, 100, at=AT + timedelta(days=1))
    start = AT + timedelta(days=1)
    priced.jobs.place(ran, KEY, gpu_model="V100", gpu_count=1, at=start, usd_per_hour=1.0,
                      reason="launch")
    for hour in range(1, 5):  # 4 preemptions in 4 hours
        priced.availability.record(Offering(*KEY[:5], gpu_model="V100", gpu_count=1),
                                   "preempted",
                                   at=start + timedelta(hours=hour))
    priced.jobs.end_placement(ran, start + timedelta(hours=4))
    later = AT + timedelta(days=2)
    [fit] = launch_fits(priced, [job], BudgetsConfig(), later)
    assert fit.expected_usd > before
    assert _plan_cost(priced, job, at=later) == pytest.approx(fit.expected_usd)
    assert _plan_cost(priced, job, at=AT + timedelta(hours=1)) == pytest.approx(before)



def test_a_launch_refused_by_the_plan_for_its_budget_says_the_plans_amount(
        tmp_path: Path, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    """A budget below every allowed offering of the bundled prices (a store with none of
    its own): the launch's refusal is the plan's, ending in the budget that launches it,
    the same amount."""
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    job = tmp_path / "quick.yaml"  # a second of work: most of its cost is the first watch
    job.write_text(yaml.safe_dump({
        "name": "ar", "run": "true", "throughputs": {"A10G": 2000}, "steps": 2000,
        "checkpoint": {"size_gb": 0.001, "interval_minutes": 0.05, "restart_minutes": 0},
        "constraints": {"gpu_models": ["A10G"], "regions": ["us-east-1"],
                        "markets": ["on-demand"], "budget": 0.0001, "at_cap": "stop"}}))
    db = tmp_path / "empty.sqlite"
    PriceStore(str(db)).dispose()
    planned = cli("plan", job, "--db", db)
    said = re.search(r"raise constraints\.budget in \S+ to ([0-9.]+)$", planned.output.strip())
    assert said is not None, planned.output
    refused = cli("launch", job, "--launcher", "local", "--wait", "0", "--db", db)
    assert refused.exit_code != 0
    [line] = refused.output.splitlines()
    assert line.endswith(f"raise constraints.budget in {job} to {said[1]}"), line

"""One rule for the charge ahead: a launch's budget check and a move's charge a job as the
watch does (`own_budget.ahead_usd`), at most its rest at its pace there and a second more,
never a whole watch interval it will not run (a real SQLite store, nothing launched)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from costsched.config import BudgetsConfig
from costsched.optimize.decision import Overheads
from costsched.service.jobs.budget_launch import launch_fits
from costsched.store import PriceStore

AT = pd.Timestamp("2026-01-01T00:00:00Z").to_pydatetime()
USD_PER_HOUR = 3.6  # a tenth of a cent a second: a 30 s watch interval is $0.03


@pytest.fixture
def priced(db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PriceStore:
    config = tmp_path / "instant-start.toml"  # no boot to price: the work's cents decide
    config.write_text("[migration]\nrestart_minutes = 0\nwarmup_minutes = 0\n")
    monkeypatch.setenv("COSTSCHED_CONFIG", str(config))
    store = PriceStore(f"sqlite:///{db_path}")
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1a", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=USD_PER_HOUR, effective_at=AT, source="test")]))
    return store


def _job(tmp_path: Path, steps: int, budget: float) -> Path:
    """`steps` at 100 steps/s on a V100."""
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump({
        "name": "short", "run": "true", "throughputs": {"V100": 100}, "steps": steps,
        "checkpoint": {"size_gb": 0.001, "interval_minutes": 60},
        "constraints": {"regions": ["us-east-1"], "markets": ["spot"],
                        "budget": budget}}))
    return path


def test_a_launch_charges_a_job_shorter_than_the_interval_its_rest_ahead(
        tmp_path: Path, priced: PriceStore) -> None:
    """10 s of work ($0.01): the watch charges it 11 s ahead ($0.011), not the 30 s
    interval ($0.03) the old check added: it fits $0.03, which the old one refused."""
    [fit] = launch_fits(priced, [_job(tmp_path, 1000, 0.03)], BudgetsConfig(), AT,
                        interval_seconds=30.0)
    assert fit.expected_usd == pytest.approx(0.01, rel=0.01)
    assert fit.ahead_usd == pytest.approx(USD_PER_HOUR * 11 / 3600)
    assert fit.fits
    assert fit.ahead_said == "11 s, to its end at its pace, at $3.6000/h"


def test_a_launch_charges_a_job_longer_than_the_interval_the_whole_interval(
        tmp_path: Path, priced: PriceStore) -> None:
    """100 s of work ($0.10): charged the 30 s interval ahead ($0.03), as before; $0.12
    holds its cost but not the charge."""
    [fit] = launch_fits(priced, [_job(tmp_path, 10_000, 0.12)], BudgetsConfig(), AT,
                        interval_seconds=30.0)
    assert fit.ahead_usd == pytest.approx(0.03)
    assert not fit.fits
    assert fit.ahead_said == "30 s at $3.6000/h"
    assert "+ $0.03 for the first watch interval (30 s at $3.6000/h)" in fit.line()


def _running(store: PriceStore, tmp_path: Path, steps: int, budget: float):  # noqa: ANN202
    """A job launched on us-east-1a ($3.60/h), us-east-1b at twice its price; the watch
    interval 30 s."""
    from costsched.service import jobs as service
    from tests.costsched.migration.test_edges import FakeLauncher

    (tmp_path / "instant-start.toml").write_text(
        "[migration]\nrestart_minutes = 0\nwarmup_minutes = 0\noverlap_minutes = 0\n"
        "lost_work_minutes = 0\n[daemon]\nwatch_seconds = 30\n")
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone="us-east-1b", instance_type="p3.2xlarge",
        market="spot", os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=2 * USD_PER_HOUR, effective_at=AT, source="test")]))
    launcher = FakeLauncher()
    [job] = service.launch(store, [_job(tmp_path, steps, budget)], launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"))
    assert store.jobs.placements(job.id)["zone"].tolist() == ["us-east-1a"]
    return service, launcher, job.id


TO = "aws us-east-1b p3.2xlarge spot"
INSTANT = Overheads(restart_minutes=0, warmup_minutes=0, overlap_minutes=0,
                    lost_work_minutes=0)  # a move of no cost but its egress


def test_a_move_charges_a_job_shorter_than_the_interval_its_rest_there_ahead(
        tmp_path: Path, priced: PriceStore) -> None:
    """Its 10 s there cost $0.02, charged 11 s ahead ($0.022): within $0.05, which the
    old whole interval there ($0.06) passed."""
    service, launcher, job = _running(priced, tmp_path, 1000, 0.05)
    [dry] = service.migrate(priced, launcher, job, to=TO, dry_run=True,
                            overheads=INSTANT)
    assert dry.held_back == "", dry.reason


def test_a_move_charges_a_job_longer_than_the_interval_the_whole_interval_there(
        tmp_path: Path, priced: PriceStore) -> None:
    """Its 100 s there cost $0.20, charged the 30 s interval ahead ($0.06): past $0.25."""
    service, launcher, job = _running(priced, tmp_path, 10_000, 0.25)
    [dry] = service.migrate(priced, launcher, job, to=TO, dry_run=True,
                            overheads=INSTANT)
    assert dry.held_back == "budget", dry.reason
    assert "+ $0.0600 for the next watch interval (30 s at $7.2000/h)" in dry.not_moved, \
        dry.not_moved

"""A launch's budget line never states an estimate as a fact: where its figures rest on a
speed costsched estimated, or on an assumed hour of work, the line marks them and says so
in words, with the key that gives the real figure; on a given speed it says nothing more."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from costsched.config import BudgetsConfig
from costsched.service.jobs.budget_launch import launch_fits
from costsched.store import PriceStore

AT = pd.Timestamp("2026-01-01T00:00:00Z").to_pydatetime()


@pytest.fixture
def priced(db_path: Path) -> PriceStore:
    """One L4 spot price, the only offering the jobs may use."""
    store = PriceStore(f"sqlite:///{db_path}")
    store.ingest(pd.DataFrame([dict(
        cloud="gcp", region="us-east5", zone="us-east5-a", instance_type="g2-standard-4",
        market="spot", os="linux", gpu_model="L4", gpu_count=1, vcpus=4, memory_gb=16.0,
        usd_per_hour=0.08, effective_at=AT, source="test")]))
    return store


def _job(tmp_path: Path, throughputs: dict) -> Path:
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump({
        "name": "bigram", "run": "true", "throughputs": throughputs, "steps": 2400,
        "constraints": {"regions": ["us-east5"], "markets": ["spot"], "gpu_models": ["L4"],
                        "budget": 5}}))
    return path


def test_figures_on_an_estimated_speed_say_so(tmp_path: Path, priced: PriceStore) -> None:
    [fit] = launch_fits(priced, [_job(tmp_path, {"A10G": 9.0})], BudgetsConfig(), AT)
    line = fit.line()
    assert fit.fits and line.startswith("job bigram: expected $")
    assert "estimated speed on 1xL4" in line, line
    assert "`throughputs: {L4: STEPS_PER_S}`" in line
    assert line.count("*") >= 3  # the expected and pessimistic costs, and the words' mark


def test_figures_on_a_given_speed_say_nothing_more(tmp_path: Path, priced: PriceStore) -> None:
    [fit] = launch_fits(priced, [_job(tmp_path, {"L4": 9.0})], BudgetsConfig(), AT)
    assert "*" not in fit.line() and "estimat" not in fit.line()


def test_figures_on_an_assumed_hour_of_work_say_so(tmp_path: Path, priced: PriceStore) -> None:
    path = tmp_path / "task.yaml"
    path.write_text(yaml.safe_dump({
        "name": "sky", "run": "true",
        "resources": {"accelerators": "L4:1", "infra": "gcp/us-east5", "use_spot": True},
        "costsched": {"budget": 5}}))
    [fit] = launch_fits(priced, [path], BudgetsConfig(), AT)
    line = fit.line()
    assert "fits (* for 1 h of work on 1xL4, assumed: the work is not given" in line, line
    assert "`costsched: {hours: H}`" in line

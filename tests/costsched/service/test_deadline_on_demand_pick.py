"""A job with a deadline kept off spot after a preemption, on GCP's region-priced offerings
(zone ''): it runs on the cheapest on-demand offering its constraints allow, in another
region where that is cheaper, and the launch's line names the region it is kept from; a
preemption in one region keeps spot only there."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pandas as pd
import yaml

from costsched.config import BudgetsConfig
from costsched.model import Offering
from costsched.service.jobs.budget_launch import launch_fits
from costsched.store import PriceStore
from launchers.local import LocalLauncher

AT = pd.Timestamp("2026-01-01T12:00:00Z").to_pydatetime()
SPOT_EAST5, OD_EAST5, OD_EAST4, SPOT_EAST4 = 0.0796, 0.7961, 0.7045, 0.0900


def _store(db_path: Path, *, spot_in_east4: bool, lost_in_east4: bool = False) -> PriceStore:
    """L4 on-demand in us-east5 and us-east4 (the cheaper), spot in us-east5 (and in
    us-east4, dearer, when asked), all by region; spot in us-east5 preempted 5 min ago
    (and a capacity error for spot in us-east4 10 min ago, when asked)."""
    rows = [("us-east5", "spot", SPOT_EAST5), ("us-east5", "on_demand", OD_EAST5),
            ("us-east4", "on_demand", OD_EAST4)]
    if spot_in_east4:
        rows.append(("us-east4", "spot", SPOT_EAST4))
    store = PriceStore(f"sqlite:///{db_path}")
    store.ingest(pd.DataFrame([dict(
        cloud="gcp", region=region, zone="", instance_type="g2-standard-4", market=market,
        os="linux", gpu_model="L4", gpu_count=1, vcpus=4, memory_gb=16.0,
        usd_per_hour=price, effective_at=AT - timedelta(hours=1), source="test")
        for region, market, price in rows]))
    store.availability.record(Offering("gcp", "us-east5", "", "g2-standard-4", "spot", "L4",
                                       1, 4, 16.0), "preempted",
                              at=AT - timedelta(minutes=5), detail="test")
    if lost_in_east4:
        store.availability.record(Offering("gcp", "us-east4", "", "g2-standard-4", "spot",
                                           "L4", 1, 4, 16.0), "capacity",
                                  at=AT - timedelta(minutes=10), detail="test")
    return store


def _job(tmp_path: Path) -> Path:
    """An hour of work on an L4, due in four, spot and on-demand, any region."""
    path = tmp_path / "due.yaml"
    path.write_text(yaml.safe_dump({
        "name": "due", "run": "true", "throughputs": {"L4": 1}, "steps": 3600,
        "checkpoint": {"size_gb": 1, "interval_minutes": 30},
        "constraints": {"markets": ["spot", "on_demand"], "gpu_models": ["L4"],
                        "deadline": "4h", "budget": 100}}))
    return path


def test_kept_off_spot_it_runs_on_the_cheapest_on_demand_and_the_line_names_the_region(
        tmp_path: Path, db_path: Path) -> None:
    store = _store(db_path, spot_in_east4=False)
    launcher = LocalLauncher(tmp_path / "instances")
    [fit] = launch_fits(store, [_job(tmp_path)], BudgetsConfig(), AT, launcher=launcher)
    assert fit.placed.startswith(
        "job due: placed on gcp us-east4 g2-standard-4 on-demand at $0.7045/h, not on gcp "
        "us-east5 g2-standard-4 spot at $0.0796/h (the plan's first choice): the cheapest "
        "spot, gcp us-east5 g2-standard-4 spot at $0.0796/h, has none now: spot there was "
        "preempted at 11:55 UTC, and no spot is taken in a zone for 30 min after a "
        "preemption or a capacity error there; no zone it allows has spot now, and a job is "
        "not left without an instance to wait for it"), fit.placed
    assert "  " not in fit.placed


def test_without_spot_in_either_region_it_runs_on_the_cheaper_region_s_on_demand(
        tmp_path: Path, db_path: Path) -> None:
    store = _store(db_path, spot_in_east4=True, lost_in_east4=True)
    launcher = LocalLauncher(tmp_path / "instances")
    [fit] = launch_fits(store, [_job(tmp_path)], BudgetsConfig(), AT, launcher=launcher)
    assert fit.placed.startswith(
        "job due: placed on gcp us-east4 g2-standard-4 on-demand at $0.7045/h, not on gcp "
        "us-east5 g2-standard-4 spot at $0.0796/h (the plan's first choice): the cheapest "
        "spot, gcp us-east5 g2-standard-4 spot at $0.0796/h, has none now: spot there was "
        "preempted at 11:55 UTC"), fit.placed


def test_a_preemption_in_one_region_keeps_spot_off_there_only(tmp_path: Path,
                                                             db_path: Path) -> None:
    store = _store(db_path, spot_in_east4=True)
    launcher = LocalLauncher(tmp_path / "instances")
    [fit] = launch_fits(store, [_job(tmp_path)], BudgetsConfig(), AT, launcher=launcher)
    assert fit.placed.startswith(
        "job due: placed on gcp us-east4 g2-standard-4 spot at $0.0900/h, not on gcp "
        "us-east5 g2-standard-4 spot at $0.0796/h (the plan's first choice): "), fit.placed

"""A job with a deadline and a budget, spot allowed: the launch's budget check prices the
offering the deadline policy places it on (on-demand after a preemption in its only spot
zone), not the plan's first choice, and a line says where and why (the CLI, the local
launcher, a real SQLite store)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
import yaml

from costsched.config import BudgetsConfig
from costsched.model import Offering
from costsched.service.jobs.budget_launch import launch_fits
from costsched.store import PriceStore
from launchers.local import LocalLauncher

SPOT, ON_DEMAND = 0.9, 3.06


def _priced(db_path: Path) -> PriceStore:
    """One spot zone and the region's on-demand price; spot there was just preempted."""
    at = datetime.now(timezone.utc) - timedelta(hours=1)
    store = PriceStore(f"sqlite:///{db_path}")
    store.ingest(pd.DataFrame([dict(
        cloud="aws", region="us-east-1", zone=zone, instance_type="p3.2xlarge",
        market=market, os="linux", gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0,
        usd_per_hour=price, effective_at=at, source="test")
        for zone, market, price in (("us-east-1a", "spot", SPOT),
                                    ("", "on_demand", ON_DEMAND))]))
    store.availability.record(Offering("aws", "us-east-1", "us-east-1a", "p3.2xlarge",
                                       "spot", "V100", 1, 8, 61.0), "preempted",
                              at=datetime.now(timezone.utc) - timedelta(minutes=5),
                              detail="test")
    return store


def _job(tmp_path: Path, budget: float) -> Path:
    """An hour of work on a V100, due in two: markets unset."""
    path = tmp_path / "due.yaml"
    path.write_text(yaml.safe_dump({
        "name": "due", "run": "true", "throughputs": {"V100": 1}, "steps": 3600,
        "checkpoint": {"size_gb": 1, "interval_minutes": 30},
        "constraints": {"regions": ["us-east-1"], "deadline": "2h", "budget": budget}}))
    return path


def test_the_budget_check_prices_the_deadline_policy_s_on_demand_pick(
        tmp_path: Path, db_path: Path, cli, monkeypatch: pytest.MonkeyPatch) -> None:
    store = _priced(db_path)
    launcher = LocalLauncher(tmp_path / "instances")
    at = datetime.now(timezone.utc)
    [fit] = launch_fits(store, [_job(tmp_path, 100)], BudgetsConfig(), at, launcher=launcher)
    # an hour of work on-demand (no start: the local launcher boots no instance), more
    # than the spot plan's whole hour
    assert fit.expected_usd == pytest.approx(ON_DEMAND) and fit.start_usd == 0
    preempted = store.availability.since(event="preempted")["at"].iloc[-1]
    assert fit.placed.startswith(
        "job due: placed on aws us-east-1 p3.2xlarge on-demand at $3.0600/h, not on aws "
        "us-east-1a p3.2xlarge spot at $0.9000/h (the plan's first choice): the cheapest "
        "spot, aws us-east-1a p3.2xlarge spot at $0.9000/h, has none now: spot there was "
        f"preempted at {preempted:%H:%M} UTC, and no spot is taken in a zone for 30 min after "
        "a preemption or a capacity error there; no zone it allows has spot now, and a job "
        "is not left without an instance to wait for it")

    # A budget the spot plan fits and on-demand does not: refused, saying where it goes.
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    refused = cli("launch", _job(tmp_path, 2.5), "--launcher", "local", "--wait", "0")
    assert refused.exit_code != 0
    assert "placed on aws us-east-1 p3.2xlarge on-demand at $3.0600/h" in refused.output
    assert "against $2.50 left of its own budget: does not fit" in refused.output
    assert store.jobs.list().empty

    launched = cli("launch", _job(tmp_path, 100), "--launcher", "local", "--wait", "0")
    assert launched.exit_code == 0, launched.output
    assert "placed on aws us-east-1 p3.2xlarge on-demand at $3.0600/h, not on" in \
        launched.output
    assert f"job due: expected ${fit.expected_usd:,.2f}" in launched.output
    placements = store.jobs.placements(int(store.jobs.list()["id"].iloc[0]))
    assert list(placements["market"]) == ["on_demand"]

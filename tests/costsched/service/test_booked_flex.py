"""Flex-start prices (GCP's Dynamic Workload Scheduler SKUs, stored as market flex_start)
in a plan: left out of the hourly ranking unless a job names the market, weighed as booked
capacity (its wait, its seven-day limit, billed by the hour)."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pandas as pd
import yaml

from costsched.optimize.rank import BOOKED
from costsched.service import plan
from costsched.store import OBSERVATION_COLUMNS, PriceStore
from tests.costsched.service.booked_world import NOW


def _offer(market: str, price: float) -> dict:
    return dict(zip(OBSERVATION_COLUMNS, ["gcp", "us-central1", "", "a3-highgpu-8g", market,
                                          "linux", "H100", 8, 208, 1872.0, price,
                                          NOW - timedelta(hours=1), "test:a3"], strict=True))


def _spec(tmp_path: Path, markets: list[str] | None = None) -> Path:
    constraints = {"clouds": ["gcp"], "gpu_models": ["H100"], "gpu_counts": [8],
                   "deadline": "96h"}
    if markets:
        constraints["markets"] = markets
    path = tmp_path / "a3.yaml"
    path.write_text(yaml.safe_dump({"name": "a3", "run": "python train.py",
                                    "throughputs": {"H100:8": 1.0}, "steps": 60 * 3600,
                                    "constraints": constraints}))
    return path


def test_flex_start_is_planned_as_booked_capacity_and_ranked_only_when_named(
        tmp_path: Path) -> None:
    store = PriceStore(f"sqlite:///{tmp_path}/s.db")
    store.ingest(pd.DataFrame([_offer("on_demand", 88.49), _offer("flex_start", 47.0)]))
    result = plan(store, _spec(tmp_path), at=NOW)
    ranked = result.jobs[0].ranked
    flex = ranked[ranked["market"] == "flex_start"]
    assert flex["excluded"].tolist() == [BOOKED]
    booked = result.booked[0]
    (option,) = booked.booked
    assert option.name == "flex-start a3-highgpu-8g us-central1" and option.feasible
    # After its expected wait, the job's hours and a restart at the flex-start price.
    part = option.parts[-1]
    assert part.start_hours == 2.0 and part.usd == option.usd
    assert option.usd < booked.on_demand.usd and booked.best is option
    named = plan(store, _spec(tmp_path, ["flex_start", "on_demand"]), at=NOW).jobs[0]
    assert named.best["market"] == "flex_start"  # named: ranked by the hour like others

"""The H100 scenario the booked-capacity tests share: an 8-GPU H100 job of 60 hours due in
96 hours, p5.48xlarge spot and on-demand prices stored, spot that is preempted every few
hours and gone for hours after, and EC2 capacity block offerings for sale.

Prices: on-demand $55.04/h (us-east-1's list price since 2025); spot $23.45/h (the bundled
2025-10 median of us-east-1's zones); the blocks at the published Capacity Blocks rate of
$39.33 an instance-hour (tests/fixtures/booked/README.md). The spot market is a scarce
one, as H100 spot has been: over the five days before, probes ran 4 hours at a time and
were preempted, and spot came back 6 hours later each time.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import yaml

from costsched.store import OBSERVATION_COLUMNS, PriceStore
from costsched.store.spot_availability import COLUMNS as SPOT_COLUMNS

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "booked"
NOW = datetime(2026, 12, 1, 8, 0, tzinfo=timezone.utc)
ZONE = "us-east-1a"
SPOT = 23.45
ON_DEMAND = 55.04
WORK_HOURS = 60.0
DEADLINE_HOURS = 96.0


def job_spec(tmp_path: Path, name: str = "h100-train", run: str = "python train.py") -> Path:
    """The job: 216,000 steps at 1 step/s on 8 H100s (60 hours), due in 96 hours."""
    spec = {"name": name, "run": run, "throughputs": {"H100:8": 1.0},
            "steps": int(WORK_HOURS * 3600),
            "constraints": {"clouds": ["aws"], "regions": ["us-east-1"],
                            "gpu_models": ["H100"], "gpu_counts": [8],
                            "deadline": f"{DEADLINE_HOURS:g}h"},
            "checkpoint": {"interval_minutes": 30, "size_gb": 50.0}}
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def _offer(zone: str, market: str, price: float, at: datetime) -> dict:
    return dict(zip(OBSERVATION_COLUMNS, ["aws", "us-east-1", zone, "p5.48xlarge", market,
                                          "linux", "H100", 8, 192, 2048.0, price, at,
                                          "test:h100"], strict=True))


def store_prices(store: PriceStore) -> None:
    at = NOW - timedelta(hours=2)
    store.ingest(pd.DataFrame([_offer(ZONE, "spot", SPOT, at),
                               _offer("", "on_demand", ON_DEMAND, at)]))


def store_scarce_spot(store: PriceStore) -> None:
    """Five days before NOW: spot up 4 h, then gone 6 h, twelve times, seen both by probes
    (kind preemption: a probe runs until preempted) and by the availability watch."""
    rows = []
    t = NOW - timedelta(hours=120)
    for _ in range(12):
        up, down = t + timedelta(hours=4), t + timedelta(hours=10)
        for kind in ("preemption", "availability"):
            base = ["aws", "us-east-1", ZONE, "p5.48xlarge", "H100", 8]
            rows.append([*base, t, up, True, kind, f"test:{kind}"])
            rows.append([*base, up, down, False, kind, f"test:{kind}"])
        t = down
    store.spot_availability.add(pd.DataFrame(rows, columns=SPOT_COLUMNS))


def store_blocks(store: PriceStore, observed: datetime = NOW - timedelta(minutes=5)) -> int:
    from price_collectors.booked import capacity_blocks

    body = json.loads((FIXTURES / "describe_capacity_block_offerings.json").read_text())
    offered, tenancy = capacity_blocks(body["CapacityBlockOfferings"], observed)
    return store.booked.add(offered, tenancy=tenancy)[0]


def world(store: PriceStore) -> PriceStore:
    store_prices(store)
    store_scarce_spot(store)
    store_blocks(store)
    return store

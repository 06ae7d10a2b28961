"""A job with a deadline decided live (the decider every running job is asked, over a store
holding a trace's availability and prices) and in the deadline backtest of the same trace
chooses alike at every step of its run: the same zone, the same market, the same moves."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from costsched.backtest.deadline import AvailabilityTrace
from costsched.backtest.deadline.engine import DeadlineJob, simulate
from costsched.jobspec import parse, resolve
from costsched.optimize.decision import Overheads
from costsched.policies import OfferingKey
from costsched.policies.deadline import deadline_policy
from costsched.service.jobs.decider import DeadlineDecider, JobNow, market_at
from costsched.store import PriceStore
from costsched.store.spot_availability import COLUMNS as SPOT_COLUMNS
from costsched.throughput import ThroughputTable

TICK = 3600
T0 = pd.Timestamp("2023-03-01 00:00", tz="UTC")
# Hours with spot (1) per zone; some zone has spot every hour.
# Zones of three regions: a move between them pays the checkpoint's egress, priced alike.
AVAILABLE = {
    "us-east-1a": "111111111100000000111111000000111111111111",
    "us-east-2a": "111000111111100011100000011111100000000111",
    "us-west-2a": "000111000011111111001111111110011111111000",
}
SPOT = {"us-east-1a": 0.90, "us-east-2a": 0.95, "us-west-2a": 1.00}
REGION = {zone: zone[:-1] for zone in AVAILABLE}
ON_DEMAND = 3.06
START = 6  # the job starts after 6 hours of history
WORK_HOURS, DEADLINE_HOURS = 16.0, 30.0
GB = 1.0


def intervals(from_hour: int = 0) -> pd.DataFrame:
    """The availability from `from_hour` on (what a store that started watching then
    holds)."""
    rows = []
    for zone, hours in AVAILABLE.items():
        first = from_hour
        for i in range(from_hour + 1, len(hours) + 1):
            if i == len(hours) or hours[i] != hours[first]:
                rows.append(dict(cloud="aws", region=REGION[zone], zone=zone,
                                 instance_type="p3.2xlarge", gpu_model="V100", gpu_count=1,
                                 start=T0 + pd.Timedelta(hours=first),
                                 end=T0 + pd.Timedelta(hours=i),
                                 available=hours[first] == "1", kind="availability",
                                 source=f"{zone}.csv"))
                first = i
    return pd.DataFrame(rows, columns=SPOT_COLUMNS)


def prices() -> pd.DataFrame:
    at = (T0 - pd.Timedelta(hours=1)).to_pydatetime()
    offer = dict(cloud="aws", instance_type="p3.2xlarge", os="linux",
                 gpu_model="V100", gpu_count=1, vcpus=8, memory_gb=61.0, effective_at=at,
                 source="test")
    return pd.DataFrame([{**offer, "region": REGION[z], "zone": z, "market": "spot",
                          "usd_per_hour": p} for z, p in SPOT.items()]
                        + [{**offer, "region": r, "zone": "", "market": "on_demand",
                            "usd_per_hour": ON_DEMAND} for r in REGION.values()])


@pytest.fixture
def store(tmp_path: Path):  # noqa: ANN201
    opened = PriceStore(str(tmp_path / "prices.sqlite"))
    opened.ingest(prices())
    opened.spot_availability.add(intervals())
    yield opened
    opened.dispose()


@pytest.mark.parametrize(("policy", "history"), [
    ("spot-hedge", "full"), ("spot-hedge", "none"), ("spot-anywhere", "full"),
    ("uniform-progress", "full"), ("greedy", "full")])
def test_a_deadline_job_chooses_alike_live_and_in_replay_at_each_step(
        store, policy: str, history: str, tmp_path: Path) -> None:
    """`history` "none": the replay sees no market before the run, and the live job a
    store that started watching the market when the job did."""
    trace = AvailabilityTrace.from_store(store, zones=list(AVAILABLE), tick=TICK)
    zones = list(trace.zones)
    assert trace.on_demand_price[0, 0] == ON_DEMAND and trace.spot_price[0, 0] == SPOT[zones[0]]
    restart_minutes = Overheads().restart_hours(GB) * 60
    job = DeadlineJob(WORK_HOURS, DEADLINE_HOURS, restart_minutes, checkpoint_minutes=30,
                      checkpoint_gb=GB)
    steps: list[tuple[int, int, float, int]] = []

    def record(t, state, market, chosen) -> None:  # noqa: ANN001
        if state.progress[0] < state.work[0]:
            steps.append((t, int(state.placement[0]), float(state.progress[0]),
                          int(chosen[0])))

    # The live job's home is its region's cheapest zone: the replay's run starts there.
    home = zones.index(min(SPOT, key=SPOT.get))
    runs = simulate(trace, deadline_policy(policy), job, np.array([START]), np.array([home]),
                    on_step=record, history=history)
    assert bool(runs["met"].iloc[0])
    if history == "none":
        store = PriceStore(str(tmp_path / "watched-from-start.sqlite"))
        store.ingest(prices())
        store.spot_availability.add(intervals(from_hour=START))

    spec = {"name": "due", "run": "true", "throughputs": {"V100": 1.0},
            "steps": WORK_HOURS * 3600,
            "constraints": {"regions": list(REGION.values()),
                            "markets": ["spot", "on_demand"],
                            "gpu_models": ["V100"], "deadline": f"{DEADLINE_HOURS}h"},
            "checkpoint": {"interval_minutes": 30, "size_gb": GB}}
    created = (T0 + pd.Timedelta(hours=START)).to_pydatetime()
    resolved = resolve(parse(spec), ThroughputTable(), created)
    decider = DeadlineDecider(policy)

    def key_of(placement: int) -> OfferingKey | None:
        if placement < 0:
            return None
        zone = zones[placement % len(zones)]
        spot = placement < len(zones)
        return ("aws", REGION[zone], zone if spot else "", "p3.2xlarge",
                "spot" if spot else "on_demand", "linux")

    chosen: set[OfferingKey] = set()
    waits = 0
    for t, before, progress, replayed in steps:
        when = (T0 + pd.Timedelta(hours=START + t)).to_pydatetime()
        current = key_of(before)
        asked = JobNow(resolved, created, policy, "us-east-1", current,
                       WORK_HOURS * 3600 - progress)
        live = decider.decide(asked, market_at(store, when), when)
        expected = key_of(replayed)
        if expected is None:
            # Where a replay waits (no instance this hour), a live job is never left
            # without one: it keeps its instance, else takes the cheapest spot there is.
            waits += 1
            hour = START + t
            expected = current or key_of(zones.index(min(
                (z for z in zones if AVAILABLE[z][hour] == "1"), key=SPOT.get)))
        assert live.choice == expected, (policy, t, current)
        chosen.add(live.choice)
    if history == "none":
        store.dispose()
    # Not vacuous: the job runs in more than one zone on the way (preempted, or moved);
    # spot-anywhere never waits while some zone has spot, so it meets no live rule.
    assert len(steps) >= WORK_HOURS and len({key[2] for key in chosen}) > 1
    assert waits == 0 or policy != "spot-anywhere"

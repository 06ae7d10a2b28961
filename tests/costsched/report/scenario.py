"""A store with three jobs whose costs are worked out by hand in test_data.py.

Times are hours after T0 = 2024-06-01 20:00 UTC; midnight is hour 4, `NOW` hour 6.

alpha (V100: 2 steps/s, checkpoint 10 GB, budget $8): launched on EAST at 0; a migration
  asked at 3 lands on WEST at 3.5 (target running at 4), the source ends at 4.5.
beta (V100: 1 step/s, checkpoint 5 GB, budget $5, a name with markup): launched on WEST at
  0, preempted at 1; the recovery lands on EAST at 1.5 and runs from 2.
gamma (A100: 4 steps/s): on GCP from 5; us-central1 has no V100 spot price.
Each reports at NOW the steps its placements' hours make at its spec's speed.
EAST's spot price is 1.0, then 1.5 from hour 2; EAST_B 1.2; WEST 0.5; GCP 2.0.
On demand: EAST 3.0 and WEST 2.5 stored; GCP's from the catalog.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pandas as pd

from costsched.store import OBSERVATION_COLUMNS, PriceStore
from costsched.store.moves import MoveRecord

T0 = datetime(2024, 6, 1, 20, 0, tzinfo=timezone.utc)
NOW = 6.0
EAST = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")
EAST_B = ("aws", "us-east-1", "us-east-1b", "p3.2xlarge", "spot", "linux")
WEST = ("aws", "us-west-2", "us-west-2b", "p3.2xlarge", "spot", "linux")
GCP = ("gcp", "us-central1", "", "a2-highgpu-1g", "spot", "linux")
EAST_OD = ("aws", "us-east-1", "", "p3.2xlarge", "on_demand", "linux")
WEST_OD = ("aws", "us-west-2", "", "p3.2xlarge", "on_demand", "linux")
GPU = {"p3.2xlarge": "V100", "a2-highgpu-1g": "A100"}
BETA = "beta <b>[red]x</b>"


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def observe(store: PriceStore, key: tuple, prices: list[tuple[float, float]]) -> None:
    rows = [(*key, GPU[key[3]], 1, 8, 61.0, usd, pd.Timestamp(at(h)), "test")
            for h, usd in prices]
    store.ingest(pd.DataFrame(rows, columns=OBSERVATION_COLUMNS))


def job(store: PriceStore, name: str, throughputs: dict, *, gb: float = 0.0,
        budget: float | None = None) -> int:
    spec = {"name": name, "throughputs": throughputs, "steps": 1e6,
            "checkpoint": {"size_gb": gb}, "constraints": {"budget": budget}}
    return store.jobs.create(name, {"spec": spec, "source": "test"}, 1e6, at=at(-1))


def place(store: PriceStore, job_id: int, key: tuple, hours: float, reason: str,
          instance: str, keep_open: bool = False) -> int:
    return store.jobs.place(job_id, key, gpu_model=GPU[key[3]], gpu_count=1, at=at(hours),
                            usd_per_hour=9.99, reason=reason, instance=instance,
                            keep_open=keep_open)


def advance(store: PriceStore, record: MoveRecord, target: str,
            steps: list[tuple[str, float]]) -> MoveRecord:
    """Advance a move through (state, hours) steps; the target is set on target_launched."""
    for state, hours in steps:
        extra = {"target_instance": target} if state == "target_launched" else {}
        record = store.moves.advance(record, state, at=at(hours), **extra)
    return record


def fill(store: PriceStore) -> dict[str, int]:
    observe(store, EAST, [(-10, 1.0), (2, 1.5)])
    observe(store, EAST_B, [(-10, 1.2)])
    observe(store, WEST, [(-10, 0.5)])
    observe(store, GCP, [(-10, 2.0)])
    observe(store, EAST_OD, [(-10, 3.0)])
    observe(store, WEST_OD, [(-10, 2.5)])

    alpha = job(store, "alpha", {"V100": 2.0}, gb=10, budget=8.0)
    place(store, alpha, EAST, 0, "launch", "a-1")
    moving = store.moves.create(alpha, "migration", [], at=at(3), source_instance="a-1")
    moving = advance(store, moving, "a-2", [("checkpointing", 3), ("checkpoint_verified", 3.5)])
    place(store, alpha, WEST, 3.5, "migration", "a-2", keep_open=True)
    moving = advance(store, moving, "a-2", [("target_launched", 3.5), ("target_running", 4)])
    store.jobs.end_placement(alpha, at(4.5), instance="a-1")
    advance(store, moving, "a-2", [("source_terminated", 4.5), ("done", 4.5)])

    beta = job(store, BETA, {"V100": 1.0}, gb=5, budget=5.0)
    place(store, beta, WEST, 0, "launch", "b-1")
    store.jobs.end_placement(beta, at(1))
    moving = store.moves.create(beta, "recovery", [], at=at(1), source_instance="b-1")
    moving = advance(store, moving, "b-2", [("checkpoint_verified", 1)])
    place(store, beta, EAST, 1.5, "recovery", "b-2")
    advance(store, moving, "b-2", [("target_launched", 1.5), ("target_running", 2),
                                   ("source_terminated", 2), ("done", 2)])

    gamma = job(store, "gamma", {"A100": 4.0})
    place(store, gamma, GCP, 5, "launch", "c-1")
    store.jobs.create("idle", {"spec": {"name": "idle"}}, 10.0, at=at(0))  # never placed
    # Each reports, at NOW, the steps its hours made at its spec's speed (alpha's two
    # placements overlap an hour: 7 h at 2 steps/s), so that its measured speed is that;
    # it reported all along, each placement from its start to its end (or NOW).
    for job_id, steps, speed in ((alpha, 7 * 3600 * 2.0, 2.0), (beta, 5.5 * 3600 * 1.0, 1.0),
                                 (gamma, 1 * 3600 * 4.0, 4.0)):
        store.jobs.record_step(job_id, steps, at=at(NOW))
        read_along(store, job_id, speed)
    return {"alpha": alpha, "beta": beta, "gamma": gamma}


def read_along(store: PriceStore, job_id: int, speed: float) -> None:
    """The step readings of a job that reported all along at `speed`: on each placement,
    from its start to its end (NOW while open), as the watch's readings leave them."""
    from sqlalchemy import update

    from costsched.store.schema import placements

    done = 0.0
    with store.engine.begin() as conn:
        for p in store.jobs.placements(job_id).itertuples():
            end = p.end_at if pd.notna(p.end_at) else pd.Timestamp(at(NOW))
            seconds = (end - p.start_at).total_seconds()
            conn.execute(update(placements).where(placements.c.id == int(p.id)).values(
                first_step=done, first_step_ts=int(p.start_at.timestamp()),
                last_step=done + seconds * speed, last_step_ts=int(end.timestamp())))
            done += seconds * speed

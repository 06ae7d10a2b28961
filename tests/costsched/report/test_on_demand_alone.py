"""A job that ran on on-demand instances alone saves exactly nothing against on-demand:
its baseline is the same charges as its spend (docs/reports.md, Baselines)."""

from __future__ import annotations

import pandas as pd
from sqlalchemy import update

from costsched.report import build
from costsched.store import OBSERVATION_COLUMNS, PriceStore
from costsched.store.schema import placements
from tests.costsched.report.scenario import at

A100 = ("gcp", "us-central1", "", "a2-highgpu-1g", "on_demand", "linux")
L4 = ("gcp", "us-central1", "", "g2-standard-4", "on_demand", "linux")


def test_a_job_on_on_demand_alone_saves_zero(store: PriceStore) -> None:
    """On an A100 on-demand 0-1 h (its first step read 3 minutes in), stopped at its
    budget and started again on an L4 on-demand 2-3 h (its first step read half an hour
    in, a long setup): its training and one setup a run are a share of its hours, but an
    on-demand baseline of on-demand placements is those placements' own charges."""
    rows = [(*A100, "A100", 1, 12, 85.0, 3.7, pd.Timestamp(at(-10)), "test"),
            (*L4, "L4", 1, 4, 16.0, 0.71, pd.Timestamp(at(-10)), "test")]
    store.ingest(pd.DataFrame(rows, columns=OBSERVATION_COLUMNS))
    spec = {"name": "od", "throughputs": {"A100": 1.0, "L4": 1.0}, "steps": 1e6}
    job = store.jobs.create("od", {"spec": spec, "source": "test"}, 1e6, at=at(-1))
    for key, gpu, hours, first, steps, reason in (
            (A100, "A100", 0, 0.05, (0.0, 3420.0), "launch"),
            (L4, "L4", 2, 2.5, (3420.0, 5220.0), "start")):
        placed = store.jobs.place(job, key, gpu_model=gpu, gpu_count=1, at=at(hours),
                                  usd_per_hour=1.0, reason=reason, instance=f"i-{reason}")
        store.jobs.end_placement(job, at(hours + 1))
        with store.engine.begin() as conn:
            conn.execute(update(placements).where(placements.c.id == int(placed)).values(
                first_step=steps[0], first_step_ts=int(at(first).timestamp()),
                last_step=steps[1], last_step_ts=int(at(hours + 1).timestamp())))
    store.jobs.record_step(job, 5220.0, at=at(3), extend=False)
    [row] = build(store, now=at(5)).rows["jobs"]
    assert row["on_demand_usd"] == row["usd"]
    assert row["saved_vs_on_demand_usd"] == 0
    assert repr(row["saved_vs_on_demand_usd"]) == "0.0"

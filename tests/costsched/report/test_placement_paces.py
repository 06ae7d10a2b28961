"""A job that ran on more than one GPU model: its baselines take each placement's own
steps at the speed it measured there, never its one pace split by the table's ratio."""

from __future__ import annotations

import pandas as pd
import pytest
from sqlalchemy import update

from costsched.report import build
from costsched.store import OBSERVATION_COLUMNS, PriceStore
from costsched.store.schema import placements
from tests.costsched.report.scenario import at

V100 = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")
L4 = ("gcp", "us-central1", "us-central1-a", "g2-standard-4", "spot", "linux")


def _ran(store: PriceStore, job_id: int, key: tuple, gpu: str, hours: tuple[float, float],
         steps: tuple[float, float], reason: str) -> None:
    """A placement over `hours` that reported `steps` (first, last) at its ends."""
    placed = store.jobs.place(job_id, key, gpu_model=gpu, gpu_count=1, at=at(hours[0]),
                              usd_per_hour=1.0, reason=reason, instance=f"i-{reason}")
    store.jobs.end_placement(job_id, at(hours[1]))
    with store.engine.begin() as conn:
        conn.execute(update(placements).where(placements.c.id == int(placed)).values(
            first_step=steps[0], first_step_ts=int(at(hours[0]).timestamp()),
            last_step=steps[1], last_step_ts=int(at(hours[1]).timestamp())))


def test_each_placement_paces_its_own_gpu(store: PriceStore) -> None:
    """Launched on a V100 ($1/h, 5 steps/s by its table) it made 36,000 steps in 1 h (10
    steps/s measured); moved to an L4 ($2/h, 12.5 by its table) it made 43,200 in 1 h (12
    steps/s). The launch choice kept does the 79,200 steps at the V100's own 10 steps/s:
    2.2 h, $2.20, not 79,200 at the table's V100/L4 ratio applied to the job's one pace
    (3.4 h). The speed table lists both GPUs."""
    rows = [(*V100, "V100", 1, 8, 61.0, 1.0, pd.Timestamp(at(-10)), "test"),
            (*L4, "L4", 1, 4, 16.0, 2.0, pd.Timestamp(at(-10)), "test")]
    store.ingest(pd.DataFrame(rows, columns=OBSERVATION_COLUMNS))
    spec = {"name": "moved", "throughputs": {"V100": 5.0, "L4": 12.5}, "steps": 1e6}
    job = store.jobs.create("moved", {"spec": spec, "source": "test"}, 1e6, at=at(-1))
    _ran(store, job, V100, "V100", (0, 1), (0.0, 36000.0), "launch")
    _ran(store, job, L4, "L4", (1, 2), (36000.0, 79200.0), "migration")
    store.jobs.record_step(job, 79200.0, at=at(2), extend=False)
    report = build(store, now=at(5))
    [row] = report.rows["jobs"]
    assert row["usd"] == pytest.approx(3.0)
    assert row["launch_choice_usd"] == pytest.approx(2.2)
    assert row["saved_vs_launch_choice_usd"] == pytest.approx(-0.8)
    speeds = {r["gpu_model"]: r["measured_sps"] for r in report.rows["speeds"]}
    assert speeds == pytest.approx({"V100": 10.0, "L4": 12.0})
    assert report.rows["estimated_baselines"] == []


def test_a_baseline_on_an_estimated_speed_is_marked(store: PriceStore) -> None:
    """The same job stored without its placements' steps: its pace is shared among its
    GPUs by its table's ratios, an estimate, and its launch choice kept says so."""
    rows = [(*V100, "V100", 1, 8, 61.0, 1.0, pd.Timestamp(at(-10)), "test"),
            (*L4, "L4", 1, 4, 16.0, 2.0, pd.Timestamp(at(-10)), "test")]
    store.ingest(pd.DataFrame(rows, columns=OBSERVATION_COLUMNS))
    spec = {"name": "moved", "throughputs": {"V100": 5.0, "L4": 12.5}, "steps": 1e6}
    job = store.jobs.create("moved", {"spec": spec, "source": "test"}, 1e6, at=at(-1))
    for key, gpu, hours, reason in ((V100, "V100", 0, "launch"), (L4, "L4", 1, "migration")):
        store.jobs.place(job, key, gpu_model=gpu, gpu_count=1, at=at(hours),
                         usd_per_hour=1.0, reason=reason, instance=f"i-{reason}")
        store.jobs.end_placement(job, at(hours + 1))
    store.jobs.record_progress(job, 79200.0, at=at(2))
    report = build(store, now=at(5))
    [line] = report.rows["estimated_baselines"]
    assert line["job_id"] == job
    assert line["line"].startswith("* job 1 (moved): its launch choice kept rests on an "
                                   "estimated speed")
    assert "estimated_baselines" in report.document()


def test_on_demand_charges_each_offering_for_the_work_done_on_it(store: PriceStore) -> None:
    """On the V100 1 h, training all of it (36,000 steps at 10 steps/s); on the L4 2 h,
    of which it trained half an hour (21,600 steps at 12 steps/s) and then sat. On demand
    the V100 ($3/h) does its hour and the L4 ($1/h) its half hour: $3.50, not the job's
    one share of all its hours (a half) on each: $1.50 + $1.00."""
    v100_od = ("aws", "us-east-1", "", "p3.2xlarge", "on_demand", "linux")
    l4_od = ("gcp", "us-central1", "", "g2-standard-4", "on_demand", "linux")
    rows = [(*V100, "V100", 1, 8, 61.0, 1.0, pd.Timestamp(at(-10)), "test"),
            (*L4, "L4", 1, 4, 16.0, 0.5, pd.Timestamp(at(-10)), "test"),
            (*v100_od, "V100", 1, 8, 61.0, 3.0, pd.Timestamp(at(-10)), "test"),
            (*l4_od, "L4", 1, 4, 16.0, 1.0, pd.Timestamp(at(-10)), "test")]
    store.ingest(pd.DataFrame(rows, columns=OBSERVATION_COLUMNS))
    spec = {"name": "moved", "throughputs": {"V100": 5.0, "L4": 12.5}, "steps": 1e6}
    job = store.jobs.create("moved", {"spec": spec, "source": "test"}, 1e6, at=at(-1))
    _ran(store, job, V100, "V100", (0, 1), (0.0, 36000.0), "launch")
    placed = store.jobs.place(job, L4, gpu_model="L4", gpu_count=1, at=at(1),
                              usd_per_hour=0.5, reason="migration", instance="i-2")
    store.jobs.end_placement(job, at(3))
    with store.engine.begin() as conn:
        conn.execute(update(placements).where(placements.c.id == int(placed)).values(
            first_step=36000.0, first_step_ts=int(at(1).timestamp()),
            last_step=57600.0, last_step_ts=int(at(1.5).timestamp())))
    store.jobs.record_step(job, 57600.0, at=at(1.5), extend=False)
    [row] = build(store, now=at(5)).rows["jobs"]
    assert row["usd"] == pytest.approx(2.0)
    assert row["on_demand_usd"] == pytest.approx(3.5)

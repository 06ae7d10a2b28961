"""The baselines count the work the job did, not its own preemption's overhead: a spot job
preempted and recovered paid again for its redone steps and its new instance's setup; on
demand (or on its launch choice kept) it would not have been preempted: its training hours
plus one start."""

from __future__ import annotations

import pandas as pd
import pytest

from costsched.report import build
from costsched.store import OBSERVATION_COLUMNS, PriceStore
from tests.costsched.report.scenario import EAST, EAST_OD, WEST, WEST_OD, at

PRICES = [(EAST, 1.0), (EAST_OD, 3.0), (WEST, 0.5), (WEST_OD, 2.5)]


def preempted(store: PriceStore, second: tuple) -> None:
    """1 step/s once training: set up 0.25 h, trained to step 1800 at 0.75 h, preempted at
    1 h; recovered on `second`, back at step 1800 at 1.5 h (steps redone, a second setup),
    done (3600) at 2 h. Training: 1 h; one start: 0.25 h; billed: 2 h."""
    store.ingest(pd.DataFrame([(*key, "V100", 1, 8, 61.0, usd, pd.Timestamp(at(-10)), "test")
                               for key, usd in PRICES], columns=OBSERVATION_COLUMNS))
    spec = {"name": "pre", "throughputs": {"V100": 1.0}, "steps": 3600}
    job = store.jobs.create("pre", {"spec": spec, "source": "test"}, 3600, at=at(-1))
    for key, lo, hi, (first, last) in ((EAST, 0, 1, (0, 1800)), (second, 1, 2, (1800, 3600))):
        store.jobs.place(job, key, gpu_model="V100", gpu_count=1, at=at(lo), usd_per_hour=9.9,
                         reason="launch" if lo == 0 else "recovery", instance=f"i-{lo}",
                         keep_open=False)
        store.jobs.record_step(job, first, at=at(lo + 0.25 if lo == 0 else lo + 0.5))
        store.jobs.record_step(job, last, at=at(lo + 0.75 if lo == 0 else hi))
        store.jobs.end_placement(job, at(hi))
    store.jobs.transition(job, "succeeded", at=at(2))


def test_on_demand_counts_training_hours_and_one_start(any_store: PriceStore) -> None:
    preempted(any_store, EAST)
    [row] = build(any_store, now=at(3)).jobs.to_dict("records")
    assert row["usd"] == pytest.approx(2.0)  # 2 billed h x $1.0
    # 1.25 h x $3.0 on demand; was 2 h x $3.0 = $6.0 (the preemption's overhead counted)
    assert row["on_demand_usd"] == pytest.approx(3.75)
    assert row["saved_vs_on_demand_usd"] == pytest.approx(1.75)


def test_launch_choice_kept_counts_the_same_work(any_store: PriceStore) -> None:
    preempted(any_store, WEST)
    [row] = build(any_store, now=at(3)).jobs.to_dict("records")
    assert row["usd"] == pytest.approx(1.5)  # 1 h x $1.0 + 1 h x $0.5
    # Each offering for the work done on it: EAST its setup and 0.5 h of training (0.75
    # h x $3.0), WEST its 0.5 h (x $2.5); one share of all the hours on each read $3.44.
    assert row["on_demand_usd"] == pytest.approx(3.0 * 0.75 + 2.5 * 0.5)
    # 1.25 h on EAST at $1.0; was 2 h (the pace over all billed hours)
    assert row["launch_choice_usd"] == pytest.approx(1.25)

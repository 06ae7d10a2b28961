"""A job still running at the report's end trained on after its step was last read, as
far as the store knows: the baselines count those hours as training, as they count the
steps of those hours in the work (never the whole open stretch as overhead, which left the
launch-choice baseline near $0)."""

from __future__ import annotations

import pandas as pd
import pytest

from costsched.report import build
from costsched.store import OBSERVATION_COLUMNS, PriceStore
from tests.costsched.report.scenario import EAST, EAST_OD, WEST, WEST_OD, at

PRICES = [(EAST, 1.0), (EAST_OD, 3.0), (WEST, 0.5), (WEST_OD, 2.5)]


def preempted_then_running(store: PriceStore) -> None:
    """1 step/s once training: on EAST set up 0.25 h, at step 1800 at 0.75 h, preempted
    at 1 h; recovered on WEST, back at step 1800 at 1.5 h (its steps redone, a second
    setup), at step 2700 at 1.75 h, the last reading; still running."""
    store.ingest(pd.DataFrame([(*key, "V100", 1, 8, 61.0, usd, pd.Timestamp(at(-10)), "test")
                               for key, usd in PRICES], columns=OBSERVATION_COLUMNS))
    spec = {"name": "open", "throughputs": {"V100": 1.0}, "steps": 36000}
    job = store.jobs.create("open", {"spec": spec, "source": "test"}, 36000, at=at(-1))
    store.jobs.transition(job, "running", at=at(0))
    store.jobs.place(job, EAST, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=9.9,
                     reason="launch", instance="i-0", keep_open=False)
    store.jobs.record_step(job, 0, at=at(0.25))
    store.jobs.record_step(job, 1800, at=at(0.75))
    store.jobs.end_placement(job, at(1))
    store.jobs.place(job, WEST, gpu_model="V100", gpu_count=1, at=at(1), usd_per_hour=9.9,
                     reason="recovery", instance="i-1", keep_open=False)
    store.jobs.record_step(job, 1800, at=at(1.5))
    store.jobs.record_step(job, 2700, at=at(1.75))


def test_the_launch_choice_counts_the_hours_after_the_last_reading(
        any_store: PriceStore) -> None:
    preempted_then_running(any_store)
    [row] = build(any_store, now=at(3)).jobs.to_dict("records")
    assert row["usd"] == pytest.approx(1.0 + 2 * 0.5)  # 1 h on EAST, 2 h on WEST so far
    # On EAST from the launch: 0.75 h of training to step 2700, the 1.25 h since its last
    # reading (training, as far as the store knows) and one setup of 0.25 h: 2.25 h x $1.0.
    assert row["launch_choice_usd"] == pytest.approx(2.25, rel=1e-3)

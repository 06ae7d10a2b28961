"""A restart after a job's own error is recovered by a recovery move whose detail says so
(`vocabulary.RESTART_MARK`): the report's moves table and the dashboard's price changes
name it a restart on error, never a recovery after a preemption, and the estimates do not
count it among the job's preemptions."""

from __future__ import annotations

import pandas as pd

from costsched.report import build
from costsched.store import OBSERVATION_COLUMNS, PriceStore
from costsched.vocabulary import RESTART_MARK
from tests.costsched.report.scenario import EAST, WEST, advance, at, job


def restarted(store: PriceStore) -> int:
    store.ingest(pd.DataFrame([(*key, "V100", 1, 8, 61.0, usd, pd.Timestamp(at(-10)), "test")
                               for key, usd in ((EAST, 1.0), (WEST, 0.5))],
                              columns=OBSERVATION_COLUMNS))
    fit = job(store, "fit", {"V100": 1.0})
    store.jobs.place(fit, EAST, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=1.0,
                     reason="launch", instance="i-1", keep_open=False)
    store.jobs.end_placement(fit, at(1))
    move = store.moves.create(fit, "recovery", [], at=at(1), source_instance="i-1",
                              detail=f"{RESTART_MARK}: instance i-1 exited 2")
    store.jobs.place(fit, WEST, gpu_model="V100", gpu_count=1, at=at(1), usd_per_hour=0.5,
                     reason="recovery", instance="i-2", keep_open=False)
    advance(store, move, "i-2", [("target_launched", 1), ("done", 1.1)])
    store.jobs.record_step(fit, 7200, at=at(2))
    return fit


def test_the_moves_table_names_a_restart_on_error(any_store: PriceStore) -> None:
    restarted(any_store)
    [row] = build(any_store, now=at(3)).rows["moves"]
    assert row["kind"] == RESTART_MARK  # was: recovery


def test_the_dashboard_price_change_names_a_restart_on_error(any_store: PriceStore) -> None:
    from costsched.dashboard.data import price_changes

    [change] = price_changes(any_store, restarted(any_store))
    assert change["reason"] == RESTART_MARK  # was: recovery

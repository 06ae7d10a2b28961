"""A move a budget's cap made is named for what it was in the report's moves table (the
status line says 'placed by its move at its own budget's cap'), never a plain migration;
a named budget's cap is named; a move for price stays a migration."""

from __future__ import annotations

import pandas as pd
import pytest

from costsched.report import build
from costsched.store import OBSERVATION_COLUMNS, PriceStore
from tests.costsched.report.scenario import EAST, WEST, advance, at, job


def moved(store: PriceStore, why: str) -> None:
    store.ingest(pd.DataFrame([(*key, "V100", 1, 8, 61.0, usd, pd.Timestamp(at(-10)), "test")
                               for key, usd in ((EAST, 1.0), (WEST, 0.5))],
                              columns=OBSERVATION_COLUMNS))
    fit = job(store, "fit", {"V100": 1.0})
    store.jobs.place(fit, EAST, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=1.0,
                     reason="launch", instance="i-1")
    move = store.moves.create(fit, "migration", [], at=at(1), source_instance="i-1",
                              detail=f"to aws us-east-1b p3.2xlarge spot{why}")
    store.jobs.end_placement(fit, at(1.05))
    store.jobs.place(fit, WEST, gpu_model="V100", gpu_count=1, at=at(1), usd_per_hour=0.5,
                     reason="migration", instance="i-2", keep_open=False)
    advance(store, move, "i-2", [("target_launched", 1), ("done", 1.1)])


@pytest.mark.parametrize(("why", "kind"), [
    ("; moved at its own budget: its forecast $2.10 passes the budget of $2.00: ...",
     "move at its own budget's cap"),
    ("; moved at budget team: its forecast $21.00 passes the budget of $20.00: ...",
     "move at budget team's cap"),
    ("", "migration")])
def test_the_moves_table_says_a_move_at_a_budgets_cap(any_store: PriceStore, why: str,
                                                       kind: str) -> None:
    moved(any_store, why)
    [row] = build(any_store, now=at(3)).rows["moves"]
    assert row["kind"] == kind

"""A pass over many jobs reads each price query once; outside a pass every call reads."""

from __future__ import annotations

from datetime import datetime, timezone

import pandas as pd
from sqlalchemy import event

from costsched.passes import memo, one_pass
from costsched.prices import prices_at
from costsched.store import OBSERVATION_COLUMNS, PriceStore

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def _store(store: PriceStore) -> PriceStore:
    rows = [("aws", "us-east-1", z, "p3.2xlarge", "spot", "linux", "V100", 1, 8, 61.0, usd,
             pd.Timestamp(T0), "test") for z, usd in (("us-east-1a", 0.9), ("us-east-1b", 1.1))]
    store.ingest(pd.DataFrame(rows, columns=OBSERVATION_COLUMNS))
    return store


def _counting(store: PriceStore) -> list[str]:
    seen: list[str] = []
    event.listen(store.engine, "before_cursor_execute",
                 lambda conn, cursor, statement, *a: seen.append(statement))
    return seen


def test_inside_a_pass_a_price_query_runs_once_and_callers_get_their_own_copy(
        any_store: PriceStore) -> None:
    store = _store(any_store)
    seen = _counting(store)
    with one_pass():
        first = prices_at(store, T0)
        queries = len(seen)
        first.loc[:, "usd_per_hour"] = 99.0  # a caller changing its frame
        again = prices_at(store, T0)
        assert len(seen) == queries  # no second read
        other = prices_at(store, T0, markets=["spot"])  # another query is read
        assert len(seen) > queries
    stored = again[again["source"] == "test"]
    assert stored["usd_per_hour"].tolist() == [0.9, 1.1]  # not the changed copy
    assert (other["market"] == "spot").all() and len(other) < len(again)


def test_outside_a_pass_every_call_reads_the_store(any_store: PriceStore) -> None:
    store = _store(any_store)
    seen = _counting(store)
    prices_at(store, T0)
    once = len(seen)
    prices_at(store, T0)
    assert len(seen) == 2 * once > 0


def test_a_nested_pass_shares_the_outer_one_and_ends_with_it() -> None:
    calls = []

    def compute() -> list[int]:
        calls.append(1)
        return [1]

    with one_pass():
        memo("k", compute)
        with one_pass():
            assert memo("k", compute) == [1]
        memo("k", compute)
    memo("k", compute)
    assert len(calls) == 2  # once inside the pass, once after it

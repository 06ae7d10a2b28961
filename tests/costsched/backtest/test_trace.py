"""The price trace: as-of lookups and exact cost integrals over step prices."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from costsched.backtest.trace import PriceTrace
from costsched.model import InvalidInput
from costsched.store import PriceStore, to_epoch_seconds
from tests.costsched.backtest.handmade import K80_A, T0, V100_A, history, trace

H = 3600


def row(tr: PriceTrace, offering: tuple) -> int:
    cloud, region, zone, itype, _, _ = offering
    return tr.rows[(cloud, region, zone, itype, "spot", "linux")]


def test_price_as_of_holds_until_the_next_observation_and_after_the_end() -> None:
    tr = trace([(V100_A, 1.0, 0), (V100_A, 3.0, 1), (K80_A, 0.5, 0.5)])
    t0 = int(T0.timestamp())
    v, k = row(tr, V100_A), row(tr, K80_A)
    assert tr.price_at(t0 + 12 * H, np.array([v, k])).tolist()[0] == 1.0
    assert np.isnan(tr.price_at(t0 + 11 * H, np.array([k]))[0])  # before its first price
    assert tr.price_at(t0 + 24 * H, np.array([v]))[0] == 3.0  # at the change itself
    assert tr.price_at(t0 + 99 * 24 * H, np.array([v, k])).tolist() == [3.0, 0.5]
    assert tr.end == t0 + 24 * H


def test_cost_integrates_step_prices_exactly() -> None:
    tr = trace([(V100_A, 1.0, 0), (V100_A, 3.0, 1)])
    t0 = int(T0.timestamp())
    # 2 h at $1 then 3 h at $3, and 10 h past the last observation at $3.
    cost = tr.cost(np.array([0, 0]), np.array([t0 + 22 * H, t0 + 30 * H]),
                   np.array([t0 + 27 * H, t0 + 40 * H]))
    assert cost.tolist() == pytest.approx([2 * 1.0 + 3 * 3.0, 10 * 3.0])


def test_vectorized_lookup_matches_a_scalar_scan() -> None:
    rng = np.random.default_rng(3)
    rows = [(o, float(rng.uniform(0.1, 3)), float(d)) for o in (V100_A, K80_A)
            for d in np.sort(rng.uniform(0, 10, 20))]
    tr = trace(rows)
    frame = history(rows)
    ts = to_epoch_seconds(frame["effective_at"])
    for t in np.linspace(tr.start - 5 * H, tr.end + 5 * H, 50).astype(int):
        for o, key in enumerate(tr.offerings["instance_type"]):
            mine = frame["instance_type"].to_numpy() == key
            seen = np.flatnonzero(mine & (ts <= t))
            want = frame["usd_per_hour"].to_numpy()[seen[np.argmax(ts[seen])]] if len(
                seen) else np.nan
            np.testing.assert_equal(tr.price_at(t, np.array([o]))[0], want)


def test_identical_price_histories_are_twins() -> None:
    v100_b = ("aws", "us-east-1", "us-east-1b", "p3.2xlarge", "V100", 1)
    tr = trace([(V100_A, 1.0, 0), (v100_b, 1.0, 0), (K80_A, 1.0, 0)])
    twins = tr.twins
    assert twins[row(tr, V100_A)] == twins[row(tr, v100_b)] != twins[row(tr, K80_A)]


def test_offerings_are_in_key_order_whatever_the_order_of_observations() -> None:
    rows = [(V100_A, 1.0, 0), (K80_A, 0.5, 0), (V100_A, 2.0, 1)]
    forward, backward = trace(rows), trace(rows[::-1])
    assert forward.keys == sorted(forward.keys) == backward.keys
    np.testing.assert_array_equal(forward.prices, backward.prices)
    assert forward.price_at(int(T0.timestamp()) + 30 * H, np.array([row(forward, V100_A)]))[
        0] == 2.0


def test_empty_history_is_a_clear_error() -> None:
    with pytest.raises(InvalidInput, match="no price observations"):
        PriceTrace.from_history(history([]).reindex(columns=list(history(
            [(V100_A, 1.0, 0)]).columns)))


def test_shared_trace_offers_one_gpu_of_each_multi_gpu_instance_at_its_share() -> None:
    x4 = ("aws", "us-east-1", "us-east-1a", "p3.8xlarge", "V100", 4)
    tr = trace([(V100_A, 1.0, 0), (x4, 4.0, 0), (x4, 8.0, 1)])
    shared = tr.shared()
    assert shared.keys == sorted(shared.keys) and len(shared.keys) == 3
    share = shared.rows[("aws", "us-east-1", "us-east-1a", "p3.8xlarge[1/4]", "spot", "linux")]
    whole = shared.rows[("aws", "us-east-1", "us-east-1a", "p3.8xlarge", "spot", "linux")]
    o = shared.offerings
    assert (o.loc[share, "gpu_count"], o.loc[share, "shared"]) == (1, True)
    assert (o.loc[whole, "gpu_count"], o.loc[whole, "shared"]) == (4, False)
    t0 = int(T0.timestamp())
    assert shared.price_at(t0 + 30 * H, np.array([share, whole])).tolist() == [2.0, 8.0]
    # 24 h at $1 then 6 h at $2 for one GPU of four.
    assert shared.cost(np.array([share]), np.array([t0]), np.array([t0 + 30 * H]))[0] == (
        pytest.approx(24 * 1.0 + 6 * 2.0))
    assert tr.shared().keys == shared.keys  # the original trace is untouched


def test_a_live_shared_view_matches_the_replayed_one() -> None:
    from costsched.policies.market import view_from_prices
    from costsched.throughput import ThroughputTable

    x4 = ("aws", "us-east-1", "us-east-1a", "p3.8xlarge", "V100", 4)
    rows = [(V100_A, 1.0, 0), (x4, 4.0, 0), (K80_A, 0.3, 0)]
    frame = history(rows)
    t = T0.to_pydatetime()
    table = ThroughputTable()
    live = view_from_prices(frame, t, table, "A3C", shared=True)
    tr = trace(rows).shared()
    from costsched.backtest import throughputs

    replayed = tr.view(int(T0.timestamp()), throughputs(tr, table, "A3C"))
    assert live.keys == replayed.keys
    np.testing.assert_allclose(live.prices, replayed.prices)
    np.testing.assert_allclose(live.steps_per_second, replayed.steps_per_second)


def test_a_trace_read_since_a_time_prices_and_charges_like_the_whole_history(
        any_store: PriceStore) -> None:
    rows = [(V100_A, 1.0, 0), (V100_A, 3.0, 1), (V100_A, 2.0, 5), (K80_A, 0.5, 0.5),
            (K80_A, 0.7, 9)]
    any_store.ingest(history(rows))
    since = (T0 + pd.Timedelta(days=3)).to_pydatetime()
    whole = PriceTrace.from_store(any_store)
    window = PriceTrace.from_store(any_store, since=since)

    assert len(window.times) < len(whole.times)  # the observations of days 0-2 but one
    t0 = int(since.timestamp())
    o = np.array([row(whole, V100_A), row(whole, K80_A)])
    assert window.keys == whole.keys
    for t in (t0, t0 + 5 * H, t0 + 2 * 24 * H, t0 + 7 * 24 * H, t0 + 40 * 24 * H):
        assert window.price_at(t, o).tolist() == whole.price_at(t, o).tolist()
    starts, ends = np.array([t0, t0 + 3 * H]), np.array([t0 + 60 * H, t0 + 30 * 24 * H])
    for offering in o:
        both = np.full(2, offering)
        assert window.cost(both, starts, ends) == pytest.approx(whole.cost(both, starts, ends))
    assert window.end == whole.end

"""The typical price: the lower quartile of the hourly prices over the window before t,
from the past only; the same from a replay's trace and from the store's observations."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import pandas as pd
import pytest

from costsched.backtest import PriceTrace
from costsched.optimize.forecast import WINDOW_HOURS, typical_from_observations, typical_prices
from costsched.prices import prices_at

H = 3600


def test_lower_quartile_of_the_hours_in_the_window_and_nothing_after_t() -> None:
    times = np.array([0, 8 * H, 20 * H, 30 * H])
    prices = np.array([[1.0, np.nan], [3.0, 2.0], [5.0, 2.0], [100.0, 100.0]])
    # Window [5 h, 25 h]: 3 h at 1 (less than a quarter), 12 h at 3, 5 h at 5; the second
    # offered from 8 h, at 2 throughout.
    got = typical_prices(times, prices, 25 * H, window_hours=20)
    assert got[0] == pytest.approx(3.0)
    assert got[1] == pytest.approx(2.0)
    # A quarter of the hours at 1: 1 is the usual price.
    assert typical_prices(times, prices, 25 * H, window_hours=20, quantile=0.15)[0] == 1.0
    later = prices.copy()
    later[3] = [7.0, 9.0]  # after t: never read
    np.testing.assert_array_equal(typical_prices(times, later, 25 * H, 20), got)
    assert np.isnan(typical_prices(times, prices, 5 * H, 20)[1])  # not offered yet


def test_a_jump_of_a_few_days_does_not_move_the_usual_price() -> None:
    # A week: four days at 1, two at 3, then back at 1: the mean says 1.57, the usual is 1.
    times = np.array([0, 4 * 24 * H, 6 * 24 * H])
    prices = np.array([[1.0], [3.0], [1.0]])
    assert typical_prices(times, prices, 7 * 24 * H)[0] == 1.0


@pytest.mark.parametrize("at", ["2020-02-20T00:00", "2020-03-03T06:30", "2020-03-12T00:00"])
def test_live_observations_give_the_replayed_typical_prices(recorded_store, at: str) -> None:
    t = datetime.fromisoformat(at).replace(tzinfo=timezone.utc)
    since = t - timedelta(hours=WINDOW_HOURS)
    trace = PriceTrace.from_store(recorded_store, os=["linux"])
    replayed = typical_prices(trace.times, trace.prices, t.timestamp())
    # What the live path reads: the prices in effect at the window's start, then every
    # observation within it.
    observations = pd.concat([prices_at(recorded_store, since, os="linux", use_catalog=False),
                              recorded_store.history(since, t, os="linux")])
    live = typical_from_observations(observations, trace.keys, t.timestamp())
    np.testing.assert_allclose(live, replayed, rtol=1e-12, equal_nan=True)
    assert np.isfinite(replayed).sum() > 20
    # Prices did move within the window: the quartile is not just the price at t.
    assert not np.allclose(replayed, trace.price_at(t.timestamp()), equal_nan=True)

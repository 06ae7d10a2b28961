"""A forecast of each offering's price beyond the next decision: its time-weighted mean
over the week before the decision time, from the prices known by then only.

Spot prices on the recorded traces jump for a few days and come back (Azure's daily
prices move between a few levels; AWS's drift within a day), so the mean of the past week
says more about the rest of a multi-day job than the price of the moment does. The same
computation serves a replay (a trace's price matrix) and a live decision (the store's
observations up to t, `typical_from_observations`), so both decide alike.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from costsched.store import OFFERING_KEY, to_epoch_seconds

WINDOW_HOURS = 168.0  # one week


def typical_prices(times: np.ndarray, prices: np.ndarray, t: float,
                   window_hours: float = WINDOW_HOURS) -> np.ndarray:
    """Per offering (column of `prices`), the time-weighted mean USD/hour over
    [t - window, t] of a step-price history: `prices[i]` holds from `times[i]` (sorted)
    until `times[i + 1]`, NaN where not offered. NaN for an offering never priced in the
    window. Nothing after t is read."""
    lo = float(t) - window_hours * 3600
    i0 = max(int(np.searchsorted(times, lo, side="right")) - 1, 0)
    i1 = int(np.searchsorted(times, t, side="right"))  # rows at or before t
    if i1 <= i0:
        return np.full(prices.shape[1], np.nan)
    begin = np.clip(times[i0:i1].astype(float), lo, float(t))
    width = np.diff(np.r_[begin, float(t)])
    window = prices[i0:i1]
    priced = ~np.isnan(window)
    weight = np.where(priced, width[:, None], 0.0)
    total = weight.sum(axis=0)
    usd = np.where(priced, window, 0.0) * weight
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, usd.sum(axis=0) / total, np.nan)


def typical_from_observations(observations: pd.DataFrame, keys: Sequence[tuple], t: float,
                              window_hours: float = WINDOW_HOURS) -> np.ndarray:
    """`typical_prices` for offerings `keys` (in that order) from price observations (the
    offering key columns, `usd_per_hour`, `effective_at`): every observation in the window
    and, per offering, the last one at or before its start. Later ones are ignored."""
    if observations.empty:
        return np.full(len(keys), np.nan)
    ts = to_epoch_seconds(observations["effective_at"])
    column = {tuple(k): i for i, k in enumerate(keys)}
    codes = np.array([column.get(k, -1) for k in
                      observations[OFFERING_KEY].astype(str).itertuples(index=False, name=None)])
    keep = np.flatnonzero((codes >= 0) & (ts <= t))
    keep = keep[np.argsort(ts[keep], kind="stable")]  # oldest first
    ts, codes = ts[keep], codes[keep]
    usd = observations["usd_per_hour"].to_numpy(dtype=float)[keep]
    times = np.unique(ts)
    row = np.searchsorted(times, ts)
    # Forward fill: each cell takes the latest observation at or before its row.
    observed = np.full((len(times), len(keys)), -1, dtype=np.int64)
    observed[row, codes] = np.arange(len(ts))
    latest = np.maximum.accumulate(observed, axis=0)
    prices = np.where(latest >= 0, usd[np.maximum(latest, 0)], np.nan)
    return typical_prices(times, prices, t, window_hours)

"""A forecast of each offering's price beyond the next decision: its usual price, the lower
quartile of its hourly prices over the week before the decision time, from the prices
known by then only.

Spot prices on the recorded traces jump for a few days and come back (Azure's daily
prices move between a few levels; AWS's drift within a day), so the past week says more
about the rest of a multi-day job than the price of the moment does. Its mean, though,
carries a jump for days after it ended, and a job re-decided every period leaves an
offering within a period of a jump: what it pays there over the rest of the job is the
offering's usual level, which the lower quartile finds (and a brief dip does not move).
The same computation serves a replay (a trace's price matrix) and a live decision (the
store's observations up to t, `typical_from_observations`), so both decide alike.
"""

from __future__ import annotations

from collections.abc import Sequence

from costsched.frames import OFFERING_KEY, to_epoch_seconds
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd

WINDOW_HOURS = 168.0  # one week
QUANTILE = 0.25  # of the time in the window: the price the offering was at or below


def typical_prices(times: np.ndarray, prices: np.ndarray, t: float,
                   window_hours: float = WINDOW_HOURS,
                   quantile: float = QUANTILE) -> np.ndarray:
    """Per offering (column of `prices`), the lowest USD/hour it was at or below for
    `quantile` of the hours of [t - window, t] it was priced, of a step-price history:
    `prices[i]` holds from `times[i]` (sorted) until `times[i + 1]`, NaN where not
    offered. Each hour counts by its price at its middle. NaN for an offering never priced
    in the window. Nothing after t is read."""
    hours = max(int(round(window_hours)), 1)
    at = float(t) - (np.arange(hours) + 0.5) * 3600  # the middle of each hour, all before t
    row = np.searchsorted(times, at, side="right") - 1
    sample = np.where((row >= 0)[:, None], prices[np.maximum(row, 0)], np.nan)
    return lower_quantile(sample, quantile)


def lower_quantile(sample: np.ndarray, quantile: float) -> np.ndarray:
    """Per column, the lowest value at or above which lie no more than 1 - `quantile` of
    its non-NaN values (NaN for a column without any)."""
    columns = np.ascontiguousarray(sample.T)  # a row per column: faster to partition
    count = np.count_nonzero(~np.isnan(columns), axis=1)
    k = np.maximum(np.ceil(quantile * count).astype(int) - 1, 0)
    # A partial sort puts each needed rank in place (NaN last), in linear time.
    ranked = np.partition(columns, np.unique(k), axis=1)
    found = ranked[np.arange(len(k)), k]
    return np.where(count > 0, found, np.nan)


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

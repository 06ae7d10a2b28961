"""A price trace: every offering's price history as one matrix, for vectorized as-of lookups.

The store's observations are loaded once and laid out on the union of their change times:
`prices[i, o]` is offering o's USD/hour from `times[i]` until `times[i + 1]` (NaN before
its first observation), and `cum[i, o]` the USD an instance of o has cost from `times[0]`
to `times[i]`. The price at any time, and the cost of any interval, are then one
`np.searchsorted` plus arithmetic, for whole arrays of (offering, time) pairs at once.
After the last observation each price holds on (the store's as-of semantics); `end` is
the last observed time, so callers can tell how much of a run leans on that.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

import numpy as np
import pandas as pd

from costsched.model import InvalidInput
from costsched.optimize.decision import egress_per_gb, offering_rates
from costsched.policies.market import (
    MarketView,
    OfferingKey,
    canonical,
    offering_keys,
    share_instances,
)
from costsched.store import OFFERING_ATTRS, OFFERING_KEY, PriceStore, to_epoch_seconds

HOUR = 3600.0
SPENT_KEPT = 4096  # `spent_all` arrays kept per trace


@dataclass(frozen=True)
class PriceTrace:
    offerings: pd.DataFrame  # one row per offering, sorted by key, positional index 0..n-1
    times: np.ndarray  # int64 epoch seconds, sorted, unique
    prices: np.ndarray  # float [len(times), len(offerings)]
    cum: np.ndarray  # float [len(times), len(offerings)], USD since times[0]
    end: int  # epoch seconds of the last observation

    @classmethod
    def from_history(cls, history: pd.DataFrame) -> PriceTrace:
        """From a frame with the offering columns, `usd_per_hour` and `effective_at`."""
        if history.empty:
            raise InvalidInput("no price observations in the chosen period and filters")
        frame = history.assign(ts=to_epoch_seconds(history["effective_at"]))
        frame[OFFERING_KEY] = frame[OFFERING_KEY].astype(str)
        attrs = [c for c in [*OFFERING_ATTRS, "offering_id"] if c in frame.columns]
        # The canonical order (by offering key), as in a live market view.
        offerings = canonical(frame.drop_duplicates(OFFERING_KEY)[OFFERING_KEY + attrs])
        codes = frame[OFFERING_KEY].merge(offerings[OFFERING_KEY].reset_index(),
                                          on=OFFERING_KEY, how="left")["index"].to_numpy()
        offerings["gpu_count"] = offerings["gpu_count"].astype(int)
        times = np.unique(frame["ts"].to_numpy())
        row = np.searchsorted(times, frame["ts"].to_numpy())
        n_t, n_o = len(times), len(offerings)
        # Forward fill: each cell takes the value of the latest observed row at or above it.
        observed = np.full((n_t, n_o), -1, dtype=np.int64)
        observed[row, codes] = row
        latest = np.maximum.accumulate(observed, axis=0)
        values = np.full((n_t, n_o), np.nan)
        values[row, codes] = frame["usd_per_hour"].to_numpy(dtype=float)
        cols = np.broadcast_to(np.arange(n_o), (n_t, n_o))
        prices = np.where(latest >= 0, values[np.maximum(latest, 0), cols], np.nan)
        widths = np.diff(times).astype(float) / HOUR
        spent = np.nan_to_num(prices[:-1]) * widths[:, None]
        cum = np.vstack([np.zeros((1, n_o)), np.cumsum(spent, axis=0)])
        return cls(offerings, times, prices, cum, int(times[-1]))

    @classmethod
    def from_store(
        cls,
        store: PriceStore,
        start: datetime | None = None,
        end: datetime | None = None,
        *,
        since: datetime | None = None,
        **filters: str | list[str] | None,
    ) -> PriceTrace:
        """One read of the store. Observations before `start` are read too (the price in
        effect at `start` may have been set long before); none after `end`. With `since`,
        only the prices in effect from `since` on: each offering's last observation at or
        before it and every later one, so prices and costs from `since` on are those of the
        whole history (a year of prices is not read for a week's replay)."""
        history = store.history(since, end, **filters)
        if since is not None:
            before = store.as_of(since, **filters)
            history = (pd.concat([before[history.columns], history], ignore_index=True)
                       if not before.empty else history)
        trace = cls.from_history(history)
        if start is not None and trace.end < int(to_epoch_seconds([start])[0]):
            raise InvalidInput(f"no price observations after {start:%Y-%m-%d %H:%M}")
        return trace

    @property
    def start(self) -> int:
        return int(self.times[0])

    def subset(self, mask: np.ndarray) -> PriceTrace:
        """The same trace restricted to the offerings where `mask` is True."""
        keep = np.flatnonzero(mask)
        return PriceTrace(self.offerings.iloc[keep].reset_index(drop=True), self.times,
                          self.prices[:, keep], self.cum[:, keep], self.end)

    def shared(self) -> PriceTrace:
        """The trace with a one-GPU share of every multi-GPU instance offered besides it,
        at the instance's prices divided by its GPU count (`market.share_instances`)."""
        offerings, source, divisor = share_instances(self.offerings)
        return PriceTrace(offerings, self.times, self.prices[:, source] / divisor,
                          self.cum[:, source] / divisor, self.end)

    @cached_property
    def keys(self) -> list[OfferingKey]:
        return offering_keys(self.offerings)

    @cached_property
    def rows(self) -> dict[OfferingKey, int]:
        return {k: i for i, k in enumerate(self.keys)}

    @cached_property
    def preemptions_per_hour(self) -> np.ndarray:
        """The decision model's rate per offering (the clouds' defaults for spot)."""
        return offering_rates(self.offerings)["preemptions_per_hour"].to_numpy(dtype=float)

    @cached_property
    def egress_per_gb(self) -> np.ndarray:
        """[from, to] USD per GB of checkpoint copied between offerings: by cloud and region
        pair, as a running job's move is priced (`MarketView.egress_from`)."""
        return egress_per_gb(self.offerings["cloud"].to_numpy(),
                             self.offerings["region"].to_numpy())

    def view(self, t: int, steps_per_second: np.ndarray) -> MarketView:
        """What a policy sees at time t, for a model of these throughputs per offering."""
        return MarketView(int(t), self.offerings, self.price_at(t), steps_per_second,
                          self.preemptions_per_hour, self.keys, self.rows, self.egress_per_gb)

    @cached_property
    def twins(self) -> np.ndarray:
        """A class number per offering: equal for offerings of the same cloud, region, GPU
        model and count with the same price at every time (e.g. zones priced alike: a move
        between zones of a region is free, `egress_per_gb`)."""
        columns = np.ascontiguousarray(np.nan_to_num(self.prices, nan=-1.0).T)
        digests = [hashlib.blake2b(col.tobytes(), digest_size=16).hexdigest() for col in columns]
        keys = self.offerings[["cloud", "region", "gpu_model", "gpu_count"]].assign(p=digests)
        return keys.groupby(list(keys.columns), sort=False).ngroup().to_numpy()

    @cached_property
    def suffix_min(self) -> np.ndarray:
        """suffix_min[i, o]: offering o's lowest price from times[i] on (inf if never)."""
        values = np.where(np.isnan(self.prices), np.inf, self.prices)
        return np.minimum.accumulate(values[::-1], axis=0)[::-1]

    @cached_property
    def rates(self) -> np.ndarray:
        """`prices` with NaN (not offered) as 0: what an instance is billed per hour."""
        return np.nan_to_num(self.prices)

    @cached_property
    def _spent_at(self) -> dict[float, np.ndarray]:
        return {}

    @cached_property
    def _float_times(self) -> np.ndarray:
        # Epoch seconds are exact as floats; float lookups need not convert `times` each time.
        return self.times.astype(float)

    def _row(self, t: float | np.ndarray) -> np.ndarray:
        times = self._float_times if np.asarray(t).dtype.kind == "f" else self.times
        return times.searchsorted(t, side="right") - 1

    def rates_at(self, t: float, o: np.ndarray) -> np.ndarray:
        """`price_at(t, o)` with not offered (NaN) as 0."""
        i = int(self._row(t))
        return self.rates[i, o] if i >= 0 else np.zeros(np.shape(o))

    def price_at(self, t: float | np.ndarray, o: np.ndarray | slice | None = None) -> np.ndarray:
        """As-of USD/hour of offerings `o` (all by default) at time(s) t; NaN = not offered."""
        o = slice(None) if o is None else o
        i = self._row(t)
        if np.ndim(i) == 0:
            return self.prices[i, o] if i >= 0 else np.full(self.prices[0, o].shape, np.nan)
        out = self.prices[np.maximum(i, 0), o]
        return np.where(i >= 0, out, np.nan)

    def spent(self, o: np.ndarray, t: np.ndarray) -> np.ndarray:
        """USD an instance of offering o has cost from times[0] to t (element-wise)."""
        i = np.maximum(self._row(t), 0)
        return self.cum[i, o] + self.rates[i, o] * np.maximum(t - self.times[i], 0) / HOUR

    def spent_one(self, o: int, t: float) -> float:
        """`spent` of one offering at one time."""
        i = max(int(self._row(t)), 0)
        return self.cum[i, o] + self.rates[i, o] * max(t - self.times[i], 0.0) / HOUR

    def spent_all(self, t: float) -> np.ndarray:
        """`spent` of every offering at one time t (read-only: runs share decision times,
        so each time's array is computed once and kept)."""
        found = self._spent_at.get(t)
        if found is None:
            i = max(int(self._row(t)), 0)
            found = self.cum[i] + self.rates[i] * max(t - self.times[i], 0) / HOUR
            found.flags.writeable = False
            if len(self._spent_at) >= SPENT_KEPT:
                self._spent_at.clear()
            self._spent_at[t] = found
        return found

    def cost(self, o: np.ndarray, t0: np.ndarray, t1: np.ndarray) -> np.ndarray:
        """USD of running offering o from t0 to t1 (element-wise, exact for step prices)."""
        return self.spent(o, t1) - self.spent(o, t0)

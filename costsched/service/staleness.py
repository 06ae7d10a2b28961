"""How old the prices behind a decision are: a price older than the config's
`prices.stale_after` (default 7 days) is named with its age where `plan` and `migrate`
use it, so that a recorded 2020 spot price is not ranked beside today's list prices
without a word."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from costsched.amounts import age
from costsched.lazy import pandas as pd
from costsched.prices import prices_at
from costsched.store import PriceStore

OFFERING_COLUMNS = ["cloud", "region", "zone", "instance_type", "market", "os"]


def stale_after_hours(config_path: str | None = None) -> float:
    """The configured `prices.stale_after`, in hours."""
    from costsched.config import load

    return float(load(config_path).config.prices.stale_after)


def age_hours(effective_at: pd.Series, at: datetime) -> pd.Series:
    """Hours from each price's effective time to `at`."""
    when = pd.Timestamp(at).tz_convert("UTC") if pd.Timestamp(at).tzinfo else \
        pd.Timestamp(at).tz_localize("UTC")
    times = pd.to_datetime(effective_at, utc=True)
    return (when - times).dt.total_seconds() / 3600


@dataclass(frozen=True)
class Stale:
    """The prices older than `stale_after_hours` among `total` used."""

    count: int
    total: int
    oldest_at: datetime
    oldest_hours: float
    stale_after_hours: float

    def note(self) -> str:
        """'2 of the 5 prices are older than 7 days (the oldest from 2020-02-29, 2,094
        days old)'; 'all 3 prices are ...', 'the price is ...'."""
        if self.total == 1:
            which = "the price is"
        elif self.count == self.total:
            which = f"all {self.total} prices are"
        else:
            which = (f"{self.count} of the {self.total} prices "
                     + ("is" if self.count == 1 else "are"))
        return (f"{which} older than {_duration(self.stale_after_hours)} (the oldest from "
                f"{self.oldest_at:%Y-%m-%d}, {age(self.oldest_hours * 3600)} old)")


def stale(frame: pd.DataFrame, at: datetime, after_hours: float) -> Stale | None:
    """The stale prices of a price frame (an `effective_at` column), or None."""
    if frame.empty:
        return None
    ages = age_hours(frame["effective_at"], at)
    old = ages > after_hours
    if not old.any():
        return None
    oldest = ages.idxmax()
    return Stale(int(old.sum()), len(frame),
                 pd.Timestamp(frame.loc[oldest, "effective_at"]).to_pydatetime(),
                 float(ages[oldest]), after_hours)


def offering_prices(store: PriceStore, keys: Iterable[tuple], at: datetime) -> pd.DataFrame:
    """The price rows as of `at` of the offerings named by their keys (cloud, region, zone,
    instance type, market, os), one row each where the store or catalog prices it."""
    keys = {tuple(k) for k in keys}
    if not keys:
        return pd.DataFrame(columns=[*OFFERING_COLUMNS, "effective_at"])
    frame = prices_at(store, at, clouds=sorted({k[0] for k in keys}),
                      instance_types=sorted({k[3] for k in keys}))
    mine = [tuple(r) in keys for r in frame[OFFERING_COLUMNS].itertuples(index=False)]
    return frame[mine]


def _duration(hours: float) -> str:
    """'7 days', '2.5 days', '36 h', '1.5 h': a whole number without its '.0'."""
    value, unit = (hours / 24, "days") if hours >= 48 else (hours, "h")
    return f"{value:,.0f} {unit}" if round(value, 1) == round(value) else f"{value:,.1f} {unit}"

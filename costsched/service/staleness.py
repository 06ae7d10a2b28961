"""How old the prices behind a decision are: a price older than the config's
`prices.stale_after` (default 7 days) is named with its age where `plan` and `migrate`
use it, so that a recorded 2020 spot price is not ranked beside today's list prices
without a word."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from costsched.lazy import pandas as pd
from costsched.price_ages import (
    Stale,
    charged_note,
    stale_after_hours,
    stale_charges,
)
from costsched.prices import prices_at
from costsched.store import PriceStore

OFFERING_COLUMNS = ["cloud", "region", "zone", "instance_type", "market", "os"]


def age_hours(effective_at: pd.Series, at: datetime) -> pd.Series:
    """Hours from each price's effective time to `at`."""
    when = pd.Timestamp(at).tz_convert("UTC") if pd.Timestamp(at).tzinfo else \
        pd.Timestamp(at).tz_localize("UTC")
    times = pd.to_datetime(effective_at, utc=True)
    return (when - times).dt.total_seconds() / 3600


def charges_note(costs: Iterable[object], now: datetime, figures: str,
                 after_hours: float | None = None) -> str:
    """`charged_note` of the placements of `costs` (`costs.JobCost`s) charged for some
    time, each from the price in effect at its end (an open one: `now`), where one is
    older than `after_hours` (default: the configuration's `prices.stale_after`, as
    `plan` reads it); '' when none is."""
    priced = [((c.cloud, c.region, c.zone, c.instance_type, c.market), since,
               c.end_at or now)
              for cost in costs
              for c, since in zip(cost.charged, cost.priced_at, strict=False)  # type: ignore[attr-defined]
              if c.hours > 0]
    if not any(since is not None for _, since, _ in priced):
        return ""
    old = stale_charges(priced, stale_after_hours() if after_hours is None else after_hours)
    return "" if old is None else charged_note(old, figures)


def stale(frame: pd.DataFrame, at: datetime, after_hours: float) -> Stale | None:
    """The stale prices of a price frame (an `effective_at` column), or None."""
    if frame.empty:
        return None
    ages = age_hours(frame["effective_at"], at)
    old = ages > after_hours
    if not old.any():
        return None
    oldest = ages.idxmax()
    clouds = tuple(sorted(set(frame.loc[old, "cloud"].astype(str)))) if "cloud" in frame \
        else ()
    return Stale(int(old.sum()), len(frame),
                 pd.Timestamp(frame.loc[oldest, "effective_at"]).to_pydatetime(),
                 float(ages[oldest]), after_hours, clouds)


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

"""GPUs at a glance: the cheapest on-demand and spot price of each GPU model and count now,
where it is, how old that price is (stored prices, else the bundled list prices and spot
snapshot), and whether the account's quota holds it (`quota`: the plan's mark, '' when it
does or is not known)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timezone

import pandas as pd

from costsched import catalog
from costsched.bundled_prices import (
    GPU_MODELS,
    OFFERING_COLUMNS,
    SUMMARY_KEY,
    age_text,  # noqa: F401 (theirs)
    gpu_order,
    old,
)
from costsched.bundled_prices import oldest_price as bundled_oldest
from costsched.default_hosts import other_hosts
from costsched.model import CLOUDS, MARKETS, InvalidInput
from costsched.optimize.quotas import over_quota
from costsched.prices import prices_at
from costsched.service.quotas import QuotaFacts
from costsched.service.stores import StoreLike, using
from costsched.service.values import as_time, choices


def gpu_offerings(store: StoreLike, gpu: str, at: datetime | str | None = None, *,
                  clouds: Sequence[str] = ()) -> pd.DataFrame:
    """Every priced offering of one GPU model as of `at` (default now): fewest GPUs first,
    then current before superseded (`superseded`), then cheapest; `age_days` is how old
    each price is."""
    when = as_time(at, "at")
    model = catalog.gpu_model_name(gpu)
    with using(store) as opened:
        frame = prices_at(opened, when, gpu_models=[model],
                          clouds=choices("cloud", clouds, CLOUDS), superseded=True)
        frame = _with_quota(opened, _with_age(frame, when))
    return frame.sort_values(["gpu_count", "superseded", "usd_per_hour", "market"],
                             ignore_index=True)[[*OFFERING_COLUMNS, "quota"]]


def gpu_summary(store: StoreLike, at: datetime | str | None = None, *,
                clouds: Sequence[str] = ()) -> pd.DataFrame:
    """One row per GPU model and count: for each market, the cheapest price now
    (`on_demand_usd_per_hour`, `spot_usd_per_hour`; current before superseded, then spot
    prices under a year old before older: `bundled_prices.OLD_DAYS`), where (`..._where`:
    cloud, region or zone and instance type), its age in days (`..._age_days`), whether it
    is superseded (`..._superseded`), its source, and why the account's quota does not
    hold one instance of it (`..._quota`, '' when it does or is not known); a GPU's other
    hosts than its default (`default_hosts`) are left out. Columns can be
    added beside these (for instance a spot risk) without changing the rest."""
    when = as_time(at, "at")
    shape = list(SUMMARY_KEY)
    with using(store) as opened:
        frame = prices_at(opened, when, clouds=choices("cloud", clouds, CLOUDS),
                          superseded=True)
        frame = frame[~other_hosts(frame["instance_type"])]  # those a job naming GPUs gets
        frame = _with_quota(opened, _with_age(frame, when))
    keys = frame[shape].drop_duplicates().sort_values(
        shape, key=lambda s: s.map(gpu_order) if s.name == "gpu_model" else s)
    out = keys.reset_index(drop=True)
    frame = frame.assign(old=[old(m, a) for m, a in zip(frame["market"], frame["age_days"],
                                                        strict=True)])
    for market in MARKETS:
        cheapest = (frame[frame["market"] == market]
                    .sort_values(["superseded", "old", "usd_per_hour"], kind="stable")
                    .drop_duplicates(shape))
        cheapest = cheapest.assign(
            where=cheapest["cloud"] + " " + cheapest["zone"].where(cheapest["zone"] != "",
                                                                    cheapest["region"])
            + " " + cheapest["instance_type"])
        fields = ("usd_per_hour", "where", "age_days", "superseded", "source", "quota")
        part = cheapest[[*shape, *fields]].astype({"superseded": object})
        part = part.rename(columns={c: f"{market}_{c}" for c in fields})
        out = out.merge(part, on=shape, how="left")
    return out


def oldest_price(store: StoreLike, *, clouds: Sequence[str] = (),
                 gpu_models: Sequence[str] = (), bundled_only: bool = False
                 ) -> datetime | None:
    """When the oldest GPU price known (bundled, or in `store` where one was made, unless
    `bundled_only`) of `clouds` and `gpu_models` (when given) took effect; None when none
    is known."""
    clouds = choices("cloud", clouds, CLOUDS)
    models = [catalog.gpu_model_name(m) for m in gpu_models]
    times = [bundled_oldest(clouds, models)]
    if not bundled_only:
        try:
            with using(store) as opened:
                span = opened.span(os="linux", cloud=clouds,
                                   gpu_model=models or list(GPU_MODELS))
        except InvalidInput:  # no store made yet: the bundled prices alone
            span = None
        if span is not None:
            times.append(datetime.fromtimestamp(span[0], timezone.utc))
    return min((t for t in times if t is not None), default=None)


def _with_age(frame: pd.DataFrame, when: datetime) -> pd.DataFrame:
    age = (pd.Timestamp(when) - pd.to_datetime(frame["effective_at"], utc=True))
    return frame.assign(age_days=age.dt.total_seconds() / 86400)


def _with_quota(store: StoreLike, frame: pd.DataFrame) -> pd.DataFrame:
    """`frame` with `quota`: why the account's quota, as last read, does not hold one
    instance of each offering ('' when it does, or is not known)."""
    facts = QuotaFacts.of(store)
    if facts.quotas.empty or frame.empty:
        return frame.assign(quota="")
    return frame.assign(quota=over_quota(facts.attach(frame)))

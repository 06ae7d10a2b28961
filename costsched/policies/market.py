"""What a policy sees at a decision time: the market view, built live from the store's
prices as of t (`view_from_prices`) or by the backtest from a replayed trace.

Offerings are in the canonical order (sorted by the offering key), so that ties between
equal offerings break the same way live and in a replay.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

import numpy as np
import pandas as pd

from costsched.model import InvalidInput, Offering, utc
from costsched.optimize.decision import egress_per_gb, offering_rates
from costsched.optimize.hazard import Evidence
from costsched.optimize.rank import tie_order
from costsched.passes import memo
from costsched.store import OFFERING_ATTRS, OFFERING_KEY
from costsched.throughput import ThroughputTable

OfferingKey = tuple[str, str, str, str, str, str]  # cloud, region, zone, type, market, os


@dataclass(frozen=True)
class MarketView:
    """What can be known at decision time t, for one job's model."""

    t: int  # epoch seconds
    offerings: pd.DataFrame  # canonical order, positional index 0..n-1
    prices: np.ndarray  # USD/hour as of t; NaN = not offered (yet)
    steps_per_second: np.ndarray  # of the job's model per offering; NaN = cannot run it
    preemptions_per_hour: np.ndarray  # 0 for on-demand
    keys: Sequence[OfferingKey]  # per row
    rows: Mapping[OfferingKey, int]  # offering key -> row
    egress: np.ndarray | None = None  # [from, to] USD/GB if precomputed (replays)

    def egress_from(self, row: int) -> np.ndarray:
        """USD per GB of copying a checkpoint from offering `row` to each offering."""
        if self.egress is not None:
            return self.egress[row]
        return egress_per_gb(self.offerings["cloud"].to_numpy(),
                             self.offerings["region"].to_numpy(), row)

    @cached_property
    def tie_order(self) -> np.ndarray:
        """Each row's position under the tie rule (`optimize.rank.tie_order`)."""
        return tie_order(self.offerings)

    def row(self, key: OfferingKey | None) -> int | None:
        """The row of an offering key; None if the key is None or not in the view."""
        return None if key is None else self.rows.get(tuple(key))  # type: ignore[arg-type]

    def key(self, row: int) -> OfferingKey:
        return self.keys[row]

    def offering(self, key: OfferingKey) -> Offering:
        """The model's Offering of a key in the view (for callers that launch it)."""
        row = self.row(key)
        if row is None:
            raise InvalidInput(f"offering {key!r}: not in the market view")
        o = self.offerings.iloc[row]
        return Offering(cloud=o["cloud"], region=o["region"], zone=o["zone"],
                        instance_type=o["instance_type"], market=o["market"],
                        gpu_model=o["gpu_model"], gpu_count=int(o["gpu_count"]),
                        vcpus=int(o.get("vcpus", 0) or 0),
                        memory_gb=float(o.get("memory_gb", 0) or 0), os=o["os"])


def canonical(offerings: pd.DataFrame) -> pd.DataFrame:
    """Offerings sorted by their key, with a fresh positional index."""
    return offerings.sort_values(OFFERING_KEY, kind="stable", ignore_index=True)


def offering_keys(offerings: pd.DataFrame) -> list[OfferingKey]:
    return list(offerings[OFFERING_KEY].astype(str).itertuples(index=False, name=None))


def throughputs(offerings: pd.DataFrame, table: ThroughputTable, model: str) -> np.ndarray:
    """Steps/s of `model` on each offering; NaN where the table has no value."""
    pairs = offerings[["gpu_model", "gpu_count"]].drop_duplicates()
    found = {}
    for gpu, count in pairs.itertuples(index=False):
        try:
            found[(gpu, int(count))] = table.get(model, gpu, int(count)).steps_per_second
        except InvalidInput:
            found[(gpu, int(count))] = np.nan
    keys = zip(offerings["gpu_model"], offerings["gpu_count"].astype(int), strict=True)
    return np.array([found[k] for k in keys], dtype=float)


def share_instances(offerings: pd.DataFrame) -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """`offerings` plus a one-GPU share of every multi-GPU instance, in canonical order.

    A share of an n-GPU instance is one of its GPUs at 1/n of its price (other jobs are
    assumed to fill the rest): instance type `p3.16xlarge[1/8]`, GPU count 1, 1/n of its
    vCPUs and memory, and `shared` True (False on the input's rows). Returns (offerings,
    source, divisor): row i is the input's row `source[i]`, its prices divided by
    `divisor[i]` (1 for the input's own rows).
    """
    counts = offerings["gpu_count"].to_numpy(dtype=int)
    multi = np.flatnonzero(counts > 1)
    n = counts[multi]
    shares = offerings.iloc[multi].copy()
    shares["instance_type"] = [f"{t}[1/{k}]" for t, k in
                               zip(shares["instance_type"], n, strict=True)]
    shares["gpu_count"] = 1
    shares["shared"] = True
    for column in ("usd_per_hour", "memory_gb"):
        if column in shares.columns:
            shares[column] = shares[column].to_numpy(dtype=float) / n
    if "vcpus" in shares.columns:
        shares["vcpus"] = shares["vcpus"].to_numpy() // n
    if "offering_id" in shares.columns:  # a share is not a stored offering
        shares["offering_id"] = None
    both = pd.concat([offerings.assign(shared=False), shares], ignore_index=True)
    source = np.r_[np.arange(len(offerings)), multi]
    divisor = np.r_[np.ones(len(offerings)), n.astype(float)]
    order = both.sort_values(OFFERING_KEY, kind="stable").index.to_numpy()
    return both.iloc[order].reset_index(drop=True), source[order], divisor[order]


def view_from_prices(frame: pd.DataFrame, t: datetime, table: ThroughputTable, model: str,
                     measured_rates: pd.DataFrame | Evidence | None = None,
                     shared: bool = False) -> MarketView:
    """The view of `model` from a `costsched.prices.prices_at` frame taken at `t`; with
    `shared`, one-GPU shares of multi-GPU instances are offered too (`share_instances`)."""
    # The on-demand reference price breaks ties (`optimize.rank.tie_order`) where known.
    reference = ["on_demand_usd_per_hour"] if "on_demand_usd_per_hour" in frame.columns else []
    offerings = canonical(frame[[*OFFERING_KEY, *OFFERING_ATTRS, "usd_per_hour", *reference]])
    offerings["gpu_count"] = offerings["gpu_count"].astype(int)
    if shared:
        offerings = share_instances(offerings)[0]
    keys = offering_keys(offerings)
    rates = _rates(offerings, keys, t, shared, measured_rates)
    return MarketView(
        t=int(utc(t).timestamp()), offerings=offerings,
        prices=offerings["usd_per_hour"].to_numpy(dtype=float),
        steps_per_second=throughputs(offerings, table, model),
        preemptions_per_hour=rates, keys=keys,
        rows={k: i for i, k in enumerate(keys)},
    )


def _rates(offerings: pd.DataFrame, keys: list[OfferingKey], t: datetime, shared: bool,
           measured: pd.DataFrame | Evidence | None) -> np.ndarray:
    """Each offering's preemption rate per hour: once per pass for the same evidence and
    offerings (every job of a pass is decided from the same market; the evidence object is
    kept with the result, so its id names it while the pass lasts)."""
    key = ("view_rates", id(measured), utc(t), shared, hash(tuple(keys)))
    _, rates = memo(key, lambda: (measured, offering_rates(offerings, measured)[
        "preemptions_per_hour"].to_numpy(dtype=float)), shared=True)
    return rates.copy()

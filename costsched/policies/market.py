"""What a policy sees at a decision time: the market view, built live from the store's
prices as of t (`view_from_prices`) or by the backtest from a replayed trace.

Offerings are in the canonical order (sorted by the offering key), so that ties between
equal offerings break the same way live and in a replay.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from typing import TypeVar

from costsched.frames import OFFERING_ATTRS, OFFERING_KEY
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.model import InvalidInput, Offering, utc
from costsched.optimize.decision import egress_per_gb, offering_rates
from costsched.optimize.hazard import Evidence
from costsched.optimize.rank import tie_order
from costsched.passes import memo
from costsched.throughput import ThroughputTable

OfferingKey = tuple[str, str, str, str, str, str]  # cloud, region, zone, type, market, os
T = TypeVar("T")


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
    # What policies derive from the view alone (not from a job's steps left or placement),
    # kept for the other jobs decided from it: see `shared`.
    derived: dict = field(default_factory=dict, compare=False, repr=False)

    def shared(self, key: Hashable, compute: Callable[[], T]) -> T:
        """`compute()` once per `key` for this view and the views of other models made from
        it (`for_model`): the jobs of a pass share what only their constraints decide.
        Callers only read the value."""
        if key not in self.derived:
            self.derived[key] = compute()
        return self.derived[key]

    def egress_from(self, row: int) -> np.ndarray:
        """USD per GB of copying a checkpoint from offering `row` to each offering."""
        if self.egress is not None:
            return self.egress[row]
        return self.shared(("egress_from", row), lambda: _read_only(egress_per_gb(
            self.offerings["cloud"].to_numpy(), self.offerings["region"].to_numpy(), row,
            self.offerings["zone"].to_numpy() if "zone" in self.offerings else None)))

    def for_model(self, table: ThroughputTable, model: str) -> MarketView:
        """This market seen by another model: its throughputs per offering, the rest
        (prices, rates, tie order, what `shared` kept) the same objects."""
        pairs, index = self.shared("gpu_pairs", lambda: _gpu_pairs(self.offerings))
        speeds = np.array([_steps_per_second(table, model, gpu, count) for gpu, count in pairs],
                          dtype=float)
        view = replace(self, steps_per_second=speeds[index] if len(pairs) else
                       np.full(len(self.keys), np.nan))
        view.__dict__["tie_order"] = self.tie_order  # the cached property, computed once
        return view

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
        return self.shared(("offering", row), lambda: self._offering(row))

    def _offering(self, row: int) -> Offering:
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
    pairs, index = _gpu_pairs(offerings)
    if not pairs:
        return np.full(len(offerings), np.nan)
    return np.array([_steps_per_second(table, model, gpu, count) for gpu, count in pairs],
                    dtype=float)[index]


def _gpu_pairs(offerings: pd.DataFrame) -> tuple[list[tuple[str, int]], np.ndarray]:
    """The distinct (GPU model, count) pairs of `offerings`, and each row's pair."""
    codes, uniques = pd.factorize(pd.MultiIndex.from_arrays(
        [offerings["gpu_model"].astype(str), offerings["gpu_count"].astype(int)]))
    return [(str(g), int(c)) for g, c in uniques], codes


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def _steps_per_second(table: ThroughputTable, model: str, gpu: str, count: int) -> float:
    try:
        return table.get(model, gpu, count).steps_per_second
    except InvalidInput:
        return np.nan


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
    return market_view(frame, t, measured_rates, shared).for_model(table, model)


def market_view(frame: pd.DataFrame, t: datetime,
                measured_rates: pd.DataFrame | Evidence | None = None,
                shared: bool = False) -> MarketView:
    """The market of a `costsched.prices.prices_at` frame taken at `t`, for no model yet
    (every throughput NaN): `MarketView.for_model` gives each model's view of it."""
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
        steps_per_second=np.full(len(keys), np.nan),
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

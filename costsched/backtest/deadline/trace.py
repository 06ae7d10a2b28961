"""An availability trace: spot there or not per zone and tick, with the prices of each tick.

`available[z, t]` says whether zone z had spot capacity during tick t, which covers
[start + t * tick, start + (t + 1) * tick). Prices are USD per instance-hour per zone and
tick: the store's as-of prices where it has them for the offering at that time, else the
reference prices below, else the values a caller gives.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from functools import cached_property, reduce
from typing import Any

import numpy as np
import pandas as pd

from costsched import catalog, clouds
from costsched.model import InvalidInput
from costsched.optimize.decision import egress_per_gb
from costsched.store import PriceStore, to_epoch_seconds
from costsched.vocabulary import did_you_mean

# Reference prices where the store has none for the trace's time. On-demand: the bundled
# catalog's list price of the instance type in the zone's region (p3.2xlarge: $3.06/h in
# us-east-1, us-east-2 and us-west-2). Spot: this share of it; 30% gives p3.2xlarge
# $0.918/h, the low end of the $0.92-1.20/h its spot price ran at in spring 2023 (the
# price note of the public 2023 AWS V100 availability traces of "Can't Be Late", NSDI 2024).
REFERENCE_SPOT_SHARE = 0.30
REFERENCE_SOURCE = ("on-demand: catalog list price; spot: 30% of it (p3.2xlarge spot "
                    "$0.92-1.20/h in spring 2023, per the 2023 AWS V100 availability traces)")
STORED_OS = ("linux", "linux-vpc")


@dataclass(frozen=True)
class AvailabilityTrace:
    tick: int  # seconds per tick
    start: pd.Timestamp  # UTC start of tick 0
    zones: tuple[str, ...]
    regions: tuple[str, ...]  # per zone
    cloud: str
    available: np.ndarray  # bool (zones, ticks)
    spot_price: np.ndarray  # USD/h (zones, ticks)
    on_demand_price: np.ndarray  # USD/h (zones, ticks)
    price_source: str = REFERENCE_SOURCE
    # bool (zones, ticks): where the recording covers the zone (None: everywhere). Outside
    # it the trace does not know whether there was spot; `available` says none there.
    covered: np.ndarray | None = None
    # USD/GB from zone i to zone j where given (`with_egress`); None: the clouds' rates.
    egress: np.ndarray | None = None

    @classmethod
    def from_arrays(cls, available: np.ndarray, zones: Sequence[str], tick: int, *,
                    start: datetime | str = "2023-02-15", cloud: str | None = None,
                    spot_price: float | np.ndarray | None = None,
                    on_demand_price: float | np.ndarray | None = None,
                    instance_type: str = "p3.2xlarge",
                    unpriced: bool = False) -> AvailabilityTrace:
        """From a (zones, ticks) matrix; prices as scalars, per zone, or per zone and tick
        (default: the reference prices of `instance_type`). `unpriced`: leave NaN where
        there is no reference price (a region the catalog does not list), for prices to
        come (`priced_from`, which checks that none is left)."""
        available = np.asarray(available, dtype=bool)
        if available.ndim != 2 or available.shape[0] != len(zones) or available.shape[1] < 1:
            raise InvalidInput(f"availability matrix {available.shape}: expected one row per "
                               f"zone ({len(zones)}) and at least one tick")
        tick = _whole_seconds("tick", tick)
        found = [clouds.zone_region(z) for z in zones]
        unknown = [z for z, f in zip(zones, found, strict=True) if f is None]
        if unknown:
            raise InvalidInput(f"zone {unknown[0]!r}: expected a zone name such as us-east-1a")
        names = {f[0] for f in found if f is not None}
        if cloud is None:
            if len(names) > 1:
                raise InvalidInput(f"zones {', '.join(zones)}: expected zones of one cloud")
            cloud = names.pop()
        regions = tuple(f[1] for f in found if f is not None)
        shape = available.shape
        od_ref, spot_ref = reference_prices(cloud, instance_type, regions)
        od = _grid(on_demand_price, od_ref, shape, "on_demand_price", unpriced)
        spot = _grid(spot_price, spot_ref, shape, "spot_price", unpriced)
        return cls(tick, pd.Timestamp(start, tz="UTC") if pd.Timestamp(start).tzinfo is None
                   else pd.Timestamp(start).tz_convert("UTC"), tuple(zones), regions, cloud,
                   available, spot, od)

    @classmethod
    def from_counts(cls, counts: np.ndarray, zones: Sequence[str], tick: int, nodes: int,
                    **options: Any) -> AvailabilityTrace:
        """The trace of a gang of `nodes` instances from a (zones, ticks) matrix of how many
        instances of a requested group were running in each tick (the 16-node AWS traces):
        spot is there for the gang where at least `nodes` ran. Prices stay per instance;
        `options` as `from_arrays`."""
        counts = np.asarray(counts)
        if counts.ndim != 2 or not np.issubdtype(counts.dtype, np.number) \
                or (counts < 0).any():
            raise InvalidInput(f"instance counts {counts.shape}: expected a (zones, ticks) "
                               "matrix of whole numbers >= 0")
        if not (isinstance(nodes, (int, np.integer)) and nodes >= 1):
            raise InvalidInput(f"nodes {nodes!r}: expected a whole number >= 1")
        return cls.from_arrays(counts >= nodes, zones, tick, **options)

    @classmethod
    def from_intervals(cls, frame: pd.DataFrame, tick: int | None = None,
                       unpriced: bool = False,
                       **prices: float | np.ndarray | None) -> AvailabilityTrace:
        """From stored intervals (zone, start, end, available, ...; one kind). A tick takes
        the state of the interval holding its start; ticks no interval covers are
        unavailable and not `covered`. `tick` defaults to the largest step all interval
        bounds fall on. `unpriced`: as `from_arrays`."""
        if frame.empty:
            raise InvalidInput("no spot availability intervals in the chosen period and zones")
        start_s = to_epoch_seconds(frame["start"])
        end_s = to_epoch_seconds(frame["end"])
        t0, t1 = int(start_s.min()), int(end_s.max())
        tick = _whole_seconds("tick", interval_tick(frame) if tick is None else tick)
        ticks = max(1, -(-(t1 - t0) // tick))
        zones = sorted(set(frame["zone"]))
        available = np.zeros((len(zones), ticks), dtype=bool)
        covered = np.zeros_like(available)
        at = t0 + np.arange(ticks) * tick
        zone_col = frame["zone"].to_numpy()
        up = frame["available"].to_numpy(dtype=bool)
        for i, zone in enumerate(zones):
            mine = np.flatnonzero(zone_col == zone)
            mine = mine[np.argsort(start_s[mine], kind="stable")]
            row = np.searchsorted(start_s[mine], at, side="right") - 1
            inside = (row >= 0) & (at < end_s[mine][np.maximum(row, 0)])
            available[i] = inside & up[mine][np.maximum(row, 0)]
            covered[i] = inside
        cloud = frame["cloud"].iloc[0] if "cloud" in frame.columns else None
        kwargs = {"instance_type": frame["instance_type"].iloc[0]} \
            if "instance_type" in frame.columns else {}
        trace = cls.from_arrays(available, zones, tick, start=pd.Timestamp(t0, unit="s",
                                tz="UTC"), cloud=cloud, **kwargs, **prices, unpriced=unpriced)
        return replace(trace, covered=None if covered.all() else covered)

    @classmethod
    def from_store(cls, store: PriceStore, *, zones: Sequence[str] | None = None,
                   instance_type: str = "p3.2xlarge", start: datetime | None = None,
                   end: datetime | None = None, tick: int | None = None,
                   spot_price: float | None = None,
                   on_demand_price: float | None = None,
                   kind: str = "availability") -> AvailabilityTrace:
        """The stored availability of `instance_type` spot in `zones` (all stored by
        default; `kind` "preemption" for recordings of a kept instance), priced from the
        store's price history where it covers the trace (as-of per tick), else by the
        reference prices; a price given overrides both."""
        frame = store.spot_availability.intervals(
            zones=list(zones) if zones else None, instance_type=instance_type,
            kind=kind, start=start, end=end)
        if frame.empty:
            where = f" in {', '.join(zones)}" if zones else ""
            raise InvalidInput(f"no stored spot availability of {instance_type}{where}: "
                               + _stored_instead(store, instance_type, kind, zones))
        if zones:
            missing = sorted(set(zones) - set(frame["zone"]))
            if missing:
                known = ", ".join(sorted(set(store.spot_availability.intervals(
                    instance_type=instance_type)["zone"])))
                raise InvalidInput(f"zone {missing[0]!r}: no stored availability of "
                                   f"{instance_type}; stored zones: {known}")
        trace = cls.from_intervals(frame, tick, unpriced=True)
        return trace.priced_from(store, instance_type, spot_price, on_demand_price)

    def priced_from(self, store: PriceStore, instance_type: str, spot_price: float | None,
                    on_demand_price: float | None) -> AvailabilityTrace:
        """The same trace with the store's as-of prices wherever it has them (per tick and
        zone: the zone's own price, else its region's), the prices given everywhere; a
        tick left without a price (a region without a reference price, before the store's
        first price there) is an error naming the zone and the option to give."""
        end = self.start + pd.Timedelta(seconds=self.tick * self.ticks)
        history = store.history(None, end.to_pydatetime(), cloud=self.cloud,
                                instance_type=instance_type, os=list(STORED_OS))
        spot, od = self.spot_price.copy(), self.on_demand_price.copy()
        used = False
        if not history.empty:
            times = to_epoch_seconds(self.start + pd.to_timedelta(
                np.arange(self.ticks) * self.tick, unit="s"))
            for i, (zone, region) in enumerate(zip(self.zones, self.regions, strict=True)):
                for market, grid in (("spot", spot), ("on_demand", od)):
                    rows = history[(history["market"] == market)
                                   & (history["region"] == region)
                                   & history["zone"].isin([zone, ""])]
                    if rows.empty:
                        continue
                    rows = rows.sort_values("effective_at", kind="stable")
                    stamps = to_epoch_seconds(rows["effective_at"])
                    j = np.searchsorted(stamps, times, side="right") - 1
                    found = j >= 0
                    grid[i, found] = rows["usd_per_hour"].to_numpy(dtype=float)[j[found]]
                    used = used or bool(found.any())
        if spot_price is not None:
            spot[:] = _positive("spot_price", spot_price)
        if on_demand_price is not None:
            od[:] = _positive("on_demand_price", on_demand_price)
        for name, grid in (("on_demand_price", od), ("spot_price", spot)):
            missing = np.isnan(grid).any(axis=1)
            if missing.any():
                i = int(np.flatnonzero(missing)[0])
                raise InvalidInput(
                    f"{name}: no price of {instance_type} in {self.zones[i]} "
                    f"({self.regions[i]}) for the whole trace: none stored from its start "
                    f"and no reference price for the region; give one")
        source = self.price_source
        if used:
            source = "stored prices as of each tick where stored; elsewhere " + source
        if spot_price is not None or on_demand_price is not None:
            source = "given prices" + ("" if spot_price is not None and on_demand_price
                                       is not None else "; otherwise " + source)
        return replace(self, spot_price=spot, on_demand_price=od, price_source=source)

    # --- derived arrays ---------------------------------------------------------------

    @property
    def ticks(self) -> int:
        return self.available.shape[1]

    @cached_property
    def region_codes(self) -> np.ndarray:
        names = sorted(set(self.regions))
        return np.array([names.index(r) for r in self.regions], dtype=np.int64)

    @cached_property
    def run_before(self) -> np.ndarray:
        """Ticks each zone's spot has been available without a break, up to and including
        tick t (0 where it is not available at t)."""
        return _runs(self.available)

    @cached_property
    def run_after(self) -> np.ndarray:
        """Ticks each zone's spot stays available from tick t on (0 where not at t)."""
        return _runs(self.available[:, ::-1])[:, ::-1]

    def move_usd(self, checkpoint_gb: float) -> np.ndarray:
        """USD of copying a checkpoint from zone i to zone j: the rates given (`egress`),
        else the clouds' egress by region pair (`optimize.decision.egress_per_gb`). Within
        a region it is free: the checkpoint is restored from the region's object store,
        which a zone of the same region reads at no charge (the optimum relies on it)."""
        if self.egress is not None:
            return checkpoint_gb * self.egress
        cloud = np.array([self.cloud] * len(self.zones), dtype=object)
        return checkpoint_gb * egress_per_gb(cloud, np.array(self.regions, dtype=object))

    def with_egress(self, rates: Mapping[tuple[str, str], float]) -> AvailabilityTrace:
        """The same trace with these USD/GB between regions (from, to); pairs not given
        keep the clouds' rates, and a region to itself stays free."""
        per_gb = self.move_usd(1.0).copy()
        for i, a in enumerate(self.regions):
            for j, b in enumerate(self.regions):
                if a != b and (a, b) in rates:
                    per_gb[i, j] = rates[(a, b)]
        return replace(self, egress=per_gb)

    def egress_rates(self) -> list[dict]:
        """USD per GB between the trace's regions, as its moves are charged."""
        per_gb = self.move_usd(1.0)
        first = {r: self.regions.index(r) for r in dict.fromkeys(self.regions)}
        return [{"from_region": a, "to_region": b, "usd_per_gb": float(per_gb[i, j])}
                for a, i in first.items() for b, j in first.items() if a != b]

    def subset(self, zones: Sequence[str]) -> AvailabilityTrace:
        """The trace of some of its zones, in the order given."""
        missing = [z for z in zones if z not in self.zones]
        if missing:
            raise InvalidInput(f"zone {missing[0]!r}: expected one of {', '.join(self.zones)}")
        keep = [self.zones.index(z) for z in zones]
        covered = None if self.covered is None else self.covered[keep]
        egress = None if self.egress is None else self.egress[np.ix_(keep, keep)]
        return replace(self, zones=tuple(zones), regions=tuple(self.regions[i] for i in keep),
                       available=self.available[keep], spot_price=self.spot_price[keep],
                       on_demand_price=self.on_demand_price[keep],
                       covered=None if covered is None or covered.all() else covered,
                       egress=egress)

    def with_booked_zone(self, zone: str, region: str) -> tuple[AvailabilityTrace, int]:
        """The trace with one more zone, capacity booked in `zone` of `region` (a region of
        the trace): never spot, on-demand at the region's price (the booked capacity is
        free while it is booked: `engine.BookedRun`), moves priced as from and to the
        region's first zone; and its index."""
        if region not in self.regions:
            raise InvalidInput(f"booked zone {zone!r}: its region {region} has no zone in "
                               f"the trace ({', '.join(self.zones)})")
        like = self.regions.index(region)
        grow = lambda a, row: np.concatenate([a, row[None, :]])  # noqa: E731
        egress = None
        if self.egress is not None:
            egress = grow(self.egress, self.egress[like])
            egress = np.concatenate([egress, egress[:, like][:, None]], axis=1)
        covered = (None if self.covered is None else
                   grow(self.covered, np.ones(self.ticks, dtype=bool)))
        return replace(self, zones=(*self.zones, f"{zone} (booked)"),
                       regions=(*self.regions, region),
                       available=grow(self.available, np.zeros(self.ticks, dtype=bool)),
                       spot_price=grow(self.spot_price, self.on_demand_price[like]),
                       on_demand_price=grow(self.on_demand_price, self.on_demand_price[like]),
                       covered=covered, egress=egress), len(self.zones)

    def window(self, first: int, end: int) -> AvailabilityTrace:
        """Ticks [first, end) of the trace, as a trace starting at tick `first`."""
        if not 0 <= first < end <= self.ticks:
            raise InvalidInput(f"ticks {first}..{end}: expected a window of the trace's "
                               f"{self.ticks} ticks")
        covered = None if self.covered is None else self.covered[:, first:end]
        return replace(self, start=self.start + pd.Timedelta(seconds=first * self.tick),
                       available=self.available[:, first:end],
                       spot_price=self.spot_price[:, first:end],
                       on_demand_price=self.on_demand_price[:, first:end],
                       covered=None if covered is None or covered.all() else covered)

    def start_ticks(self, span: int) -> np.ndarray:
        """The ticks a run of `span` ticks may start at: where every zone's recording
        covers the whole run (every tick up to `ticks - span` when all is covered)."""
        if self.covered is None:
            return np.arange(max(self.ticks - span + 1, 0))
        covered_after = _runs(self.covered.all(axis=0)[None, ::-1])[0, ::-1]
        return np.flatnonzero(covered_after >= span)

    def coverage(self) -> str | None:
        """What each zone's recording covers, where they differ (None where all cover the
        whole trace)."""
        if self.covered is None:
            return None
        parts = []
        for zone, row in zip(self.zones, self.covered, strict=True):
            ticks = np.flatnonzero(row)
            if len(ticks) == 0:
                parts.append(f"{zone} nothing")
                continue
            first = self.start + pd.Timedelta(seconds=int(ticks[0]) * self.tick)
            last = self.start + pd.Timedelta(seconds=int(ticks[-1] + 1) * self.tick)
            gaps = "" if len(ticks) == ticks[-1] - ticks[0] + 1 else " with gaps"
            parts.append(f"{zone} {first:%Y-%m-%d %H:%M}..{last:%Y-%m-%d %H:%M}{gaps}")
        return "zones cover different periods: " + "; ".join(parts)

    def padded(self, ticks: int) -> AvailabilityTrace:
        """At least `ticks` ticks: after its end no spot, prices held at their last value."""
        extra = ticks - self.ticks
        if extra <= 0:
            return self
        def hold(a: np.ndarray) -> np.ndarray:
            return np.concatenate([a, np.repeat(a[:, -1:], extra, axis=1)], axis=1)
        none = np.zeros((len(self.zones), extra), dtype=bool)
        available = np.concatenate([self.available, none], axis=1)
        covered = (None if self.covered is None
                   else np.concatenate([self.covered, none], axis=1))
        return replace(self, available=available, spot_price=hold(self.spot_price),
                       on_demand_price=hold(self.on_demand_price), covered=covered)


def interval_tick(frame: pd.DataFrame) -> int:
    """The largest step all the intervals' bounds fall on, counted from the first start."""
    start_s = to_epoch_seconds(frame["start"])
    end_s = to_epoch_seconds(frame["end"])
    t0, t1 = int(start_s.min()), int(end_s.max())
    return int(reduce(math.gcd, np.unique(np.concatenate([start_s, end_s]) - t0).tolist(),
                      0)) or max(t1 - t0, 1)


def reference_prices(cloud: str, instance_type: str,
                     regions: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """(on-demand, spot) reference USD/h per region given (NaN where the catalog has no
    list price for the type in that region)."""
    listed = catalog.on_demand_prices()
    listed = listed[(listed["cloud"] == cloud) & (listed["instance_type"] == instance_type)]
    by_region = dict(zip(listed["region"], listed["usd_per_hour"].astype(float), strict=True))
    od = np.array([by_region.get(r, np.nan) for r in regions], dtype=float)
    return od, od * REFERENCE_SPOT_SHARE


def _grid(value: float | np.ndarray | None, reference: np.ndarray, shape: tuple[int, int],
          name: str, unpriced: bool = False) -> np.ndarray:
    if value is None:
        if np.isnan(reference).any() and not unpriced:
            raise InvalidInput(f"{name}: no reference price for a zone's region; give one")
        return np.repeat(reference[:, None], shape[1], axis=1).astype(float)
    array = np.asarray(value, dtype=float)
    if array.ndim == 1:
        array = array[:, None]
    try:
        grid = np.broadcast_to(array, shape).astype(float)
    except ValueError:
        raise InvalidInput(f"{name} of shape {array.shape}: expected a number, one per zone "
                           f"or one per zone and tick {shape}") from None
    if not (np.isfinite(grid).all() and (grid > 0).all()):
        raise InvalidInput(f"{name}: expected positive USD per hour")
    return grid


def _positive(name: str, value: float) -> float:
    if not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise InvalidInput(f"{name} {value!r}: expected a positive USD per hour")
    return float(value)


def _whole_seconds(name: str, value: float) -> int:
    if not (value > 0 and float(value).is_integer()):
        raise InvalidInput(f"{name} {value!r}: expected a whole number of seconds > 0")
    return int(value)


def _runs(available: np.ndarray) -> np.ndarray:
    """Length of the run of True ending at each position, per row."""
    z, n = available.shape
    idx = np.broadcast_to(np.arange(1, n + 1), (z, n))
    last_false = np.maximum.accumulate(np.where(available, 0, idx), axis=1)
    return np.where(available, idx - last_false, 0)


def _stored_instead(store: PriceStore, instance_type: str, kind: str,
                    zones: Sequence[str] | None) -> str:
    """What the store has instead (the instance types, or the zones of this one, of
    `kind`), with the close ones; or how to add availability when it has none."""
    stored = store.spot_availability.summary()
    stored = stored[stored["kind"] == kind]
    if stored.empty:
        return f"the store has no {kind} trace: import one first (`costsched prices import`)"
    types = sorted(set(stored["instance_type"]))
    if instance_type not in types:
        return (f"expected an instance type of the stored traces: {', '.join(types)}"
                f"{did_you_mean(instance_type, types)}")
    known = sorted(set(stored.loc[stored["instance_type"] == instance_type, "zone"]))
    asked = next(iter(zones or ()), "")
    return f"stored zones: {', '.join(known)}{did_you_mean(asked, known)}"

"""The decision model: what a job's remaining steps are expected to cost and take on an
offering, and what moving it to another offering costs. The planner's ranking, every
policy and the backtest's accounting use this module; nothing else models restarts.

Spot risk (stated, exact under its assumptions): preemptions arrive as a Poisson process of
rate `lam` per hour while the job runs (the offering's hazard: `costsched.optimize.hazard`,
the one place rates come from); the job checkpoints every `tau` hours of work at
no cost; after a preemption it loses the work since its last checkpoint and spends
`restart` hours (`Overheads.restart_hours`: relaunch, warm-up, restoring the checkpoint;
for a gang, its nodes' rendezvous too: `Overheads.gang`) before running again. A segment
of `tau` hours of work then takes, in expectation,

    E[segment] = (exp(lam * tau) - 1) * (1 / lam + restart)

and W hours of work (n = floor(W / tau) full segments and a remainder r) take
(n * expm1(lam * tau) + expm1(lam * r)) * (1 / lam + restart), which tends to W as lam -> 0.
The instance is billed for all of that time (a slight overestimate: a relaunch is not billed
until the new instance starts). Deadlines compare against this expectation.

A planned move from offering i to j stops the job on i, copies its checkpoint and restarts
on j. It costs the idle hours billed on j (`Overheads.move_idle_hours`: restart, warm-up,
copy, work since the last checkpoint done again), the overlap billed on i while it writes
the checkpoint, and the checkpoint's egress as the source cloud bills it
(`costsched.clouds.transfer`): the inter-zone rate between zones of a region, the pair's
listed rate between regions of a cloud (AWS lists one per pair), the source cloud's
internet rate across clouds. `move_price` returns it itemised (`MovePrice`); every policy,
the backtests and the reports price a move there. The overheads are stated assumptions,
not measurements, except the lost work where the caller measures it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cache
from typing import NamedTuple

from costsched import clouds
from costsched.clouds.transfer import pair_usd_per_gb
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.optimize.hazard import Evidence, offering_hazards

DEFAULT_CHECKPOINT_HOURS = 0.5


@dataclass(frozen=True, slots=True)
class Overheads:
    """The restart model, for recoveries after a preemption and for planned moves."""

    restart_minutes: float = 10.0  # boot and set-up of a new instance
    warmup_minutes: float = 5.0  # to full speed
    transfer_gbps: float = 1.0  # checkpoint copy and restore
    overlap_minutes: float = 0.0  # old instance billed while it checkpoints (planned move)
    # Work redone after a planned move; None = half the job's checkpoint interval.
    lost_work_minutes: float | None = None
    egress: bool = True  # charge the checkpoint's egress on a move
    # A gang's nodes finding one another once all are up (torchrun's rendezvous, the
    # collectives' set-up): part of a gang's every restart and move (`gang`).
    rendezvous_minutes: float = 3.0

    @classmethod
    def free(cls) -> Overheads:
        """Every move and every restart free (the assumption of published trace analyses)."""
        return cls(0.0, 0.0, math.inf, 0.0, 0.0, egress=False, rendezvous_minutes=0.0)

    def gang(self, nodes: int) -> Overheads:
        """The overheads of a job of `nodes` instances: a gang's restart is the boot and
        set-up, then the rendezvous (unchanged for one node, or once applied)."""
        if nodes <= 1 or not self.rendezvous_minutes:
            return self
        return replace(self, restart_minutes=self.restart_minutes + self.rendezvous_minutes,
                       rendezvous_minutes=0.0)

    def restart_hours(self, checkpoint_gb: float) -> float:
        """Hours from a stop to full speed on a new instance: boot, warm-up, copy."""
        copy = checkpoint_gb * 8 / self.transfer_gbps / 3600 if checkpoint_gb > 0 else 0.0
        return (self.restart_minutes + self.warmup_minutes) / 60 + copy

    def restart_parts(self, checkpoint_gb: float, nodes: int = 1) -> dict[str, float]:
        """`restart_hours` of a job of `nodes` instances item by item (hours), as
        `gang(nodes).restart_hours` adds them: "boot" (boot and set-up), "warmup", "copy"
        (the checkpoint at the transfer rate) and, for a gang not yet `gang`ed,
        "rendezvous"."""
        copy = checkpoint_gb * 8 / self.transfer_gbps / 3600 if checkpoint_gb > 0 else 0.0
        parts = {"boot": self.restart_minutes / 60, "warmup": self.warmup_minutes / 60,
                 "copy": copy}
        if nodes > 1 and self.rendezvous_minutes:
            parts["rendezvous"] = self.rendezvous_minutes / 60
        return parts

    def restart_words(self, checkpoint_gb: float, nodes: int, boot_key: str) -> str:
        """`restart_parts` in words, each with the setting it comes from: '0.1 min boot
        and set-up (BOOT_KEY) + 5 min warm-up ([migration] warmup_minutes) + ...'."""
        parts = self.restart_parts(checkpoint_gb, nodes)
        said = [f"{_minutes(parts['boot'])} boot and set-up ({boot_key})",
                f"{_minutes(parts['warmup'])} warm-up ([migration] warmup_minutes)"]
        if parts["copy"]:
            said.append(f"{_minutes(parts['copy'])} to copy the {checkpoint_gb:g} GB "
                        f"checkpoint at {self.transfer_gbps:g} Gbit/s ([migration] "
                        "transfer_gbps)")
        if "rendezvous" in parts:
            # No setting changes it: said as the fixed assumption it is, and where.
            said.append(f"{_minutes(parts['rendezvous'])} for the {nodes} nodes' rendezvous "
                        "(a fixed assumption, no setting: docs/multi-node.md)")
        return " + ".join(said)

    def lost_work_hours(self, checkpoint_hours: float) -> float:
        if self.lost_work_minutes is None:
            return checkpoint_hours / 2
        return self.lost_work_minutes / 60

    def move_idle_hours(self, checkpoint_gb: float, checkpoint_hours: float) -> float:
        """Hours billed on the new instance of a planned move without progress."""
        return self.restart_hours(checkpoint_gb) + self.lost_work_hours(checkpoint_hours)

    @property
    def overlap_hours(self) -> float:
        return self.overlap_minutes / 60

    def egress_gb(self, checkpoint_gb: float) -> float:
        """GB of egress charged per move."""
        return checkpoint_gb if self.egress else 0.0


# --- expected hours and cost of the remaining work ------------------------------------


@dataclass(frozen=True, slots=True)
class Outcome:
    """Expected hours and cost of jobs (rows) on offerings (columns); NaN where unusable."""

    work_hours: np.ndarray
    hours: np.ndarray
    cost: np.ndarray


def expected_hours(work_hours: np.ndarray | float, rate: np.ndarray | float,
                   checkpoint_hours: np.ndarray | float,
                   restart: np.ndarray | float) -> np.ndarray:
    """Expected wall-clock hours to finish `work_hours` of uninterrupted work (broadcasts)."""
    w = np.asarray(work_hours, dtype=float)
    lam = np.asarray(rate, dtype=float)
    tau = np.asarray(checkpoint_hours, dtype=float)
    full = np.floor(w / tau)
    rest = w - full * tau
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        risky = (full * np.expm1(lam * tau) + np.expm1(lam * rest)) * (1 / lam + restart)
    return np.where(lam > 0, risky, w)


def expected_hours_risky(work_hours: np.ndarray, rate: np.ndarray,
                         checkpoint_hours: np.ndarray, restart: np.ndarray) -> np.ndarray:
    """`expected_hours` for rates that are all > 0, computed in place over a fresh
    (jobs, offerings) array: the hot loop of ranking many jobs at once."""
    with np.errstate(invalid="ignore", over="ignore"):
        full = np.floor(work_hours / checkpoint_hours)
        rest = full * checkpoint_hours
        np.subtract(work_hours, rest, out=rest)
        rest *= rate
        np.expm1(rest, out=rest)
        full *= _expm1_outer(checkpoint_hours, rate)
        full += rest
        full *= 1 / rate + restart
    return full


def outcomes(steps: np.ndarray | float, steps_per_second: np.ndarray,
             usd_per_hour: np.ndarray, preemptions_per_hour: np.ndarray,
             checkpoint_hours: np.ndarray | float,
             restart_hours: np.ndarray | float,
             start_hours: np.ndarray | float = 0.0) -> Outcome:
    """Expected hours and cost of `steps` on offerings at today's prices. Broadcasting:
    per-job arguments shaped (J, 1) against per-offering ones (O,). `start_hours`: a job
    to be started (a plan's): the hours before its first step (boot and set-up, warm-up),
    billed once at the offering's price, counted in its hours and cost; 0 for the rest of
    a job that runs already."""
    with np.errstate(divide="ignore", invalid="ignore"):
        work = np.asarray(steps, dtype=float) / np.asarray(steps_per_second, dtype=float) / 3600
    work = np.where(np.isfinite(work) & (work > 0), work, np.nan)
    hours = expected_hours(work, preemptions_per_hour, checkpoint_hours, restart_hours)
    hours = hours + np.asarray(start_hours, dtype=float)
    return Outcome(work, hours, hours * np.asarray(usd_per_hour, dtype=float))


def _expm1_outer(tau: np.ndarray, rate: np.ndarray) -> np.ndarray:
    """expm1(tau * rate) for a column of per-job intervals against per-offering rates; jobs
    share a few checkpoint intervals, so compute each distinct row once."""
    tau = np.asarray(tau, dtype=float)
    if tau.ndim == 2 and tau.shape[1] == 1 and len(tau) > 8:
        values, inverse = np.unique(tau[:, 0], return_inverse=True)
        if len(values) * 4 <= len(tau):
            return np.expm1(values[:, None] * rate)[inverse]
    return np.expm1(tau * rate)


# --- preemption rates -----------------------------------------------------------------


def offering_rates(frame: pd.DataFrame,
                   measured: Evidence | pd.DataFrame | None = None) -> pd.DataFrame:
    """Preemption rate per hour of each offering row, with its basis: the hazard of
    `costsched.optimize.hazard` (published signals as the prior, observations pooled from
    zone to cloud). `measured`: observations (preemptions, hours per group) or Evidence
    with signals too. Columns: preemptions_per_hour, preemption_basis."""
    return offering_hazards(frame, measured)


# --- moves ----------------------------------------------------------------------------


class Place(NamedTuple):
    """Where a job runs or its checkpoint is: cloud, region and zone ("" where unknown)."""

    cloud: str
    region: str
    zone: str = ""


@dataclass(frozen=True, slots=True)
class MovePrice:
    """What one move is billed, itemised (USD; arrays of the same shape where several
    destinations are priced at once): the checkpoint's egress, the restart billed on the
    new instance (boot, warm-up, copy), the work since the last checkpoint done again there,
    and the old instance billed while it writes its checkpoint."""

    egress_usd: float | np.ndarray
    restart_usd: float | np.ndarray
    lost_work_usd: float | np.ndarray
    overlap_usd: float | np.ndarray

    @property
    def total(self) -> float | np.ndarray:
        return self.egress_usd + self.restart_usd + self.lost_work_usd + self.overlap_usd

    def as_dict(self) -> dict[str, float]:
        """The items and the total as numbers (a single move)."""
        return {"egress_usd": float(self.egress_usd), "restart_usd": float(self.restart_usd),
                "lost_work_usd": float(self.lost_work_usd),
                "overlap_usd": float(self.overlap_usd), "total_usd": float(self.total)}


def egress_usd_per_gb(src: Place, dst: Place) -> float:
    """USD per GB of copying a checkpoint from `src` to `dst`, as the source cloud bills it
    (`costsched.clouds.transfer`: by cloud and region pair)."""
    return _pair(src.cloud, src.region, src.zone, dst.cloud, dst.region, dst.zone)


@cache
def _pair(src_cloud: str, src_region: str, src_zone: str, dst_cloud: str, dst_region: str,
          dst_zone: str) -> float:
    return pair_usd_per_gb(clouds.egress(src_cloud), src_cloud, src_region, src_zone,
                           dst_cloud, dst_region, dst_zone)


def egress_per_gb(cloud: np.ndarray, region: np.ndarray, src: int | None = None,
                  zone: np.ndarray | None = None) -> np.ndarray:
    """USD per GB of copying a checkpoint from each offering (rows) to each (columns), or
    from offering `src` to each when it is given. `zone`: each offering's zone ("" where
    none); a copy within a region is free whatever the zones (`costsched.clouds.transfer`)."""
    cloud, region = np.asarray(cloud, dtype=object), np.asarray(region, dtype=object)
    if zone is not None:
        zone = np.asarray(zone, dtype=object)
        zone = np.where(pd.isna(zone), "", zone).astype(object)
    if src is not None:
        return _egress_from(cloud, region, zone, src)
    if zone is None:
        zone = np.full(len(cloud), "", dtype=object)
    keys = pd.MultiIndex.from_arrays([cloud, region, zone])
    codes, unique = pd.factorize(keys)
    places = [Place(str(c), str(r), str(z)) for c, r, z in unique]
    table = np.array([[egress_usd_per_gb(a, b) for b in places] for a in places],
                     dtype=float)
    return table[np.ix_(codes, codes)]


def _egress_from(cloud: np.ndarray, region: np.ndarray, zone: np.ndarray | None,
                 src: int) -> np.ndarray:
    """`egress_per_gb` from one offering: one look-up per distinct destination region."""
    here = Place(str(cloud[src]), str(region[src]), "" if zone is None else str(zone[src]))
    out = np.full(len(cloud), clouds.egress(here.cloud).internet_usd_per_gb)
    same_cloud = cloud == here.cloud
    codes, names = pd.factorize(region[same_cloud])
    rates = np.array([_pair(here.cloud, here.region, "", here.cloud, str(r), "")
                      for r in names], dtype=float)
    if len(names):
        out[same_cloud] = rates[codes]
    out[same_cloud & (region == here.region)] = 0.0
    return out


def move_price(overheads: Overheads, prices: np.ndarray, src: int,
               egress_usd_per_gb: np.ndarray, checkpoint_gb: float,
               checkpoint_hours: float, lost_work_hours: float | None = None) -> MovePrice:
    """The price of moving a job from offering `src` to each offering at today's `prices`
    (USD/h), itemised: the egress of `checkpoint_gb` at `egress_usd_per_gb` (from `src` to
    each, as `egress_per_gb(..., src)` gives), the restart hours billed at the new price,
    the work lost since the last checkpoint (`lost_work_hours` where it is measured, else
    the overheads' assumption) at the new price, and the overlap at the old price."""
    prices = np.asarray(prices, dtype=float)
    lost = (overheads.lost_work_hours(checkpoint_hours) if lost_work_hours is None
            else max(float(lost_work_hours), 0.0))
    gb = overheads.egress_gb(checkpoint_gb)
    egress = gb * np.asarray(egress_usd_per_gb, dtype=float) if gb > 0 \
        else np.zeros_like(prices)
    return MovePrice(egress_usd=egress,
                     restart_usd=overheads.restart_hours(checkpoint_gb) * prices,
                     lost_work_usd=lost * prices,
                     overlap_usd=np.full_like(prices, overheads.overlap_hours * prices[src]))


def price_move(overheads: Overheads, src: Place, dst: Place, src_usd_per_hour: float,
               dst_usd_per_hour: float, checkpoint_gb: float, checkpoint_hours: float,
               lost_work_hours: float | None = None) -> MovePrice:
    """The itemised price of one move from `src` to `dst` (see `move_price`)."""
    one = move_price(overheads, np.array([src_usd_per_hour, dst_usd_per_hour]), 0,
                     np.array([0.0, egress_usd_per_gb(src, dst)]), checkpoint_gb,
                     checkpoint_hours, lost_work_hours)
    return MovePrice(*(float(np.asarray(v)[1]) for v in (
        one.egress_usd, one.restart_usd, one.lost_work_usd, one.overlap_usd)))


def move_cost(overheads: Overheads, prices: np.ndarray, src: int,
              egress_usd_per_gb: np.ndarray, checkpoint_gb: float,
              checkpoint_hours: float) -> np.ndarray:
    """USD of moving a job from offering `src` to each offering at today's `prices`: the
    total of `move_price`."""
    return np.asarray(move_price(overheads, prices, src, egress_usd_per_gb, checkpoint_gb,
                                 checkpoint_hours).total, dtype=float)


def _minutes(hours: float) -> str:
    """'0.1 min', '5 min', '0.8 s': a part of a restart as it reads best."""
    minutes = hours * 60
    return f"{minutes * 60:.2g} s" if 0 < minutes < 0.1 else f"{minutes:.4g} min"

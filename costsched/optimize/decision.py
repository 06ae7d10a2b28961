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
not measurements, except the lost work where the caller measures it: a running job's
decider passes the work its log has seen it lose (`JobState.lost_work_hours`: none for a
job seen to checkpoint when stopped, else the steps since its newest checkpoint at its
speed; `costsched.service.jobs.lost_work`); the backtests keep the assumption, half the
checkpoint interval (`Overheads.lost_work_hours`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import NamedTuple

from costsched import clouds
from costsched.clouds.transfer import pair_usd_per_gb
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.optimize.hazard import Evidence, offering_hazards
from costsched.optimize.overheads import Overheads  # noqa: F401 - the model's restarts

DEFAULT_CHECKPOINT_HOURS = 0.5


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



"""What a deadline policy reads: a job's state (`DeadlineState`) and the market now
(`MarketNow`), arrays over runs (`policies.deadline.base` says the job model), and `NONE`,
the placement of a run not running. Apart from the policies, so that what prices their
choices (`gang`, `on_demand_pick`) reads them without the policies' interface."""

from __future__ import annotations

from dataclasses import dataclass

from costsched.lazy import numpy as np

NONE = -1


@dataclass
class DeadlineState:
    """Arrays of shape (runs,), seconds unless named otherwise."""

    progress: np.ndarray  # work done (including work since the last checkpoint)
    work: np.ndarray  # the job's total work
    time_left: np.ndarray  # to the deadline, from the start of this tick
    placement: np.ndarray  # int: NONE, zone (spot) or zones + zone (on-demand)
    overhead_left: np.ndarray  # restart still to go on the current placement
    restart: float | np.ndarray  # overhead of every start (per run, or one for all)
    checkpoint: float  # progress between checkpoints
    home: np.ndarray  # int: the job's home zone (single-zone policies stay there)
    deadline: np.ndarray  # from the job's start
    last_zone: np.ndarray  # int: where the job last ran (its checkpoint); NONE if never
    # Instances the job runs on at once (a gang; per run, or one for all): it runs only
    # where spot holds all of them (the market's availability is the gang's) and every
    # placement is billed this many times its price.
    nodes: int | np.ndarray = 1

    @property
    def elapsed(self) -> np.ndarray:
        return self.deadline - self.time_left

    @property
    def saved(self) -> np.ndarray:
        """Progress kept by the last checkpoint: what a preemption now leaves."""
        return np.floor(self.progress / self.checkpoint) * self.checkpoint

    @property
    def remaining(self) -> np.ndarray:
        return np.maximum(self.work - self.progress, 0.0)


@dataclass
class MarketNow:
    """The market at the start of this tick, one row per run, one column per zone: spot
    (its availability and its past) for the job's whole gang at once, prices per instance."""

    tick: float  # seconds until the next decision
    spot_available: np.ndarray  # bool (runs, zones)
    available_for: np.ndarray  # seconds each zone's spot has been available (0: not now)
    spot_price: np.ndarray  # USD/h (runs, zones)
    on_demand_price: np.ndarray  # USD/h (runs, zones)
    region: np.ndarray  # int region code per zone (zones,)
    move_usd: np.ndarray  # egress USD of a checkpoint copied from zone i to zone j
    # Seconds: mean length of each zone's spot spells that ended before now (runs, zones);
    # None where no history is known.
    spell_mean: np.ndarray | None = None
    # Share of the time before now that spot was available in at least one of the zones
    # (runs,), with PRIOR_SHARE counted for PRIOR_SPELL seconds; None where unknown.
    spot_share: np.ndarray | None = None
    # Per zone (runs, zones), from the past before now only, the older the less counted
    # (weights halving every MEMORY_HOURS; `recent_share`, `recent_spell`); None where
    # unknown: the share of the time the zone had spot (with the prior of `spot_share`),
    zone_share: np.ndarray | None = None
    # the mean length in seconds of its spells without spot seen to end (with the prior
    # spell), and how long it has been without spot now (0 where it has spot),
    dry_mean: np.ndarray | None = None
    dry_for: np.ndarray | None = None
    # and the mean length of its spells with spot seen to end (with the prior spell).
    spot_spell: np.ndarray | None = None

    @property
    def zones(self) -> int:
        return self.spot_available.shape[1]

    def on_demand(self, zone: np.ndarray) -> np.ndarray:
        return np.asarray(zone) + self.zones

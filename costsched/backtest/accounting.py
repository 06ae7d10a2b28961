"""How a job's run is charged, period by period: the one set of rules every policy (and the
oracle's search) is measured by, so that their costs are comparable.

A run starts at `start` and is cut into decision periods of `period_s` seconds. At the
start of period k the job is on offering `prev` (-1 before the first placement) and runs
the period on `new`. If `new != prev` the job moves, charged by the decision model's
`Overheads`: the new instance is billed for `move_idle_hours` (restart, warm-up, checkpoint
copy, lost work: half the job's checkpoint interval by default) without progress, the old
one for the overlap, and the checkpoint copy for its egress. The job then makes
`steps_per_second[new]` steps per second until the period ends or the steps left are done;
instances are billed at the trace's step prices for exactly the time they run.
Preemptions are not replayed: the recorded traces hold prices, not evictions.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np

from costsched.backtest.trace import HOUR, PriceTrace
from costsched.model import InvalidInput
from costsched.optimize.decision import Overheads


@dataclass(frozen=True)
class Outcome:
    """Arrays, one element per (prev, new, steps_left) given to `Run.advance`."""

    usd: np.ndarray  # everything billed in the period, migration charges included
    migration_usd: np.ndarray  # the part due to migrating (idle time, overlap, egress)
    steps: np.ndarray  # steps done
    finished: np.ndarray  # bool: the job ended within the period
    end: np.ndarray  # epoch seconds: when the job ended, else the period's end
    migrated: np.ndarray  # bool


class Step(NamedTuple):
    """`Outcome` of one (prev, new, steps_left): `Run.advance_one`."""

    usd: float
    migration_usd: float
    steps: float
    finished: bool
    end: float
    migrated: bool


@dataclass(frozen=True)
class Run:
    """One job from one start time over a price trace."""

    trace: PriceTrace
    steps_per_second: np.ndarray  # per offering of the trace; NaN = cannot run the model
    steps: float
    start: int  # epoch seconds
    period_s: int
    overheads: Overheads
    checkpoint_gb: float = 0.0  # the job's checkpoint size
    checkpoint_hours: float = 0.5  # the job's checkpoint interval
    egress_per_gb: np.ndarray | None = None  # [from, to] USD/GB; None = from the trace

    def __post_init__(self) -> None:
        if self.period_s <= self.idle_hours * HOUR:
            raise InvalidInput(
                f"decision period of {self.period_s / HOUR:g} h: expected more than the "
                f"{self.idle_hours:.2f} h a migration idles"
            )
        if not self.steps > 0:
            raise InvalidInput(f"steps {self.steps!r}: expected a positive number")

    @cached_property
    def idle_hours(self) -> float:
        return self.overheads.move_idle_hours(self.checkpoint_gb, self.checkpoint_hours)

    @cached_property
    def egress(self) -> np.ndarray:
        """[from, to] USD of copying the job's checkpoint."""
        gb = self.overheads.egress_gb(self.checkpoint_gb)
        per_gb = self.trace.egress_per_gb if self.egress_per_gb is None else self.egress_per_gb
        return per_gb * gb

    def period_start(self, k: int) -> int:
        return self.start + k * self.period_s

    def advance(self, k: int, prev: np.ndarray, new: np.ndarray,
                steps_left: np.ndarray) -> Outcome:
        """Run period k on offerings `new` (element-wise; numpy arrays of equal length)."""
        trace = self.trace
        t0 = float(self.period_start(k))
        migrated = (prev >= 0) & (prev != new)
        any_migrated = bool(migrated.any())
        idle_s = self.idle_hours * HOUR
        idle = np.where(migrated, idle_s, 0.0) if any_migrated else np.zeros(len(new))
        rate = self.steps_per_second[new]
        need = steps_left / rate
        work = self.period_s - idle
        # A millisecond of slack: the same plan must finish in the same period however
        # its steps were summed (a 4-day job ends exactly at a day boundary).
        finished = need <= work + 1e-3
        need = np.minimum(need, np.maximum(work, 0.0))
        end = np.where(finished, t0 + idle + need, t0 + self.period_s)
        # Costs from cumulative spend: one lookup per distinct time, one per finishing run.
        at_t0 = trace.spent_all(t0)[new]
        run_usd = trace.spent_all(t0 + self.period_s)[new] - at_t0
        if finished.any():
            run_usd[finished] = trace.spent(new[finished], end[finished]) - at_t0[finished]
        if not any_migrated:
            zero = np.zeros(len(new))
            return Outcome(run_usd + zero, zero, np.where(finished, steps_left, rate * work),
                           finished, end, migrated)
        src = np.where(migrated, prev, 0)
        idle_usd = trace.spent_all(t0 + idle_s)[new] - at_t0
        # The old offering's as-of rate; 0 if it was never priced by t0, when no job can
        # have run there: nothing to overlap with.
        overlap_usd = trace.rates_at(t0, src) * self.overheads.overlap_hours
        extra = np.where(migrated, self.egress[src, new] + overlap_usd, 0.0)
        migration_usd = np.where(migrated, idle_usd + extra, 0.0)
        steps = np.where(finished, steps_left, rate * work)
        return Outcome(run_usd + extra, migration_usd, steps, finished, end, migrated)

    def advance_one(self, k: int, prev: int, new: int, steps_left: float) -> Step:
        """`advance` of a single run, in scalars: the same operations in the same order,
        so the same floats (a test holds the two together), without array overheads."""
        trace = self.trace
        t0 = float(self.period_start(k))
        migrated = 0 <= prev != new
        idle_s = self.idle_hours * HOUR
        idle = idle_s if migrated else 0.0
        rate = self.steps_per_second[new]
        need = steps_left / rate
        work = self.period_s - idle
        finished = bool(need <= work + 1e-3)
        need = min(need, max(work, 0.0))
        end = t0 + idle + need if finished else t0 + self.period_s
        at_t0 = trace.spent_all(t0)[new]
        if finished:
            run_usd = trace.spent_one(new, end) - at_t0
        else:
            run_usd = trace.spent_all(t0 + self.period_s)[new] - at_t0
        steps = steps_left if finished else rate * work
        if not migrated:
            return Step(float(run_usd + 0.0), 0.0, float(steps), finished, float(end), False)
        idle_usd = trace.spent_all(t0 + idle_s)[new] - at_t0
        overlap_usd = trace.rates_at(t0, prev) * self.overheads.overlap_hours
        extra = self.egress[prev, new] + overlap_usd
        return Step(float(run_usd + extra), float(idle_usd + extra), float(steps), finished,
                    float(end), True)

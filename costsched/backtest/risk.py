"""Does charging for risk pay? Jobs replayed over spot availability (or preemption) traces,
placed by the same decision model with two hazards: price-only (every spot zone at the
cloud's default rate, so the cheapest zone wins) and risk-aware (each zone's hazard from
`costsched.optimize.hazard`, fed the preemptions the trace showed in the `lookback` before
each decision, pooled from zone to region to cloud). Same prices, same jobs, same starts.

The replay (stated): a trace tick with spot capacity in a zone keeps an instance there
running; the first tick without takes it away (a preemption). A launch bills `restart`
hours without progress, then the job works; it checkpoints every `checkpoint` hours of
work and a preemption loses the work since the last one. After a preemption the job is
placed again at once among the zones with capacity, or waits for one. Both policies go
on-demand (no preemptions, `on_demand_usd` per hour) when the time left to the deadline
is under the work left plus a restart plus one checkpoint interval: a job is late only
when a preemption comes too close to its deadline for on-demand to make up.

Expected cost: what the policy's own decision model expected of the job at its launch
(price x expected hours under the hazard it used); realised: what the replay billed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from costsched import clouds
from costsched.model import InvalidInput
from costsched.optimize.decision import expected_hours
from costsched.optimize.hazard import Evidence, offering_hazards

POLICIES = ("price-only", "risk-aware")
RUN_COLUMNS = ["policy", "start_hour", "expected_usd", "realised_usd", "preemptions",
               "on_demand_hours", "finish_hour", "late"]


@dataclass(frozen=True)
class Traces:
    """Spot there (True) or not per zone (rows) and tick (columns) of `tick` seconds."""

    zones: tuple[str, ...]
    available: np.ndarray
    tick: int

    @classmethod
    def read(cls, folder: Path) -> Traces:
        """Every `<zone>_<gpu>_<n>.json` trace of a folder ({"metadata": {"gap_seconds"},
        "data": [...]}), cut to the shortest."""
        paths = sorted(Path(folder).glob("*.json"))
        if not paths:
            raise InvalidInput(f"{folder}: no trace files (<zone>_v100_1.json)")
        series, gaps = [], set()
        for path in paths:
            try:
                doc = json.loads(path.read_text())
                gaps.add(int(doc["metadata"]["gap_seconds"]))
                series.append(np.asarray(doc["data"], dtype=float) > 0)
            except (OSError, ValueError, KeyError, TypeError) as exc:
                raise InvalidInput(f"{path}: expected {{metadata: {{gap_seconds}}, data: "
                                   f"[...]}} ({exc})") from None
        if len(gaps) != 1:
            raise InvalidInput(f"{folder}: traces of different ticks {sorted(gaps)}")
        n = min(len(s) for s in series)
        zones = tuple(p.name.split("_")[0] for p in paths)
        return cls(zones, np.vstack([s[:n] for s in series]), gaps.pop())

    @property
    def hours(self) -> float:
        return self.available.shape[1] * self.tick / 3600

    def down_from(self) -> np.ndarray:
        """[z, t]: the first tick >= t without capacity in zone z (T when none)."""
        z, n = self.available.shape
        out = np.full((z, n + 1), n, dtype=np.int64)
        for t in range(n - 1, -1, -1):
            out[:, t] = np.where(self.available[:, t], out[:, t + 1], t)
        return out[:, :n]

    def observations(self, t: int, lookback: int) -> pd.DataFrame:
        """Preemptions (capacity ending) and up hours per zone over ticks [t - lookback, t)."""
        lo = max(t - lookback, 0)
        window = self.available[:, lo:t]
        drops = ((window[:, :-1] & ~window[:, 1:]).sum(axis=1) if window.shape[1] > 1
                 else np.zeros(len(self.zones)))
        return pd.DataFrame({"cloud": "aws", "region": [z[:-1] for z in self.zones],
                             "zone": list(self.zones), "instance_type": "p3.2xlarge",
                             "gpu_model": "V100", "gpu_count": 1,
                             "preemptions": drops.astype(float),
                             "hours": window.sum(axis=1) * self.tick / 3600})


@dataclass(frozen=True)
class RiskJob:
    work_hours: float
    deadline_hours: float
    checkpoint_hours: float = 0.5
    restart_hours: float = 0.25


def zone_frame(zones: tuple[str, ...]) -> pd.DataFrame:
    return pd.DataFrame({"cloud": "aws", "region": [z[:-1] for z in zones],
                         "zone": list(zones), "instance_type": "p3.2xlarge",
                         "gpu_model": "V100", "gpu_count": 1, "market": "spot"})


class HourlyHazards:
    """The risk-aware hazard per zone at a tick: `hazard.offering_hazards` fed the trace's
    preemptions over the lookback before the start of the tick's hour (computed once an
    hour, shared by every replay of the same traces)."""

    def __init__(self, traces: Traces, lookback_hours: float) -> None:
        self.traces = traces
        self.per_hour = 3600 / traces.tick
        self.lookback = int(round(lookback_hours * self.per_hour))
        self.frame = zone_frame(traces.zones)
        self.cache: dict[int, np.ndarray] = {}

    def __call__(self, tick: int) -> np.ndarray:
        hour = int(tick // self.per_hour)
        if hour not in self.cache:
            observed = self.traces.observations(int(hour * self.per_hour), self.lookback)
            self.cache[hour] = offering_hazards(self.frame, Evidence(observed))[
                "preemptions_per_hour"].to_numpy(float)
        return self.cache[hour]


def replay(traces: Traces, job: RiskJob, starts_hours: np.ndarray, spot_usd: np.ndarray,
           on_demand_usd: float, hazards: HourlyHazards) -> pd.DataFrame:
    """Both policies' runs of `job` from each start (RUN_COLUMNS, one row per run)."""
    down = traces.down_from()
    default = clouds.default_preemption("aws").per_hour
    hazard = hazards
    rows = []
    for policy in POLICIES:
        for start in starts_hours:
            rows.append((policy, float(start), *_run(
                traces, down, job, float(start), spot_usd, on_demand_usd,
                (lambda t: np.full(len(traces.zones), default)) if policy == "price-only"
                else hazard)))
    return pd.DataFrame(rows, columns=RUN_COLUMNS)


def _run(traces: Traces, down: np.ndarray, job: RiskJob, start: float, prices: np.ndarray,
         on_demand_usd: float, rates) -> tuple:  # noqa: ANN001 - tick -> rates per zone
    per_hour = 3600 / traces.tick
    n = traces.available.shape[1]
    t, left, cost, preemptions, od_hours = start, job.work_hours, 0.0, 0, 0.0
    due = start + job.deadline_hours
    expected = None
    while left > 1e-9:
        tick = int(t * per_hour + 1e-6)
        if due - t < left + job.restart_hours + job.checkpoint_hours or tick >= n:
            hours = job.restart_hours + left
            cost += hours * on_demand_usd
            od_hours += hours
            if expected is None:
                expected = hours * on_demand_usd
            t += hours
            break
        up = np.flatnonzero(traces.available[:, tick])
        if len(up) == 0:  # wait for capacity: to the next tick that has some
            later = np.flatnonzero(traces.available[:, tick:].any(axis=0))
            t = (tick + (later[0] if len(later) else n - tick)) / per_hour
            continue
        lam = rates(tick)[up]
        hours = expected_hours(left, lam, job.checkpoint_hours, job.restart_hours
                               ) + job.restart_hours
        costs = hours * prices[up]
        pick = int(np.argmin(costs))
        z = up[pick]
        if expected is None:
            expected = float(costs[pick])
        ends = down[z, tick] / per_hour  # capacity there ends
        work_from = t + job.restart_hours
        if ends >= work_from + left:
            cost += (work_from + left - t) * prices[z]
            t = work_from + left
            left = 0.0
            break
        done = max(ends - work_from, 0.0)
        left -= np.floor(done / job.checkpoint_hours + 1e-9) * job.checkpoint_hours
        cost += (ends - t) * prices[z]
        preemptions += 1
        t = ends
    return (float(expected), float(cost), preemptions, od_hours, t, bool(t > due + 1e-9))


def summary(runs: pd.DataFrame) -> pd.DataFrame:
    """Per policy: jobs, mean expected and realised USD per job, preemptions, on-demand
    hours and late jobs."""
    out = runs.groupby("policy", sort=False).agg(
        jobs=("start_hour", "size"), expected_usd=("expected_usd", "mean"),
        realised_usd=("realised_usd", "mean"), preemptions=("preemptions", "sum"),
        on_demand_hours=("on_demand_hours", "sum"), late=("late", "sum"))
    return out.reset_index()

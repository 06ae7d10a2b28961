"""A collection backtest: a sweep of jobs with deadlines replayed over a price trace.

Approaches, each from the same start with the same jobs:

- `collection`: the collection planner (on shared instances, or each job on whole
  instances) re-run every `replan` period on the prices as of then, for the steps and
  deadline hours left, with each move's cost (the decision model's `move_cost`) added to
  the offerings a job would move to, so a plan moves a job only where it pays;
- `alone`: each job's own best offering at the start (the per-job planner's choice: the
  least expected cost within its deadline), kept;
- `alone-daily`: the same choice re-made every period, moves charged as above;
- `cheapest-hourly`: the job's accelerator at the lowest USD/hour (`policies.cheapest_hourly`),
  chosen at the start and kept, deadlines ignored.

A job that can no longer meet its deadline anywhere is planned for its earliest finish.

A decision depends only on the prices as of its time, the jobs' steps and deadline hours
left and where they run: runs that reach the same state (`alone` and `alone-daily` at the
start; the unshared collection without quotas and `alone-daily` throughout) share one
solve through a `Decisions` cache, which returns what the planner would.

Charging follows `backtest.accounting`: in each period every rented instance is billed at
the trace's prices from the period's start until its last job ends (or the period does);
a job that moved first idles `Overheads.move_idle_hours` and its checkpoint's egress and
the old instance's overlap are charged. A job on one GPU of a shared instance makes one
GPU's steps; preemptions are not replayed (the traces hold prices, not evictions).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from costsched.backtest.engine import offering_labels
from costsched.backtest.trace import HOUR, PriceTrace
from costsched.jobspec import ResolvedJob
from costsched.model import InvalidInput
from costsched.optimize import planner
from costsched.optimize.collection import min_cost, packing
from costsched.optimize.collection.packing import PackingProblem
from costsched.optimize.decision import Overheads, move_cost
from costsched.policies.base import JobState
from costsched.policies.cheapest_hourly import CheapestHourly

APPROACHES = ("collection", "alone", "alone-daily", "cheapest-hourly")
RUN_COLUMNS = ["approach", "start", "cost_usd", "jobs", "deadline_misses", "moves",
               "shared_instances", "makespan_hours", "error"]
INSTANCE_COLUMNS = ["approach", "start", "period_start", "offering", "gpu_count", "jobs",
                    "gpus_used", "cost_usd"]
MAX_PERIODS = 1_000


@dataclass(frozen=True)
class CollectionConfig:
    replan_hours: float = 24.0
    share_instances: bool = True
    overheads: Overheads = field(default_factory=Overheads)
    quota: int | None = None  # instances at most per (cloud, region, type)
    checkpoint_gb: float = 1.0  # for jobs that do not state a size


@dataclass
class _Job:
    spec: ResolvedJob
    whole_sps: np.ndarray  # per trace offering, all its GPUs
    one_sps: np.ndarray  # per trace offering, one GPU
    done: float = 0.0
    at: int = -1  # trace row of the current offering
    shared: bool = False  # on one GPU of it
    end: float | None = None
    moves: int = 0

    @property
    def left(self) -> float:
        return self.spec.job.steps - self.done

    @property
    def gb(self) -> float:
        return self.spec.job.checkpoint_gb


# A placement: trace row, on one GPU of a shared instance, the instance's id in the period.
Placement = tuple[int, bool, str]


# Per job: its spec (with a checkpoint size), steps/s on each trace offering whole and on one GPU.
JobRates = list[tuple[ResolvedJob, np.ndarray, np.ndarray]]


def job_rates(trace: PriceTrace, jobs: Sequence[ResolvedJob],
              config: CollectionConfig) -> JobRates:
    """Each job's throughputs on the trace's offerings (the same for every run)."""
    offerings = trace.offerings
    ones = np.ones(len(offerings))
    out = []
    for rj in jobs:
        if not rj.job.checkpoint_gb > 0:
            rj = replace(rj, job=replace(rj.job, checkpoint_gb=config.checkpoint_gb))
        whole = rj.table.lookup(rj.job.model, offerings["gpu_model"], offerings["gpu_count"])[0]
        one = rj.table.lookup(rj.job.model, offerings["gpu_model"], ones)[0]
        out.append((rj, whole, one))
    return out


class Decisions:
    """The plans made so far in a backtest, by everything a plan depends on (the runs of
    one backtest share the trace, jobs and config): a state met again is not solved again.
    Plans are exact functions of their inputs (HiGHS is deterministic), so a hit returns
    what solving would."""

    def __init__(self) -> None:
        self.plans: dict[tuple, list[Placement]] = {}
        self.hits = 0

    def get(self, key: tuple, solve: Callable[[], list[Placement]]) -> list[Placement]:
        if key in self.plans:
            self.hits += 1
        else:
            self.plans[key] = solve()
        return self.plans[key]


class CollectionReplay:
    """One start time, one approach."""

    def __init__(self, trace: PriceTrace, jobs: Sequence[ResolvedJob], start: int,
                 approach: str, config: CollectionConfig, rates: JobRates | None = None,
                 decisions: Decisions | None = None, labels: list[str] | None = None) -> None:
        if approach not in APPROACHES:
            raise InvalidInput(f"approach {approach!r}: expected one of {', '.join(APPROACHES)}")
        self.trace, self.start, self.approach, self.config = trace, start, approach, config
        rates = rates if rates is not None else job_rates(trace, jobs, config)
        self.jobs = [_Job(rj, whole, one) for rj, whole, one in rates]
        self.decisions = decisions if decisions is not None else Decisions()
        self.period_s = int(round(config.replan_hours * HOUR))
        self.labels = labels if labels is not None else offering_labels(trace.offerings)
        self.gpu_count = trace.offerings["gpu_count"].to_numpy(dtype=int)
        self.instances: list[dict] = []
        self.usd = 0.0
        self.shared = 0  # instance-periods with more than one job

    def run(self) -> dict:
        for k in range(MAX_PERIODS):
            t0 = self.start + k * self.period_s
            active = [j for j in self.jobs if j.end is None]
            if not active:
                break
            if k == 0 or self.approach in ("collection", "alone-daily"):
                placements = self._decide(t0, active)
            else:
                placements = {id(j): (j.at, j.shared, f"i{n}") for n, j in enumerate(active)}
            self._advance(t0, active, placements)
        else:
            raise InvalidInput(f"jobs not finished after {MAX_PERIODS} periods")
        deadlines = np.array([j.spec.job.constraints.deadline_hours or np.inf
                              for j in self.jobs])
        hours = np.array([(j.end - self.start) / HOUR for j in self.jobs])
        return {"cost_usd": self.usd, "jobs": len(self.jobs),
                "deadline_misses": int((hours > deadlines * (1 + 1e-9)).sum()),
                "moves": sum(j.moves for j in self.jobs), "shared_instances": self.shared,
                "makespan_hours": float(hours.max()), "error": None}

    # --- decisions ----------------------------------------------------------------------

    def _decide(self, t0: int, active: list[_Job]) -> dict[int, Placement]:
        if self.approach == "cheapest-hourly":
            return self._cheapest_hourly(t0, active)
        prices = self.trace.price_at(t0)
        elapsed = (t0 - self.start) / HOUR
        share = self.config.share_instances and self.approach == "collection"
        quota = self.config.quota if self.approach == "collection" else None
        # Move charges are all zero while no job runs anywhere yet.
        charged = self.approach != "alone" and any(j.at >= 0 for j in active)
        index = {id(j): n for n, j in enumerate(self.jobs)}
        key = (share, quota, charged, prices.tobytes(), elapsed,
               tuple((index[id(j)], j.left, j.at, j.shared) for j in active))
        plan = self.decisions.get(
            key, lambda: self._plan(prices, elapsed, active, share, quota, charged))
        return {id(j): p for j, p in zip(active, plan, strict=True)}

    def _plan(self, prices: np.ndarray, elapsed: float, active: list[_Job], share: bool,
              quota: int | None, charged: bool) -> list[Placement]:
        """The planner's placement of each active job, in their order."""
        rows = np.flatnonzero(~np.isnan(prices))
        frame = self.trace.offerings.iloc[rows].assign(usd_per_hour=prices[rows], trace_row=rows)
        offerings = planner.prepare(frame)
        specs = [_remaining(j, elapsed) for j in active]
        pp = packing.packing_problem(specs, offerings, quota)
        if not share:
            pp.slot_allowed[:] = False
        _extend_deadlines(pp)
        if charged:
            pp.whole_extra, pp.slot_extra = self._move_charges(active, offerings, prices, rows)
        if share:
            plan = packing.solve(pp)
        else:
            p = pp.base
            p.cost = p.cost + pp.whole_extra
            plan = min_cost.solve(p)
        if not plan.feasible:
            raise InvalidInput("; ".join(plan.reasons))
        trace_rows = offerings["trace_row"].to_numpy()
        instance = (plan.assignment["instance"] if "instance" in plan.assignment
                    else pd.Series([f"i{n}" for n in range(len(plan.assignment))]))
        gpus = plan.assignment.get("gpus")
        by_name = {s.name: n for n, s in enumerate(specs)}
        out: list[Placement | None] = [None] * len(active)
        for n, row in enumerate(plan.assignment.itertuples()):
            o = int(trace_rows[row.offering_index])
            on_one = gpus is not None and int(gpus.iloc[n]) == 1 and self.gpu_count[o] > 1
            out[by_name[row.job]] = (o, bool(on_one), str(instance.iloc[n]))
        return out

    def _move_charges(self, active: list[_Job], offerings: pd.DataFrame, prices: np.ndarray,
                      rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """USD of moving each job to each offering of the frame, whole and on one GPU."""
        whole = np.zeros((len(active), len(rows)))
        slot = np.zeros_like(whole)
        gpus = offerings["gpu_count"].to_numpy(dtype=float)
        for i, j in enumerate(active):
            if j.at < 0:
                continue
            src = j.at
            egress = self.trace.egress_per_gb[src][rows]
            cost = move_cost(self.config.overheads, np.r_[prices[rows], prices[src]],
                             len(rows), np.r_[egress, 0.0], j.gb, j.spec.checkpoint_hours)[:-1]
            idle = self.config.overheads.move_idle_hours(j.gb, j.spec.checkpoint_hours)
            whole[i] = cost
            slot[i] = cost - idle * prices[rows] * (1 - 1 / gpus)  # idles one GPU only
            here = rows == src
            whole[i, here] = 0.0 if not j.shared else whole[i, here]
            slot[i, here] = 0.0 if j.shared else slot[i, here]
        return whole, slot

    def _cheapest_hourly(self, t0: int, active: list[_Job]) -> dict[int, Placement]:
        policy = CheapestHourly()
        out = {}
        for n, j in enumerate(active):
            view = self.trace.view(t0, j.whole_sps)
            state = JobState(j.spec.job, "", j.left, None, self.config.overheads)
            out[id(j)] = (self.trace.rows[policy.decide(view, state)], False, f"i{n}")
        return out

    # --- charging -------------------------------------------------------------------------

    def _advance(self, t0: int, active: list[_Job], placements: dict[int, Placement]) -> None:
        trace, overheads = self.trace, self.config.overheads
        by_instance: dict[str, list[_Job]] = {}
        for j in active:
            by_instance.setdefault(placements[id(j)][2], []).append(j)
        for jobs in by_instance.values():
            o, on_one, _ = placements[id(jobs[0])]
            busy = 0.0
            extra = 0.0
            for j in jobs:
                moved = j.at >= 0 and (j.at != o or j.shared != on_one)
                idle = overheads.move_idle_hours(j.gb, j.spec.checkpoint_hours) * HOUR \
                    if moved else 0.0
                if moved:
                    j.moves += 1
                    extra += (trace.egress_per_gb[j.at, o] * overheads.egress_gb(j.gb)
                              + np.nan_to_num(trace.price_at(t0, np.array([j.at]))[0])
                              * overheads.overlap_hours)
                rate = (j.one_sps if on_one else j.whole_sps)[o]
                need = j.left / rate
                work = self.period_s - idle
                if need <= work + 1e-3:
                    j.done, j.end = j.spec.job.steps, t0 + idle + need
                    busy = max(busy, idle + need)
                else:
                    j.done += rate * max(work, 0.0)
                    busy = self.period_s
                j.at, j.shared = o, on_one
            usd = float(trace.cost(np.array([o]), np.array([float(t0)]),
                                   np.array([t0 + busy]))[0]) + extra
            self.usd += usd
            self.shared += len(jobs) > 1
            self.instances.append({
                "period_start": pd.Timestamp(t0, unit="s", tz="UTC"),
                "offering": self.labels[o],
                "gpu_count": int(self.gpu_count[o]),
                "jobs": ", ".join(j.spec.name for j in jobs),
                "gpus_used": len(jobs) if on_one else int(self.gpu_count[o]),
                "cost_usd": usd,
            })


def _remaining(j: _Job, elapsed_hours: float) -> ResolvedJob:
    """The job's steps left and deadline hours left (at least a moment, so the plan can
    tell a late job from one without a deadline), and whether it runs already."""
    c = j.spec.job.constraints
    deadline = None if c.deadline_hours is None else max(c.deadline_hours - elapsed_hours, 1e-6)
    job = replace(j.spec.job, steps=j.left, constraints=replace(c, deadline_hours=deadline))
    # A job placed already pays no first start where it is: its moves are charged apart.
    return replace(j.spec, job=job, running=j.at >= 0)


def _extend_deadlines(pp: PackingProblem) -> None:
    """A job that cannot meet its deadline anywhere gets its earliest finish instead."""
    p = pp.base
    whole = np.where(p.allowed, p.hours, np.nan)
    one = np.where(pp.slot_allowed & (pp.gpus[None, :] > 1), pp.slot_hours, np.nan)
    with np.errstate(invalid="ignore"):
        fastest = np.fmin(np.nanmin(np.where(np.isnan(whole), np.inf, whole), axis=1),
                          np.nanmin(np.where(np.isnan(one), np.inf, one), axis=1))
    finish = fastest  # (its first start counted in its hours, as the deadline check counts it)
    late = np.isfinite(finish) & (finish > p.deadline_hours)
    p.deadline_hours = np.where(late, finish * (1 + 1e-9), p.deadline_hours)


def run_collection_backtest(trace: PriceTrace, jobs: Sequence[ResolvedJob],
                            starts: Sequence[int], config: CollectionConfig | None = None,
                            approaches: Sequence[str] = APPROACHES,
                            progress: Callable[[int], None] | None = None,
                            ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every approach from every start (epoch seconds): (runs, instances) frames, one row
    per (approach, start) and per instance rented in a period (RUN_COLUMNS,
    INSTANCE_COLUMNS). A run that cannot be planned has NaN cost and the reason in `error`.
    `progress(n)` is called after each run."""
    config = config or CollectionConfig()
    rates, decisions, labels = job_rates(trace, jobs, config), Decisions(), \
        offering_labels(trace.offerings)
    runs, instances = [], []
    for start in starts:
        when = pd.Timestamp(int(start), unit="s", tz="UTC")
        for approach in approaches:
            replay = CollectionReplay(trace, jobs, int(start), approach, config, rates,
                                      decisions, labels)
            row = {"approach": approach, "start": when}
            try:
                row |= replay.run()
            except InvalidInput as exc:
                row |= {"cost_usd": np.nan, "jobs": len(jobs), "deadline_misses": np.nan,
                        "moves": np.nan, "shared_instances": np.nan,
                        "makespan_hours": np.nan, "error": str(exc)}
            runs.append(row)
            instances += [{"approach": approach, "start": when, **i} for i in replay.instances]
            if progress is not None:
                progress(1)
    return (pd.DataFrame(runs, columns=RUN_COLUMNS),
            pd.DataFrame(instances, columns=INSTANCE_COLUMNS))


def summarize(runs: pd.DataFrame, baseline: str = "cheapest-hourly") -> pd.DataFrame:
    """Per approach: total cost over the starts where every approach ran, its saving
    against `baseline` (the baseline's cost / the approach's), deadline misses, moves and
    shared instance-periods."""
    ok = runs[runs["error"].isna()]
    complete = ok.groupby("start")["approach"].transform("size") == ok["approach"].nunique()
    ok = ok[complete]
    out = ok.groupby("approach", sort=False).agg(
        cost_usd=("cost_usd", "sum"), runs=("cost_usd", "size"),
        deadline_misses=("deadline_misses", "sum"), moves=("moves", "sum"),
        shared_instances=("shared_instances", "sum")).reset_index()
    base = out.loc[out["approach"] == baseline, "cost_usd"]
    out["vs_" + baseline.replace("-", "_")] = (float(base.iloc[0]) / out["cost_usd"]
                                               if len(base) else np.nan)
    return out

"""Policies judged on trace sets they were not tuned on: cases, scores, and leave-one-set-out.

A `Case` is one way of replaying jobs over a trace (a job shape, its deadline x restart
settings, start ticks; every zone in turn as the home zone); a `TraceSet` is a named group
of cases from one recording (sets that share a recording are held out together: their
markets are the same days). `Scorer` replays a policy over a case as the deadline backtest
does (`simulate`, the hindsight optimum and uniform progress of the same runs, each
computed once per case), and `set_metrics` turns the runs of a set into its figures: the
mean over its settings of the cost over the optimum and over uniform progress, and the
worst window (a start: the mean over its home zones).

`leave_one_set_out` takes the scores of every candidate (a policy with some choice of its
constants) on every set and, for each recording in turn, chooses the candidate on the
other recordings' sets only, then judges it on the held-out sets: no constant is chosen on
a set it is judged on.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from costsched.backtest.deadline.engine import DeadlineJob, simulate
from costsched.backtest.deadline.oracle import default_step, optimum
from costsched.backtest.deadline.trace import AvailabilityTrace
from costsched.model import InvalidInput
from costsched.policies.deadline import DeadlinePolicy, UniformProgress

SETTING = ["deadline_hours", "restart_minutes"]
METRICS = ["vs_optimum", "worst_vs_optimum", "vs_uniform", "worst_vs_uniform", "misses",
           "region_moves", "egress_usd", "runs"]


@dataclass(frozen=True)
class Case:
    """Jobs of `job_hours` from each of `starts` (ticks) and each zone as home, for every
    deadline x restart setting, with checkpoints every `checkpoint_minutes` of `checkpoint_gb`.
    `optimum_states`: waste states of the optimum before it takes coarser steps (a lower
    bound, `oracle.default_step`); None: exact."""

    name: str
    trace: AvailabilityTrace
    job_hours: float
    deadlines: tuple[float, ...]
    restarts: tuple[float, ...]
    checkpoint_minutes: float
    starts: tuple[int, ...]
    checkpoint_gb: float = 1.0
    optimum_states: int | None = 250

    def __post_init__(self) -> None:
        if not self.starts or not self.deadlines or not self.restarts:
            raise InvalidInput(f"case {self.name!r}: expected starts, deadlines and restarts")
        span = int(np.ceil(max(self.deadlines) * 3600 / self.trace.tick))
        if max(self.starts) + span > self.trace.ticks:
            raise InvalidInput(f"case {self.name!r}: a run from tick {max(self.starts)} "
                               f"outlasts the trace's {self.trace.ticks} ticks")

    @classmethod
    def spread(cls, name: str, trace: AvailabilityTrace, count: int, **shape: object
               ) -> Case:
        """`count` starts spread evenly over the ticks a run may start at (its whole
        deadline in the trace, covered by every zone's recording)."""
        deadlines = shape["deadlines"]
        span = int(np.ceil(max(deadlines) * 3600 / trace.tick))  # type: ignore[call-overload]
        allowed = trace.start_ticks(span)
        if len(allowed) == 0:
            raise InvalidInput(f"case {name!r}: no period of the trace holds the deadline")
        starts = np.unique(allowed[np.linspace(0, len(allowed) - 1, count).round()
                                   .astype(int)])
        return cls(name, trace, starts=tuple(int(s) for s in starts), **shape)  # type: ignore[arg-type]

    def settings(self) -> list[tuple[float, float]]:
        return [(d, r) for d in self.deadlines for r in self.restarts]

    def job(self, deadline: float, restart: float) -> DeadlineJob:
        return DeadlineJob(self.job_hours, deadline, restart, self.checkpoint_minutes,
                           self.checkpoint_gb)


@dataclass(frozen=True)
class TraceSet:
    """Cases judged together; `recording`: sets of one recording are held out together."""

    name: str
    recording: str
    cases: tuple[Case, ...]


@dataclass
class Scorer:
    """Replays policies over cases, with each case's optimum and uniform progress computed
    once (they do not depend on the policy judged, nor on the market's history)."""

    _references: dict[str, pd.DataFrame] = field(default_factory=dict)

    def runs(self, case: Case, policy: DeadlinePolicy, history: str = "none") -> pd.DataFrame:
        """One row per run: the engine's columns, the setting, and the same run's optimum
        (`optimum_usd`, from its start) and uniform progress (`uniform_usd`)."""
        out = self._replay(case, policy, history)
        ref = self.references(case)
        return out.assign(optimum_usd=ref["optimum_usd"].to_numpy(),
                          uniform_usd=ref["uniform_usd"].to_numpy())

    def references(self, case: Case) -> pd.DataFrame:
        if case.name not in self._references:
            best = []
            for deadline, restart in case.settings():
                job = case.job(deadline, restart)
                step = (None if case.optimum_states is None
                        else default_step(case.trace.tick, job, case.optimum_states))
                cost = optimum(case.trace, job, np.array(case.starts), step=step)
                best.append(np.repeat(cost, len(case.trace.zones)))
            uniform = self._replay(case, UniformProgress(), "full")["cost_usd"].to_numpy()
            self._references[case.name] = pd.DataFrame({"optimum_usd": np.concatenate(best),
                                                        "uniform_usd": uniform})
        return self._references[case.name]

    @staticmethod
    def _replay(case: Case, policy: DeadlinePolicy, history: str) -> pd.DataFrame:
        """Every setting of the case at once (one pass over the ticks), setting-major."""
        settings = case.settings()
        zones = len(case.trace.zones)
        starts = np.repeat(np.array(case.starts), zones)
        homes = np.tile(np.arange(zones), len(case.starts))
        n = len(starts)
        job = DeadlineJob(case.job_hours, max(case.deadlines), max(case.restarts),
                          case.checkpoint_minutes, case.checkpoint_gb)
        runs = simulate(case.trace, policy, job, np.tile(starts, len(settings)),
                        np.tile(homes, len(settings)),
                        np.repeat([d for d, _ in settings], n),
                        np.repeat([r for _, r in settings], n), history=history)
        return runs.assign(deadline_hours=np.repeat([d for d, _ in settings], n),
                           restart_minutes=np.repeat([r for _, r in settings], n))


def set_metrics(runs: pd.DataFrame) -> dict[str, float]:
    """A set's figures from its runs (`Scorer.runs` of its cases, with a `case` column):
    per setting, the summed cost over the summed optimum and over uniform progress, meaned
    over the settings; the worst window (a case, setting and start: the mean over its home
    zones) against each; missed deadlines; moves across regions and egress per run."""
    keys = ["case", *SETTING]
    totals = runs.groupby(keys)[["cost_usd", "optimum_usd", "uniform_usd"]].sum()
    windows = runs.groupby([*keys, "start_tick"])[
        ["cost_usd", "optimum_usd", "uniform_usd"]].mean()
    return {
        "vs_optimum": float((totals["cost_usd"] / totals["optimum_usd"]).mean() - 1),
        "worst_vs_optimum": float((windows["cost_usd"] / windows["optimum_usd"]).max() - 1),
        "vs_uniform": float((totals["cost_usd"] / totals["uniform_usd"]).mean() - 1),
        "worst_vs_uniform": float((windows["cost_usd"] / windows["uniform_usd"]).max() - 1),
        "misses": int((~runs["met"]).sum()),
        "region_moves": float(runs["region_moves"].mean()),
        "egress_usd": float(runs["egress_usd"].mean()),
        "runs": len(runs),
    }


def score_sets(sets: Sequence[TraceSet], candidates: dict[str, Callable[[], DeadlinePolicy]],
               scorer: Scorer, history: str = "none",
               progress: Callable[[str, str], None] | None = None) -> pd.DataFrame:
    """Every candidate (a name and a maker of its policy) on every set: one row per
    (set, candidate) with the set's recording and `set_metrics`."""
    rows = []
    for trace_set in sets:
        for name, make in candidates.items():
            runs = pd.concat([scorer.runs(case, make(), history).assign(case=case.name)
                              for case in trace_set.cases], ignore_index=True)
            rows.append({"set": trace_set.name, "recording": trace_set.recording,
                         "candidate": name, **set_metrics(runs)})
            if progress:
                progress(trace_set.name, name)
    return pd.DataFrame(rows)


def leave_one_set_out(scores: pd.DataFrame, metric: str = "vs_optimum") -> pd.DataFrame:
    """Per held-out recording and each of its sets: the candidate with the least mean of
    `metric` over the other recordings' sets (each set counted once; ties to the first
    candidate listed), and that candidate's figures on the held-out set. Columns: set,
    recording, chosen, train_<metric> and the METRICS of the chosen candidate there."""
    order = list(dict.fromkeys(scores["candidate"]))
    recordings = list(dict.fromkeys(scores["recording"]))
    if len(recordings) < 2:
        raise InvalidInput("leave-one-set-out: expected sets of at least two recordings")
    rows = []
    for held in recordings:
        train = scores[scores["recording"] != held]
        mean = train.groupby("candidate")[metric].mean().reindex(order)
        chosen = str(mean.idxmin())
        test = scores[(scores["recording"] == held) & (scores["candidate"] == chosen)]
        for row in test.itertuples(index=False):
            rows.append({"set": row.set, "recording": held, "chosen": chosen,
                         f"train_{metric}": float(mean[chosen]),
                         **{m: getattr(row, m) for m in METRICS}})
    return pd.DataFrame(rows)

"""Per-job choice: every offering's expected hours and cost (the decision model,
`decision.outcomes`), ranked by an objective.

Pure numpy over arrays (one job x offerings, or many jobs x offerings at once); no solver,
no I/O. Objectives:

- `cost`: the lowest expected total cost (with a deadline: among offerings that finish by it);
- `time`: the earliest expected finish (with a budget: among offerings that fit it);
- `tradeoff`: the lowest weight * cost / best cost + (1 - weight) * hours / best hours,
  each normalised by the job's best feasible value.

A deadline and a budget, when given, always constrain; the objective says what to minimise.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from costsched import clouds, default_hosts
from costsched.frames import OFFERING_KEY
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.model import BOOKED_MARKETS, Constraints
from costsched.optimize import objectives
from costsched.optimize.decision import expected_hours, expected_hours_risky, outcomes

OBJECTIVES = objectives.PER_JOB
# `rank`'s reasons for excluding an offering that the job's filters allow.
UNFILTERED = ("no throughput", "misses deadline", "over budget")
# Why an offering the job's filters allow is left out when its price is a bundled one that
# a change of its type's price superseded (`costsched.bundled_prices.superseded`).
SUPERSEDED = "superseded price"
BOOKED = "booked capacity (planned apart)"
# Why an offering the job's fields allow is left out when none of its task's alternatives
# (any_of / ordered) allows it in full.
NO_ALTERNATIVE = "in none of its alternatives"


# Costs equal to this many significant digits are a tie (linear scaling makes an n-GPU
# instance's cost equal a 1-GPU one's up to rounding).
TIE_DIGITS = 9


def tie_order(offerings: pd.DataFrame) -> np.ndarray:
    """Each offering's position under the tie rule, which decides between offerings of
    equal expected cost: fewer GPUs first (the job keeps its shape), then the lower
    on-demand reference price (`on_demand_usd_per_hour`, where the frame has it), then the
    offering key. Never the order the rows come in."""
    n = len(offerings)
    reference = (offerings["on_demand_usd_per_hour"].to_numpy(dtype=float)
                 if "on_demand_usd_per_hour" in offerings.columns else np.full(n, np.nan))
    reference = np.where(np.isnan(reference), np.inf, reference)
    columns = [offerings["gpu_count"].to_numpy(dtype=int).tolist(), reference.tolist(),
               *(offerings[c].astype(str).tolist() for c in OFFERING_KEY
                 if c in offerings.columns)]
    rows = list(zip(*columns, strict=True))
    position = np.empty(n, dtype=int)
    position[sorted(range(n), key=rows.__getitem__)] = np.arange(n)
    return position


def tie_rounded(values: np.ndarray, digits: int = TIE_DIGITS) -> np.ndarray:
    """`values` rounded to `digits` significant digits (inf and NaN kept): equal results
    are a tie."""
    v = np.asarray(values, dtype=float)
    finite = np.isfinite(v) & (v != 0)
    out = v.copy()
    if finite.any():
        scale = 10.0 ** (digits - 1 - np.floor(np.log10(np.abs(v[finite]))))
        out[finite] = np.round(v[finite] * scale) / scale
    return out


def best_of(values: np.ndarray, order: np.ndarray) -> int:
    """The index of the least of `values` (NaN never chosen), ties (`tie_rounded`) going to
    the lowest `order` (`tie_order` of the same rows)."""
    rounded = np.where(np.isnan(values), np.inf, tie_rounded(values))
    return int(np.lexsort((order, rounded))[0])


def scores(objective: str, hours: np.ndarray, cost: np.ndarray,
           feasible: np.ndarray, weight: float = 0.5) -> np.ndarray:
    """The quantity to minimise (inf where infeasible); rows are jobs."""
    if objective == "cost":
        score = cost
    elif objective == "time":
        score = hours
    elif objective == "tradeoff":
        if not 0 <= weight <= 1:
            raise ValueError(f"weight {weight}: expected a number in [0, 1]")
        best_cost = np.min(np.where(feasible, cost, np.inf), axis=-1, keepdims=True)
        best_hours = np.min(np.where(feasible, hours, np.inf), axis=-1, keepdims=True)
        with np.errstate(divide="ignore", invalid="ignore"):
            score = weight * cost / best_cost + (1 - weight) * hours / best_hours
    else:
        raise ValueError(f"objective {objective!r}: expected one of {', '.join(OBJECTIVES)}")
    return np.where(feasible, score, np.inf)


def best(objective: str, steps: np.ndarray, steps_per_second: np.ndarray,
         usd_per_hour: np.ndarray, preemptions_per_hour: np.ndarray,
         checkpoint_hours: np.ndarray, restart_hours: np.ndarray,
         deadline_hours: np.ndarray, budget_usd: np.ndarray, allowed: np.ndarray | None = None,
         weight: float = 0.5, chunk: int = 256,
         threads: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The best offering of each of J jobs among O offerings: (index or -1, hours, cost).

    `steps_per_second` and `allowed` are (J, O); per-job arrays are (J,); per-offering (O,).
    Chunks of jobs bound the memory and run on threads (numpy releases the GIL).

    For `cost` and `time` the preemption formula is evaluated only where it can matter:
    expected hours are never below the uninterrupted work hours, so an offering whose
    risk-free score already exceeds the exact score of the job's risk-free favourite cannot
    win. The result is the same as evaluating every pair (`tradeoff` does that).
    """
    # Rows contiguous: per-job reductions over a column-major matrix run several times slower.
    data = _Batch(np.asarray(steps, dtype=float),
                  np.ascontiguousarray(steps_per_second, dtype=float),
                  np.asarray(usd_per_hour, dtype=float),
                  np.asarray(preemptions_per_hour, dtype=float),
                  np.asarray(checkpoint_hours, dtype=float), np.asarray(restart_hours, dtype=float),
                  np.asarray(deadline_hours, dtype=float), np.asarray(budget_usd, dtype=float),
                  None if allowed is None else np.ascontiguousarray(allowed))
    n_jobs = len(data.steps)
    out = (np.full(n_jobs, -1), np.full(n_jobs, np.nan), np.full(n_jobs, np.nan))

    def run(lo: int) -> None:
        sl = slice(lo, min(lo + chunk, n_jobs))
        if objective in ("cost", "time"):
            idx, hours, cost = _pruned(objective, data, sl)
        else:
            idx, hours, cost = _dense(objective, data, sl, weight)
        out[0][sl], out[1][sl], out[2][sl] = idx, hours, cost

    starts = range(0, n_jobs, chunk)
    workers = threads or min(os.cpu_count() or 1, 8)
    if workers > 1 and len(starts) > 1:
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(run, starts))
    else:
        for lo in starts:
            run(lo)
    return out


@dataclass(frozen=True, slots=True)
class _Batch:
    steps: np.ndarray
    steps_per_second: np.ndarray
    price: np.ndarray
    rate: np.ndarray
    checkpoint_hours: np.ndarray
    restart_hours: np.ndarray
    deadline_hours: np.ndarray
    budget_usd: np.ndarray
    allowed: np.ndarray | None


Chosen = tuple["np.ndarray", "np.ndarray", "np.ndarray"]


def _work_hours(d: _Batch, sl: slice) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return (d.steps[sl, None] / 3600) / d.steps_per_second[sl]  # NaN/inf: no throughput


def _read_off(score: np.ndarray, hours: np.ndarray, cost: np.ndarray) -> Chosen:
    idx = np.argmin(score, axis=1)
    rows = np.arange(len(idx))
    found = np.isfinite(score[rows, idx])
    return (np.where(found, idx, -1), np.where(found, hours[rows, idx], np.nan),
            np.where(found, cost[rows, idx], np.nan))


def _dense(objective: str, d: _Batch, sl: slice, weight: float) -> Chosen:
    """Every pair evaluated exactly."""
    hours = _work_hours(d, sl)
    risky = np.flatnonzero(d.rate > 0)
    if len(risky):
        hours[:, risky] = expected_hours_risky(hours[:, risky], d.rate[risky],
                                               d.checkpoint_hours[sl, None],
                                               d.restart_hours[sl, None])
    cost = hours * d.price
    # NaN compares False: offerings without a throughput drop out here.
    ok = (hours <= d.deadline_hours[sl, None]) & (cost <= d.budget_usd[sl, None])
    if d.allowed is not None:
        ok &= d.allowed[sl]
    return _read_off(scores(objective, hours, cost, ok, weight), hours, cost)


def _pruned(objective: str, d: _Batch, sl: slice) -> Chosen:
    """Exact where it can matter, bounded below by the risk-free figures elsewhere."""
    work = _work_hours(d, sl)
    low_cost = work * d.price
    ok = (work <= d.deadline_hours[sl, None]) & (low_cost <= d.budget_usd[sl, None])
    if d.allowed is not None:
        ok &= d.allowed[sl]
    low = np.where(ok, low_cost if objective == "cost" else work, np.inf)
    # An upper bound on each job's optimum: the exact score of its risk-free favourite.
    first = np.argmin(low, axis=1)
    rows = np.arange(len(first))
    tau, restart = d.checkpoint_hours[sl], d.restart_hours[sl]
    h1 = expected_hours(work[rows, first], d.rate[first], tau, restart)
    c1 = h1 * d.price[first]
    fits = (np.isfinite(low[rows, first]) & (h1 <= d.deadline_hours[sl])
            & (c1 <= d.budget_usd[sl]))
    bound = np.where(fits, c1 if objective == "cost" else h1, np.inf)
    candidate = low <= bound[:, None]
    if candidate.sum() > 0.3 * candidate.size:  # little to prune: evaluate densely
        return _dense(objective, d, sl, 0.5)
    r, c = np.nonzero(candidate)
    hours = expected_hours(work[r, c], d.rate[c], tau[r], restart[r])
    cost = hours * d.price[c]
    feasible = (hours <= d.deadline_hours[sl][r]) & (cost <= d.budget_usd[sl][r])
    score = np.where(feasible, cost if objective == "cost" else hours, np.inf)
    full = np.full(low.shape, np.inf)
    full[r, c] = score
    idx = np.argmin(full, axis=1)
    found = np.isfinite(full[rows, idx])
    best_h = expected_hours(work[rows, idx], d.rate[idx], tau, restart)
    return (np.where(found, idx, -1), np.where(found, best_h, np.nan),
            np.where(found, best_h * d.price[idx], np.nan))


def allowed_offerings(offerings: pd.DataFrame, constraints: Constraints) -> pd.Series:
    """Why each offering is excluded by the job's constraints, or else by a superseded
    price (SUPERSEDED, where the frame has a `superseded` column) ('' = allowed)."""
    reason = pd.Series("", index=offerings.index, dtype=object)

    def exclude(mask: pd.Series, why: str) -> None:
        reason[mask & (reason == "")] = why

    checks: Sequence[tuple[str, Sequence]] = (
        ("cloud", constraints.clouds), ("region", constraints.regions),
        ("market", constraints.markets), ("gpu_model", constraints.gpu_models),
        ("gpu_count", constraints.gpu_counts),
    )
    for column, accepted in checks:
        if accepted:
            exclude(~offerings[column].isin(list(accepted)), f"{column} not allowed")
    # A job that names GPUs (or nothing) but no host of its own gets each GPU's default
    # host (n1-standard-4 for GCP's T4:1), not the 1-vCPU sizes the same GPUs also come on.
    # (A task naming CPU types only keeps its words: "other instance type".) After the
    # checks above, so that an offering of another GPU, place or market is left out as such.
    if "instance_type" in offerings and (
            constraints.gpu_models or constraints.gpu_counts or not constraints.instance_types
    ) and not default_hosts.names_a_host(constraints.instance_types):
        exclude(default_hosts.other_hosts(offerings["instance_type"]), default_hosts.OTHER_HOST)
    if constraints.instance_types:
        exclude(~offerings["instance_type"].isin(list(constraints.instance_types)),
                "instance_type not allowed")
    if constraints.alternatives:
        exclude(~in_alternatives(offerings, constraints.alternatives), NO_ALTERNATIVE)
    # Booked capacity has a start, a length and a wait the hourly ranking cannot weigh:
    # `optimize.booked` plans it, unless the job names its market.
    exclude(offerings["market"].isin([m for m in BOOKED_MARKETS
                                      if m not in constraints.markets]), BOOKED)
    if constraints.zones:
        exclude(~zone_allowed(offerings, constraints.zones), "zone not allowed")
    if constraints.max_price_per_hour is not None:
        exclude(offerings["usd_per_hour"] > constraints.max_price_per_hour, "over max_price")
    if "superseded" in offerings.columns:
        exclude(offerings["superseded"].fillna(False).astype(bool), SUPERSEDED)
    return reason


def in_alternatives(offerings: pd.DataFrame, alternatives: Sequence[Constraints]
                    ) -> pd.Series:
    """Offerings that one of a task's alternatives (`Constraints.alternatives`) allows in
    full: its place filters (clouds, regions, zones, markets, GPUs, instance types)."""
    ok = pd.Series(False, index=offerings.index)
    for alt in alternatives:
        this = pd.Series(True, index=offerings.index)
        for column, accepted in (("cloud", alt.clouds), ("region", alt.regions),
                                 ("market", alt.markets), ("gpu_model", alt.gpu_models),
                                 ("gpu_count", alt.gpu_counts),
                                 ("instance_type", alt.instance_types)):
            if accepted:
                this &= offerings[column].isin(list(accepted))
        if alt.zones:
            this &= zone_allowed(offerings, alt.zones)
        ok |= this
    return ok


def zone_allowed(offerings: pd.DataFrame, zones: Sequence[str]) -> pd.Series:
    """Offerings in one of `zones`, or priced for the whole region (zone "") of one."""
    regions = {z: r for z in zones if (r := clouds.zone_region(z)) is not None}
    in_zone = offerings["zone"].isin(list(zones))
    regional = (offerings["zone"] == "") & pd.Series(
        list(zip(offerings["cloud"], offerings["region"], strict=True)),
        index=offerings.index).isin(list(regions.values()))
    return in_zone | regional


def rank(offerings: pd.DataFrame, steps: float, steps_per_second: np.ndarray,
         constraints: Constraints, objective: str = "cost", *,
         preemptions_per_hour: np.ndarray | None = None, checkpoint_hours: float = 0.5,
         restart_hours: float = 0.0, start_hours: float = 0.0,
         weight: float = 0.5) -> pd.DataFrame:
    """Every offering with work_hours, start_hours, start_cost, expected_hours,
    expected_cost, score and `excluded` (why it cannot be chosen, '' if it can); choosable
    ones first, best first. The expected hours and cost count the job's first start once
    (`start_hours`: boot, set-up and warm-up before any progress, at the offering's price:
    `start_cost`); an offering meets the deadline when its expected hours fit in it."""
    rates = (np.zeros(len(offerings)) if preemptions_per_hour is None
             else np.asarray(preemptions_per_hour, dtype=float))
    price = offerings["usd_per_hour"].to_numpy(dtype=float)
    out = outcomes(steps, steps_per_second, price, rates, checkpoint_hours, restart_hours,
                   start_hours)
    deadline = constraints.deadline_hours if constraints.deadline_hours is not None else np.inf
    budget = constraints.budget_usd if constraints.budget_usd is not None else np.inf
    reason = allowed_offerings(offerings, constraints).to_numpy(dtype=object)
    reason = np.where((reason == "") & np.isnan(out.work_hours), "no throughput", reason)
    reason = np.where((reason == "") & (out.hours > deadline), "misses deadline", reason)
    reason = np.where((reason == "") & (out.cost > budget), "over budget", reason)
    feasible = reason == ""
    score = scores(objective, out.hours, out.cost, feasible, weight)
    frame = offerings.assign(
        steps_per_second=steps_per_second, preemptions_per_hour=rates,
        work_hours=out.work_hours, start_hours=float(start_hours),
        start_cost=float(start_hours) * price, expected_hours=out.hours,
        expected_cost=out.cost, score=score, excluded=reason,
    )
    # Ties on the objective go to the cheaper offering, then by the tie rule.
    order = np.lexsort((tie_order(offerings), tie_rounded(out.cost), tie_rounded(score)))
    return frame.iloc[order].reset_index(drop=True)

"""The offerings a job's launch, recovery or move tries, best first, and the preemption
rates they are ranked with."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

import pandas as pd

from costsched.jobspec import ResolvedJob
from costsched.migration.launcher import Launcher
from costsched.migration.machine import candidate, offering_of
from costsched.model import InvalidInput
from costsched.optimize.hazard import Evidence
from costsched.optimize.planner import plan_job, prepare
from costsched.passes import memo
from costsched.policies import OfferingKey
from costsched.prices import prices_at
from costsched.service.deadline_jobs import (
    DeadlineDecision,
    decide_deadline,
)
from costsched.service.decide import (
    decision_rates,
)
from costsched.service.jobs.runs import CANDIDATES, CAPACITY_COOLDOWN
from costsched.store import PriceStore


def _candidates(store: PriceStore, resolved: ResolvedJob, at: datetime, launcher: Launcher,
                offering: str | None, exclude: Sequence[OfferingKey] = ()) -> list[dict]:
    """The best offerings for the job now that the launcher can start, best first."""
    frame = prices_at(store, at)
    if frame.empty:
        raise InvalidInput(f"at {at:%Y-%m-%d %H:%M} UTC: no prices known; import or collect "
                           "prices first")
    offerings = memo(("prepared", store.url, at), lambda: prepare(frame, _rates(store, at)),
                     shared=True)  # read only: every job of a pass ranks the same offerings
    plan = plan_job(resolved, offerings)
    choices = plan.choices
    if offering is not None:
        choices = plan.ranked[plan.ranked["offering"].map(_spelled(offering))]
        if choices.empty:
            raise InvalidInput(f"offering {offering!r}: not a priced offering now; expected "
                               "cloud:zone-or-region:instance_type:market as `costsched "
                               "prices show` lists them")
    full = _recently_full(store, at)
    ready, later = [], []
    for row in choices.itertuples():
        o = offering_of({"key": [row.cloud, row.region, row.zone, row.instance_type,
                                 row.market, row.os],
                         "gpu_model": row.gpu_model, "gpu_count": row.gpu_count})
        if o.key in exclude or not launcher.can_launch(o):
            continue
        # An offering that just had no capacity is tried after the others.
        (later if o.key in full else ready).append(candidate(o, row.usd_per_hour))
    out = [*ready, *later][:CANDIDATES]
    if not out:
        raise InvalidInput(plan.reason or f"job {resolved.name}: no offering that "
                           f"{launcher.name} can launch meets its constraints now")
    return out


def measured_rates(store: PriceStore, at: datetime) -> pd.DataFrame | None:
    """Preemptions per spot hour that costsched's own jobs met, per (cloud, region, zone,
    instance type, GPU model and count): the decision model pools them (`hazard`)."""
    seen = store.availability.since()
    placements = store.jobs.placements()
    if placements.empty:
        return None
    spot = placements[placements["market"] == "spot"]
    if spot.empty:
        return None
    end = spot["end_at"].fillna(pd.Timestamp(at))
    hours = (end - spot["start_at"]).dt.total_seconds().clip(lower=0) / 3600
    keys = ["cloud", "region", "zone", "instance_type", "gpu_model", "gpu_count"]
    frame = spot.assign(hours=hours).groupby(keys, as_index=False)["hours"].sum()
    preempted = seen[seen["event"] == "preempted"].groupby(keys).size().rename("preemptions")
    frame = frame.join(preempted, on=keys).fillna({"preemptions": 0})
    return frame[frame["hours"] > 0]


def _rates(store: PriceStore, at: datetime) -> Evidence:
    """Preemption rates for a ranking: costsched's own jobs' and the store's observations
    (once per pass: a pass's moves start no spot hours before `at`, nor preemptions)."""
    return memo(("rates", store.url, at),
                lambda: decision_rates(store, at, measured_rates(store, at)), shared=True)


def _recently_full(store: PriceStore, at: datetime) -> set[OfferingKey]:
    full = store.availability.since(at - CAPACITY_COOLDOWN, event="capacity")
    return {(r.cloud, r.region, r.zone, r.instance_type, r.market, "linux")
            for r in full.itertuples()}


def _spelled(text: str) -> Callable[[str], bool]:
    """Matches an offering label ('aws us-east-1f p3.2xlarge spot') against the user's
    'aws:us-east-1f:p3.2xlarge:spot' (or the label itself)."""
    wanted = text.strip().replace(":", " ").replace("on_demand", "on-demand").split()
    return lambda label: label.split() == wanted


def _launch_candidates(store: PriceStore, resolved: ResolvedJob, when: datetime,
                       launcher: Launcher, offering: str | None,
                       deadline_policy: str) -> list[dict]:
    """The offerings a launch tries, best first: the deadline policy's (when it places
    the job) or the decision model's ranking (or `offering`)."""
    if deadline_policy:
        decision = decide_deadline(store, resolved, created_at=when, at=when,
                                   steps_left=resolved.job.steps, current=None,
                                   policy=deadline_policy,
                                   unavailable=_recently_full(store, when),
                                   measured_rates=_rates(store, when), late_ok=False)
        return _deadline_candidates(resolved, decision, launcher)
    return _candidates(store, resolved, when, launcher, offering)


def _deadline_candidates(resolved: ResolvedJob, decision: DeadlineDecision,
                         launcher: Launcher) -> list[dict]:
    """The deadline policy's choice first, then its fallbacks (capacity), those the
    launcher can start."""
    out = [candidate(decision.offering, decision.usd_per_hour)]
    out += [candidate(offering_of({"key": list(key), "gpu_model": facts["gpu_model"],
                                   "gpu_count": facts["gpu_count"]}), facts["usd_per_hour"])
            for key, facts in decision.fallbacks]
    out = [c for c in out if launcher.can_launch(offering_of(c))][:CANDIDATES]
    if not out:
        raise InvalidInput(f"job {resolved.name}: no offering that {launcher.name} can "
                           "launch meets its constraints now")
    return out

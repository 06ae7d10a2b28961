"""Running jobs that have a deadline: a deadline policy asked, live, where a job runs now.

The market is read from the store here; the decision is the deadline core's
(`costsched.decide.deadline.decide_now`), the same `next_placements` the deadline backtest
replays, asked about a batch of one job. The market is the job's best instance type (by
expected cost of its steps) in every zone its constraints allow: spot where a price is
listed and capacity was seen lately, and on-demand in every region that offers it (a
region without spot as a zone that never has it), the policy choosing where a job runs on
on-demand. Spot is taken as unavailable in a zone (or a region, where priced by region)
where a launch just met no capacity or an instance was just preempted, or where the
store's availability observations say it is gone now. What the market's past says (each
zone's spells with and without spot, the shares of the time with spot) is computed from
the store's observations by the replay's own function (`policies.deadline.past.MarketPast`),
from the policy's prior: a store that has watched nothing gives the prior alone, as a
replay with no history does.

A live job is never left without an instance: where the policy would wait (ahead of its
schedule with no spot anywhere), a running job keeps its instance and a job to recover
tries spot in every allowed zone, cheapest first, then on-demand.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from costsched.decide.deadline import (
    KEY,
    DeadlineDecision,
    DeadlineMarket,
    decide_now,
)
from costsched.jobspec import ResolvedJob
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.model import InvalidInput
from costsched.optimize.decision import Overheads, egress_per_gb
from costsched.optimize.hazard import Evidence
from costsched.optimize.no_plan_keys import no_spot
from costsched.optimize.planner import plan_job, prepare, start_hours
from costsched.policies import OfferingKey
from costsched.policies.deadline import MarketNow, deadline_policy
from costsched.policies.deadline.base import DEFAULT_PRIOR, MarketPrior
from costsched.policies.deadline.past import MarketPast
from costsched.prices import prices_at
from costsched.service.booked_jobs import usable_booking, with_booking
from costsched.service.deadline_terms import (  # (theirs, also from here)
    DEFAULT_DEADLINE_POLICY,
    deadline_at,
    uses_deadline_policy,
)
from costsched.store import PriceStore
from costsched.store.booked import Booking

__all__ = ["DEFAULT_DEADLINE_POLICY", "DeadlineDecision", "DeadlineMarket", "NoSpot",
           "deadline_at", "decide_deadline", "recent_losses", "uses_deadline_policy"]

# How often the daemon asks again about a job with a deadline (its collect schedule):
# the safety rule keeps one such period of slack.
DECISION_PERIOD = timedelta(hours=1)
RECENT = timedelta(minutes=30)  # a capacity error or preemption this recent: no spot there
# The availability observations a live decision reads (an hour this old weighs 2^-15 in
# the market's recent statistics, `policies.deadline.base.MEMORY_HOURS`), on their own
# grid but no finer than this many seconds.
PAST = timedelta(days=30)
FINEST_TICK = 60
DEADLINE_EXCLUSION = "misses deadline"  # the planner's word for it


class NoSpot(InvalidInput):
    """The job's scope has no spot offering to weigh against on-demand (or no instance type
    offered both ways): it runs as a job without a deadline policy would, on the planner's
    choice (`jobs.decider.DeadlineDecider`)."""


def decide_deadline(store: PriceStore, resolved: ResolvedJob, *, created_at: datetime,
                    at: datetime, steps_left: float, current: OfferingKey | None,
                    policy: str = DEFAULT_DEADLINE_POLICY, overheads: Overheads | None = None,
                    unavailable: Collection[OfferingKey] = (),
                    measured_rates: pd.DataFrame | Evidence | None = None,
                    late_ok: bool = True, offerings: pd.DataFrame | None = None,
                    checkpoint_gb: float | None = None,
                    booked: Sequence[Booking] = (), local_too: bool = False,
                    lost_work_hours: float | None = None,
                    ranked: pd.DataFrame | None = None) -> DeadlineDecision:
    """The offering `policy` runs the job on now. `current`: where it runs (None when it has
    no instance, e.g. after a preemption); `unavailable`: offerings that just met no
    capacity or were preempted (no spot there now). `late_ok=False` (a new job): refuse,
    in one line, a deadline that even on-demand from now cannot meet (a running job that
    will be late goes on, on-demand, to finish as early as it can). `offerings`: the
    planner's prepared offerings of the pass (else prepared here); `checkpoint_gb`: the
    size of the job's newest checkpoint (else its spec's), what a move copies. `booked`:
    the job's bookings; one it can use now or later is in the policy's hands
    (`service.booked_jobs`). `local_too`: a job of the local launcher, for which what its
    simulated instances met lately counts too (never for a cloud's job).
    `lost_work_hours`: what a move of it now loses (`lost_work`; None: the assumption).
    `ranked`: the planner's ranking of `offerings` for the job, when the caller made it
    already (its plan's, `jobs.decider.planned`); else ranked here."""
    chosen = deadline_policy(policy)
    due = deadline_at(resolved, created_at)
    if due is None:
        raise InvalidInput(f"job {resolved.name!r}: it has no deadline")
    overheads = overheads or Overheads()
    job = resolved.job
    size_gb = job.checkpoint_gb if checkpoint_gb is None else checkpoint_gb
    found = _market(store, resolved, at, measured_rates, unavailable, size_gb, current,
                    offerings, chosen.prior, local_too, ranked)
    zones = found.offerings
    sps = resolved.table.get(job.model, zones["gpu_model"].iloc[0],
                             int(zones["gpu_count"].iloc[0])).steps_per_second
    booking = usable_booking(booked, at, str(zones["spot_instance_type"].iloc[0]))
    if booking is not None:  # the booked capacity as the market's last zone
        found, chosen = with_booking(found, chosen, booking, created_at, size_gb)
    d = decide_now(chosen, found, job, name=resolved.name, steps_per_second=sps,
                   created_at=created_at, due=due, at=at, steps_left=steps_left,
                   current=current, overheads=overheads, size_gb=size_gb,
                   late_ok=late_ok, nodes=resolved.nodes, lost_work_hours=lost_work_hours)
    if booking is not None and d.offering is not None and \
            d.offering.key == booking.booked.offering.key:
        d = replace(d, reservation=booking.reservation_id)
    return d


# --- the market of one job ----------------------------------------------------------------


def _market(store: PriceStore, resolved: ResolvedJob, at: datetime,
            rates: pd.DataFrame | Evidence | None, unavailable: Collection[OfferingKey],
            checkpoint_gb: float, current: OfferingKey | None,
            offerings: pd.DataFrame | None = None,
            prior: MarketPrior = DEFAULT_PRIOR, local_too: bool = False,
            ranked: pd.DataFrame | None = None) -> DeadlineMarket:
    if ranked is None:
        ranked = plan_job(resolved, _offerings(store, resolved, at, rates, offerings)).ranked
    # One instance's price, as every offering is quoted and a placement keeps it: the
    # ranking prices a gang's N instances (`planner.plan_job`); `decide_now` prices the
    # gang from one instance's (and the on-demand list price below is one instance's).
    ranked = ranked.assign(usd_per_hour=ranked["usd_per_hour"] / ranked["nodes"].clip(lower=1))
    # The deadline policy keeps the deadline itself: a spot offering the planner expects to
    # be late on its own is still one to use while there is slack.
    reason = ranked["excluded"].fillna("").astype(str)
    ranked = ranked[(reason == "") | reason.str.startswith(DEADLINE_EXCLUSION)]
    spot = ranked[ranked["market"] == "spot"]
    if spot.empty:
        asked = no_spot(resolved)  # a job kept off spot: on-demand as its file asks
        raise NoSpot(f"on-demand, as {asked} asks" if asked else
                     "no spot offering its constraints allow has a price now")
    # On-demand: the priced offerings, else the catalog's list price of the same type in
    # the same region (what a launch there pays).
    listed = spot.assign(market="on_demand", zone="",
                         usd_per_hour=spot["on_demand_usd_per_hour"].astype(float))
    od = pd.concat([ranked[ranked["market"] == "on_demand"], listed[listed["usd_per_hour"] > 0]])
    # The instance type: the current one if it is still offered, else that of the best
    # spot offering by expected cost among the types whose on-demand meets the deadline,
    # its start included, as the plan counts it (`planner.start_hours`; the others after).
    types = set(od["instance_type"])
    deadline = resolved.job.constraints.deadline_hours
    late = (spot["work_hours"] + start_hours(resolved) > deadline if deadline is not None
            else pd.Series(False, index=spot.index))
    kind = (current[3] if current is not None and current[3] in types else
            spot.assign(late=late)[spot["instance_type"].isin(types)].sort_values(
                ["late", "expected_cost"], kind="stable")["instance_type"].iloc[0]
            if spot["instance_type"].isin(types).any() else None)
    if kind is None:
        raise NoSpot("no instance type is offered both spot and on-demand within its "
                     "constraints")
    if current is None and bool(late[spot["instance_type"] == kind].all()):
        # The plan meets the deadline elsewhere (else it refused the job): its choice.
        raise NoSpot("no instance type offered both spot and on-demand meets the deadline "
                     "on-demand")
    spot = spot[spot["instance_type"] == kind].drop_duplicates(["cloud", "region", "zone"])
    od = od[od["instance_type"] == kind].sort_values("usd_per_hour", kind="stable")
    od_by_region = od.drop_duplicates(["cloud", "region"]).set_index(["cloud", "region"],
                                                                      drop=False)
    # Every region its constraints allow with on-demand of the type is offered, a region
    # without spot as a zone that never has it (after the zones with spot): where the job
    # runs on on-demand is the policy's to choose (`policies.deadline.on_demand_pick`).
    with_spot = set(zip(spot["cloud"], spot["region"], strict=True))
    only_od = od_by_region[[p not in with_spot for p in od_by_region.index]]
    places = pd.concat([spot, only_od.assign(usd_per_hour=np.inf)], ignore_index=True)
    zones = pd.DataFrame({
        "cloud": places["cloud"].to_numpy(), "region": places["region"].to_numpy(),
        "zone": places["zone"].to_numpy(), "gpu_model": places["gpu_model"].to_numpy(),
        "gpu_count": places["gpu_count"].to_numpy(),
        "spot_usd_per_hour": places["usd_per_hour"].to_numpy(dtype=float)})
    for k in KEY:  # (none for a region without spot)
        zones[f"spot_{k}"] = list(spot[k]) + [None] * len(only_od)
    od_rows = od_by_region.loc[list(zip(zones["cloud"], zones["region"], strict=True))]
    zones["od_usd_per_hour"] = od_rows["usd_per_hour"].to_numpy(dtype=float)
    for k in KEY:
        zones[f"od_{k}"] = od_rows[k].to_numpy()
    available, since, gone = _spot_now(store, zones, kind, at, unavailable, local_too)
    past = _market_past(store, zones, kind, at, prior)
    past.pop("available_for", None)  # spot now and since when: the observations', above
    market = MarketNow(
        tick=DECISION_PERIOD.total_seconds(),
        spot_available=available[None, :],
        available_for=since[None, :],
        spot_price=zones["spot_usd_per_hour"].to_numpy()[None, :],
        on_demand_price=zones["od_usd_per_hour"].to_numpy()[None, :],
        region=pd.factorize(zones["cloud"] + "/" + zones["region"])[0],
        move_usd=checkpoint_gb * egress_per_gb(zones["cloud"].to_numpy(dtype=object),
                                               zones["region"].to_numpy(dtype=object),
                                               zone=zones["zone"].to_numpy(dtype=object)),
        **past,
    )
    return DeadlineMarket(zones, market, gone)


def _offerings(store: PriceStore, resolved: ResolvedJob, at: datetime,
               rates: pd.DataFrame | Evidence | None,
               offerings: pd.DataFrame | None) -> pd.DataFrame:
    """`offerings` (the pass's prepared offerings), else those prepared from the prices
    at `at`."""
    if offerings is not None:
        return offerings
    frame = prices_at(store, at, include_cpu=resolved.cpu)
    if frame.empty:
        raise InvalidInput(f"at {at:%Y-%m-%d %H:%M} UTC: no prices known; import or "
                           "collect prices first")
    return prepare(frame, rates)


def _market_past(store: PriceStore, zones: pd.DataFrame, instance_type: str, at: datetime,
                 prior: MarketPrior) -> dict[str, np.ndarray]:
    """Per zone, what the market's past says at `at`, as the deadline replay computes it
    (`past.MarketPast` from `prior` over the store's availability observations of the last
    PAST, on their own grid, a minute at the finest; the tick holding `at` the last): the
    `MarketNow` fields of the past, one row. A zone never observed keeps the prior; with
    nothing stored, no field (the policy's prior speaks)."""
    frame = store.spot_availability.intervals(zones=list(zones["zone"]),
                                              instance_type=instance_type,
                                              kind="availability", start=at - PAST, end=at)
    if frame.empty:
        return {}
    # The replay's grid (its package loads the whole deadline replay): only when observed.
    from costsched.backtest.deadline.trace import AvailabilityTrace, interval_tick

    trace = AvailabilityTrace.from_intervals(frame, max(interval_tick(frame), FINEST_TICK),
                                             unpriced=True)
    now = int((pd.Timestamp(at) - trace.start).total_seconds() // trace.tick)
    available = trace.available[:, :now + 1]
    if available.shape[1] < now + 1:  # observations that end before `at`: none since
        available = np.pad(available, ((0, 0), (0, now + 1 - available.shape[1])))
    fields = MarketPast.of(available, trace.tick, prior).at(np.array([now]))
    seen = [trace.zones.index(z) if z in trace.zones else -1 for z in zones["zone"]]
    has_spot = _offers_spot(zones)
    known = (np.array(seen) >= 0) & has_spot
    fallback = {"spell_mean": prior.spell, "zone_share": prior.share, "dry_mean": prior.dry,
                "dry_for": 0.0, "spot_spell": prior.spell, "available_for": 0.0}
    out = {"spot_share": fields["spot_share"]}
    for name, value in fallback.items():
        out[name] = np.where(known, fields[name][:, np.maximum(seen, 0)], value)
    out["zone_share"] = np.where(has_spot, out["zone_share"], 0.0)  # a region without spot
    return out


def _spot_now(store: PriceStore, zones: pd.DataFrame, instance_type: str, at: datetime,
              unavailable: Collection[OfferingKey], local_too: bool = False
              ) -> tuple[np.ndarray, np.ndarray, tuple[str, ...]]:
    """Per zone: is spot available now, for how many seconds it has been seen so, this
    decision period included (as the deadline backtest counts its tick), and why a zone
    with a spot price has none now ('' where it has: `DeadlineMarket.gone`).
    `unavailable` may map each offering to why it is (`jobs.decider.DeadlineDecider`)."""
    n = len(zones)
    available = np.ones(n, dtype=bool)
    since = np.zeros(n)  # unknown: the policy counts one decision period
    why = [""] * n
    observed = store.spot_availability.latest(at, zones=list(zones["zone"]),
                                              instance_type=instance_type)
    observed = observed[observed["current"]] if not observed.empty else observed
    # Each keyed by its place (cloud, region, zone): a region's price (GCP's) has no zone,
    # and a loss in one region takes no spot away in another.
    by_zone = {(r.cloud, r.region, r.zone): r for r in observed.itertuples()}
    recent = recent_losses(store, at, instance_type, local_too)
    gone = {(r.cloud, r.region, r.zone): r for r in recent.itertuples()}  # the last one's
    blocked: dict[tuple, str] = {}
    for k in unavailable:
        said = unavailable.get(k, "") if isinstance(unavailable, Mapping) else ""
        blocked.setdefault((k[0], k[1], k[2]), said or "it met no capacity there just now")
    places = zip(zones["cloud"], zones["region"], zones["zone"], strict=True)
    for i, place in enumerate(places):
        seen = by_zone.get(place)
        if seen is not None:
            available[i] = bool(seen.available)
            if seen.available:
                # Counted as a replay counts it: the period now starting is one the spot
                # is seen to have (`MarketNow.available_for`), so live equals replay.
                since[i] = max((pd.Timestamp(at) - pd.Timestamp(seen.since)).total_seconds(),
                               0) + DECISION_PERIOD.total_seconds()
            else:
                why[i] = (f"the availability observations have it without spot since "
                          f"{pd.Timestamp(seen.since):%Y-%m-%d %H:%M} UTC")
        if place in gone:
            available[i], since[i] = False, 0.0
            why[i] = lost_said(gone[place])
        elif place in blocked:
            available[i], since[i] = False, 0.0
            why[i] = blocked[place]
    available &= _offers_spot(zones)
    return (available, np.where(available, since, 0.0),
            tuple(w if not a and o else "" for w, a, o in
                  zip(why, available, _offers_spot(zones), strict=True)))


def lost_said(event: Any) -> str:
    """Why a zone has no spot after a capacity error or a preemption there (a row of
    `recent_losses`): when, and the rule that keeps spot from it for RECENT."""
    what = "spot there was preempted" if event.event == "preempted" else \
        "a launch there met no capacity"
    return (f"{what} at {pd.Timestamp(event.at):%H:%M} UTC, and no spot is taken in a zone "
            f"for {RECENT.total_seconds() / 60:.0f} min after a preemption or a capacity "
            "error there")


def _offers_spot(zones: pd.DataFrame) -> np.ndarray:
    """Per zone of the market: has spot a price there (False: a region with on-demand
    only)? Every zone where the frame gives no prices."""
    if "spot_usd_per_hour" not in zones:
        return np.ones(len(zones), dtype=bool)
    return np.isfinite(zones["spot_usd_per_hour"].to_numpy(dtype=float))


def recent_losses(store: PriceStore, at: datetime, instance_type: str,
                  local_too: bool = False) -> pd.DataFrame:
    """The capacity errors and preemptions of `instance_type` in the last RECENT before
    `at` (oldest first): no spot in their zones now, as a deadline policy sees it."""
    events = store.availability.since(pd.Timestamp(at) - RECENT, clouds_only=not local_too)
    return events[events["event"].isin(["capacity", "preempted"])
                  & (events["instance_type"] == instance_type)]

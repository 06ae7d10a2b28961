"""Booked capacity in a job's plan: the offerings the store holds (capacity blocks for
sale, reservations held, flex-start prices) that fit a planned job, weighed against
spot with on-demand fallback and on-demand alone (`costsched.optimize.booked`).

The inputs are the plan's own: its ranking gives each instance type's spot and on-demand
prices (for the whole gang), preemption hazards and speed; the store gives the booked
offerings and how long spot stayed away after it went (its availability observations).

The comparison, the booked capacity's side and the spot and on-demand side it is weighed
against alike, is priced for the launcher that buys the capacity or launches into it
(`booked_by`: aws for a capacity block), whatever launcher is configured: a plan made for
the local launcher, whose restarts boot no instance, is ranked again for the job as that
launcher runs it (`resolve.launched_by`), and says so in one line (`BookedPlans.priced_as`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from costsched import clouds
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.model import BookedOffering, Constraints, Offering
from costsched.optimize.booked import (
    DEFAULT_DRY_HOURS,
    FLEX_START_MAX_HOURS,
    BookedPlans,
    HourlyMarket,
    JobShape,
    plans,
)
from costsched.optimize.decision import Place, egress_usd_per_gb
from costsched.optimize.job import Workload
from costsched.optimize.planner import JobPlan
from costsched.optimize.rank import BOOKED
from costsched.service.resolve import launched_by
from costsched.store import PriceStore

FLEX_START_WAIT_HOURS = clouds.gcp.FLEX_START_WAIT_HOURS
MARKETS_SHOWN = 5  # instance types weighed for the baselines beside the booked ones
USABLE = ("", "misses deadline")  # the ranking's reasons of offerings a plan may use
# What the launcher that runs booked capacity does with each market's (`_priced_as`).
RUNS = {"capacity_block": ("buys", "capacity block"), "flex_start": ("runs", "flex-start VM"),
        "reservation": ("launches into", "reservation")}

# A job's plan as a launcher runs the job: the ranking of `plan` (or of the launch's own
# decision) made again for the job as given.
Replan = Callable[[Workload], JobPlan]


def booked_plans(store: PriceStore, plan: JobPlan, at: datetime,
                 offered: Sequence[BookedOffering] | None = None, *,
                 replan: Replan) -> BookedPlans | None:
    """The job's plans with booked capacity (None when none fits it): `offered` (default
    the store's offerings at `at`) and the flex-start prices of its ranking, priced for the
    launcher that runs that capacity (`booked_by`), the job's plan made again for it by
    `replan` where `plan`'s job counts its restarts otherwise (a local launcher's)."""
    job = plan.job
    ranked = plan.ranked
    if offered is None:
        offered = store.booked.offered(at)
    fitting = [b for b in (*offered, *_flex_start(ranked, at, job.nodes))
               if _allowed(b.offering, job.job.constraints)]
    if not fitting:
        return None
    from costsched.migration.launcher import booked_by  # (a plan of none loads no launcher)

    # Every launcher that runs booked capacity is a cloud's, whose instances boot at each
    # restart: the job as the first of them runs it is the job as any of them does.
    bought = launched_by(job, booked_by(fitting[0].offering))
    priced_as = ""
    if bought is not job:
        priced_as = _priced_as(bought, fitting)
        plan = replan(bought)
        job = plan.job
    hourly = _hourly(store, plan, at)
    if not hourly:
        return None
    by_type = {m.instance_type: (shape, m) for shape, m in hourly.values()}
    booked = []
    for b in fitting:
        found = by_type.get(b.offering.instance_type)
        if found is None:
            found = _hourly_of(store, plan, at, b.offering.instance_type)
            if found is None:
                continue  # no speed or price of its type for the job: nothing to weigh
            by_type[b.offering.instance_type] = found
        shape, market = found
        booked.append((shape, market, b, _move_usd(market, b, shape.checkpoint_gb)))
    if not booked:
        return None
    shown = sorted(hourly.values(), key=lambda sm: sm[0].work_hours
                   * sm[1].on_demand_usd_per_hour)[:MARKETS_SHOWN]
    found = plans(job.name, [*shown, *(by_type[b.offering.instance_type] for _, _, b, _
                                       in booked)], booked, at)
    return replace(found, priced_as=priced_as)


def _priced_as(job: Workload, fitting: Sequence[BookedOffering]) -> str:
    """'priced as on aws, the launcher that buys the capacity blocks: restart 0.361 h: 10
    min boot and set-up ([migration] restart_minutes) + ...': for whom the comparison of
    `fitting` is priced (`job`, as that launcher runs it), and its restart there, each part
    with its setting (`restart_said`)."""
    from costsched.migration.launcher import booked_by

    markets: dict[str, dict[str, int]] = {}
    for b in fitting:
        o = b.offering
        count = markets.setdefault(booked_by(o), {})
        count[o.market] = count.get(o.market, 0) + 1
    who = []
    for launcher, count in markets.items():
        does = " and ".join(f"{RUNS[m][0]} the {RUNS[m][1]}{'s' * (n > 1)}"
                            for m, n in count.items())
        who.append(f"{launcher}, the launcher that {does}")
    return f"priced as on {', and on '.join(who)}: {job.restart_said()}"


def _allowed(o: Offering, c: Constraints) -> bool:
    """Whether the job's constraints allow booked capacity `o` (its market named, when
    the job names markets; one of a task's alternatives, where it has them)."""
    for value, accepted in ((o.cloud, c.clouds), (o.region, c.regions),
                            (o.market, c.markets), (o.gpu_model, c.gpu_models),
                            (o.gpu_count, c.gpu_counts), (o.instance_type, c.instance_types),
                            (o.zone, c.zones)):
        if accepted and value not in accepted:
            return False
    return not c.alternatives or any(_allowed(o, a) for a in c.alternatives)


def _flex_start(ranked: pd.DataFrame, at: datetime, nodes: int) -> list[BookedOffering]:
    """A flex-start request now per flex-start price of the ranking (left out of it as
    booked capacity): at its price per instance, after the expected wait, for at most
    seven days."""
    rows = ranked[(ranked["market"] == "flex_start") & (ranked["excluded"] == BOOKED)]
    out = []
    for r in rows.itertuples():
        o = Offering(r.cloud, r.region, r.zone, r.instance_type, "flex_start", r.gpu_model,
                     int(r.gpu_count), os=r.os)
        out.append(BookedOffering(o, at, at + timedelta(hours=FLEX_START_WAIT_HOURS
                                                        + FLEX_START_MAX_HOURS),
                                  max(nodes, 1), 0.0, float(r.usd_per_hour) / max(nodes, 1),
                                  wait_hours=FLEX_START_WAIT_HOURS, observed_at=r.effective_at,
                                  source=str(r.source)))
    return out


def _hourly(store: PriceStore, plan: JobPlan, at: datetime
            ) -> dict[str, tuple[JobShape, HourlyMarket]]:
    """Per instance type the job may use with an on-demand price: its shape there and
    its hourly market (the best spot offering by expected cost)."""
    ranked = plan.ranked
    usable = ranked[ranked["excluded"].isin(USABLE) & ranked["market"].isin(
        ["spot", "on_demand"])]
    out = {}
    for kind in dict.fromkeys(usable["instance_type"]):
        found = _hourly_of(store, plan, at, kind, usable)
        if found is not None:
            out[kind] = found
    return out


def _hourly_of(store: PriceStore, plan: JobPlan, at: datetime, kind: str,
               usable: pd.DataFrame | None = None) -> tuple[JobShape, HourlyMarket] | None:
    if usable is None:
        ranked = plan.ranked
        usable = ranked[ranked["excluded"].isin(USABLE)
                        & ranked["market"].isin(["spot", "on_demand"])]
    rows = usable[usable["instance_type"] == kind]
    od = rows[rows["market"] == "on_demand"].sort_values("usd_per_hour", kind="stable")
    spot = rows[rows["market"] == "spot"].sort_values("expected_cost", kind="stable")
    if od.empty and spot.empty:
        return None
    first = (od if len(od) else spot).iloc[0]
    sps = float(first["steps_per_second"])
    if not (sps > 0 and math.isfinite(sps)):
        return None
    job = plan.job
    nodes = job.nodes
    if len(od):
        od_label, od_price = str(od.iloc[0]["offering"]), float(od.iloc[0]["usd_per_hour"])
    else:  # the list price of the type in the spot offering's region, for the gang
        listed = float(spot.iloc[0].get("on_demand_usd_per_hour", math.nan))
        if not (listed > 0):
            return None
        od_label = f"{spot.iloc[0]['cloud']} {spot.iloc[0]['region']} {kind} on-demand"
        od_price = listed * nodes
    deadline = job.job.constraints.deadline_hours
    shape = JobShape(job.job.steps / sps / 3600, None if deadline is None else float(deadline),
                     job.restart_hours, job.checkpoint_hours, nodes, job.job.checkpoint_gb)
    if spot.empty:
        return shape, HourlyMarket(kind, od_label, od_price)
    s = spot.iloc[0]
    return shape, HourlyMarket(kind, od_label, od_price, str(s["offering"]),
                               float(s["usd_per_hour"]), float(s["preemptions_per_hour"]),
                               _dry_hours(store, str(s["cloud"]), str(s["region"]),
                                          str(s["zone"] or ""), kind, at),
                               str(s["region"]))


def _dry_hours(store: PriceStore, cloud: str, region: str, zone: str, instance_type: str,
               at: datetime) -> float:
    """The mean length in hours of the spells without spot the store saw end before `at`
    in the zone (the region's zones for a regional price), with one spell of
    DEFAULT_DRY_HOURS counted as a prior (as the deadline policies count it)."""
    seen = store.spot_availability.intervals(cloud=cloud, instance_type=instance_type,
                                             kind="availability", end=at)
    if seen.empty:
        return DEFAULT_DRY_HOURS
    seen = seen[seen["zone"] == zone] if zone else seen[[
        clouds.zone_region(z) == (cloud, region) for z in seen["zone"]]]
    dry = seen[~seen["available"].astype(bool)]
    limit = pd.Timestamp(at)
    dry = dry[dry["end"] <= limit]
    hours = (dry["end"] - dry["start"]).dt.total_seconds().to_numpy(dtype=float) / 3600
    return float((np.sum(hours) + DEFAULT_DRY_HOURS) / (len(hours) + 1))


def _move_usd(market: HourlyMarket, booked: BookedOffering, checkpoint_gb: float) -> float:
    """The checkpoint's egress of a move from the spot offering onto `booked`."""
    o = booked.offering
    if checkpoint_gb <= 0 or not market.spot_region or market.spot_region == o.region:
        return 0.0
    rate = egress_usd_per_gb(Place(o.cloud, market.spot_region), Place(o.cloud, o.region))
    return checkpoint_gb * rate


def booked_for(store: PriceStore, planned: Sequence[JobPlan], at: datetime, *,
               replan: Replan) -> tuple[BookedPlans | None, ...]:
    """`booked_plans` of each job (jobs that share a ranking share its plans; `replan`
    ranks a job again as the launcher of its booked capacity runs it); () when the store
    holds no booked offering and no job has a flex-start price."""
    offered = store.booked.offered(at)
    if not offered and not any((p.ranked["market"] == "flex_start").any() for p in planned):
        return ()
    done: dict[int, BookedPlans | None] = {}
    out = []
    for p in planned:
        key = id(p.ranked)
        if key not in done:
            done[key] = booked_plans(store, p, at, offered, replan=replan)
        found = done[key]
        out.append(None if found is None else replace(found, job=p.job.name))
    return tuple(out)

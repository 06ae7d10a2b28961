"""Plans across spot, on-demand and capacity booked ahead (a capacity block, a flex-start
VM, a reservation held): for one job on one instance type, the expected cost of each way
to finish it by its deadline, part by part, in dollars.

A plan is a sequence of parts on a timeline from now: for example spot until the block
starts (with on-demand as the fallback if spot is lost too often to finish the part in
time), then the block, then what runs after it if the block ends before the job does.
Every plan keeps the deadline whatever spot does: a spot part has on-demand behind it.

**A spot part with on-demand fallback** (`spot_part`): W hours of work to do within a
window of T hours. Preemptions come at the offering's hazard (`optimize.hazard`), N of
them over the run, Poisson with mean rate x `decision.expected_hours`. Each costs, in
time, the restart, half a checkpoint interval of work done again and the wait for spot to
come back (`dry_hours`: the mean spell without spot the store saw, else an hour); in
billed spot hours, the restart and the work done again. The part's first start (getting
its instance up: the restart's time) is billed on spot too, as the rankings and the
on-demand plan bill theirs. The slack T - W - restart (one
restart is kept for on-demand) absorbs k = floor(slack / loss) of them; at the k+1-th,
the part goes on-demand: by then the work done is W (k+1) / (N+1) (preemptions fall
uniformly over the work), the rest and the lost half interval run on-demand. Expected
cost = sum over N of P(N) x that N's bill. Without a deadline the slack is unbounded.

**Booked capacity** (`BookedOffering`): usable from its start (a flex-start VM: after its
expected wait) to its end less a margin (BLOCK_MARGIN_HOURS for a capacity block, whose
instances EC2 starts ending 30 minutes before its end, plus the decider's period), with
one restart at its start. A block is bought upfront and a reservation already held costs
nothing more: both are sunk, so the work they can hold is done there and only the rest
runs outside it, before the block (by its start) or after it (by the deadline), as spot
parts with on-demand behind them. A flex-start VM is billed by the hour it runs (at most
FLEX_START_MAX_HOURS). The move onto booked capacity in another region pays the
checkpoint's egress once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from costsched.amounts import hours as hours_text
from costsched.amounts import hours_times, stored_price, usd
from costsched.model import BookedOffering
from costsched.optimize.decision import expected_hours
from costsched.vocabulary import counted

# A capacity block's instances start to end 30 minutes before its end (EC2); the job is
# moved off an hour before that, one decision period of the daemon's (`DECISION_PERIOD`).
BLOCK_MARGIN_HOURS = 1.5
RESERVATION_MARGIN_HOURS = 1.0  # a reservation's end: moved off one decision period before
FLEX_START_MAX_HOURS = 7 * 24.0  # a flex-start VM runs at most seven days
DEFAULT_DRY_HOURS = 1.0  # spot's absence after a preemption when none was seen to end
POISSON_TAIL = 1e-12


@dataclass(frozen=True)
class JobShape:
    """What a plan needs of one job on one instance type: its work to go in hours there
    (`steps / steps per second`), its deadline in hours from now (None: none), restart
    and checkpoint interval in hours, its instances at once and its checkpoint's size."""

    work_hours: float
    deadline_hours: float | None
    restart_hours: float
    checkpoint_hours: float
    nodes: int = 1
    checkpoint_gb: float = 0.0


@dataclass(frozen=True)
class HourlyMarket:
    """The spot and on-demand offerings of one instance type a job may use, at the price
    of its whole gang per hour (`spot_label` None: no spot)."""

    instance_type: str
    on_demand_label: str
    on_demand_usd_per_hour: float
    spot_label: str | None = None
    spot_usd_per_hour: float = math.nan
    preemptions_per_hour: float = 0.0
    dry_hours: float = DEFAULT_DRY_HOURS
    spot_region: str = ""


@dataclass(frozen=True)
class Part:
    """One part of a plan: what runs from `start_hours` to (at the latest) `end_hours`
    after now, the work it does and its expected cost, and why."""

    kind: str  # spot | on_demand | capacity_block | flex_start | reservation | wait
    label: str
    start_hours: float
    end_hours: float
    work_hours: float
    usd: float
    why: str

    def as_dict(self, now: datetime) -> dict:
        return {"kind": self.kind, "offering": self.label, "work_hours": self.work_hours,
                "usd": self.usd, "why": self.why,
                "start": now + timedelta(hours=self.start_hours),
                "end": now + timedelta(hours=self.end_hours)}


@dataclass(frozen=True)
class CapacityPlan:
    """A way to finish the job: its parts, the expected total, whether it keeps the
    deadline (`reason` says why not), and the booked capacity it buys or uses."""

    name: str
    parts: tuple[Part, ...] = ()
    usd: float = math.nan
    feasible: bool = True
    reason: str = ""
    booked: BookedOffering | None = None
    fallback_probability: float = 0.0  # that spot is lost too often and on-demand steps in

    def as_dict(self, now: datetime) -> dict:
        b = self.booked
        return {"name": self.name, "usd": None if math.isnan(self.usd) else self.usd,
                "feasible": self.feasible, "reason": self.reason or None,
                "fallback_probability": self.fallback_probability,
                "parts": [p.as_dict(now) for p in self.parts],
                "booked": None if b is None else {
                    "market": b.offering.market, "offering_id": b.offering_id,
                    "cloud": b.offering.cloud, "region": b.offering.region,
                    "zone": b.offering.zone, "instance_type": b.offering.instance_type,
                    "instance_count": b.instance_count, "start": b.start, "end": b.end,
                    "upfront_usd": b.upfront_usd, "usd_per_hour": b.usd_per_hour,
                    "observed_at": b.observed_at, "source": b.source}}


@dataclass(frozen=True)
class BookedPlans:
    """One job's plans: on-demand only, spot with on-demand fallback, and one per booked
    offering that fits it (each at its best split)."""

    job: str
    on_demand: CapacityPlan
    spot: CapacityPlan | None
    booked: tuple[CapacityPlan, ...] = field(default=())
    # For whom they are priced, where not as the job's plan is (its launcher runs no booked
    # capacity): 'priced as on aws, the launcher that buys the capacity block: restart ...'.
    priced_as: str = ""

    @property
    def baseline(self) -> CapacityPlan:
        """The cheaper of on-demand only and spot with on-demand fallback that keeps the
        deadline (on-demand when neither does)."""
        found = [p for p in (self.on_demand, self.spot) if p is not None and p.feasible]
        return min(found, key=lambda p: p.usd) if found else self.on_demand

    @property
    def best(self) -> CapacityPlan:
        """The cheapest plan that keeps the deadline (the baseline unless a booked one is
        cheaper)."""
        found = [p for p in self.booked if p.feasible and p.usd < self.baseline.usd]
        return min(found, key=lambda p: p.usd) if found else self.baseline

    @property
    def saves_usd(self) -> float:
        return self.baseline.usd - self.best.usd

    def as_dict(self, now: datetime) -> dict:
        return {"job": self.job, "best": self.best.name, "baseline": self.baseline.name,
                "saves_usd": self.saves_usd, "on_demand": self.on_demand.as_dict(now),
                "spot": None if self.spot is None else self.spot.as_dict(now),
                "booked": [p.as_dict(now) for p in self.booked],
                "priced_as": self.priced_as or None}


# --- a spot part with on-demand behind it ---------------------------------------------


@dataclass(frozen=True)
class SpotOutcome:
    """The expected bill of a spot part: spot hours, on-demand hours, preemptions, the
    chance that on-demand steps in; `feasible` False when even on-demand cannot finish
    the work in the window."""

    spot_hours: float = 0.0
    on_demand_hours: float = 0.0
    preemptions: float = 0.0
    fallback_probability: float = 0.0
    feasible: bool = True


def spot_part(work: float, window: float | None, market: HourlyMarket, job: JobShape
              ) -> SpotOutcome:
    """`work` hours on spot within `window` hours (None: no limit), on-demand stepping in
    when the preemptions have used up the slack (see the module's doc)."""
    restart, tau = job.restart_hours, job.checkpoint_hours
    if work <= 0:
        return SpotOutcome()
    limit = math.inf if window is None else window
    if work + restart > limit + 1e-9:
        return SpotOutcome(feasible=False)
    if market.spot_label is None:
        return SpotOutcome(on_demand_hours=work + restart)
    rate = max(market.preemptions_per_hour, 0.0)
    loss_bill = restart + tau / 2
    loss_time = loss_bill + max(market.dry_hours, 0.0)
    slack = limit - work - restart
    absorbed = math.inf if loss_time <= 0 or math.isinf(slack) else math.floor(slack / loss_time)
    mean = rate * float(expected_hours(work, rate, tau, restart)) if rate > 0 else 0.0
    spot = od = preempted = fallback = 0.0
    for n, p in _poisson(mean):
        if n <= absorbed:  # its first start, its work and each preemption's loss
            spot += p * (restart + work + n * loss_bill)
            preempted += p * n
            continue
        k = int(absorbed)
        done = work * (k + 1) / (n + 1)
        spot += p * (restart + done + k * loss_bill + tau / 2)
        od += p * (work - done + tau / 2 + restart)
        preempted += p * (k + 1)
        fallback += p
    return SpotOutcome(spot, od, preempted, fallback)


def _poisson(mean: float) -> list[tuple[int, float]]:
    """(n, P(N = n)) of a Poisson count until the tail is negligible."""
    if mean <= 0:
        return [(0, 1.0)]
    top = int(mean + 12 * math.sqrt(mean) + 20)
    out, total = [], 0.0
    for n in range(top + 1):
        p = math.exp(-mean + n * math.log(mean) - math.lgamma(n + 1))
        out.append((n, p))
        total += p
        if total > 1 - POISSON_TAIL and n > mean:
            break
    return [(n, p / total) for n, p in out]


def _spot_parts(kind_start: float, work: float, window: float | None, market: HourlyMarket,
                job: JobShape, what: str) -> tuple[list[Part], float, float, bool]:
    """The parts of a spot-with-fallback stretch starting `kind_start` hours from now:
    (parts, usd, fallback probability, feasible)."""
    if work <= 0:
        return [], 0.0, 0.0, True
    found = spot_part(work, window, market, job)
    if not found.feasible:
        return [], math.nan, 0.0, False
    end = kind_start + (window if window is not None else
                        found.spot_hours + found.on_demand_hours)
    parts = []
    if market.spot_label is not None:
        usd = found.spot_hours * market.spot_usd_per_hour
        spot_hours, price, _ = hours_times(found.spot_hours, market.spot_usd_per_hour, usd)
        parts.append(Part("spot", market.spot_label, kind_start, end, work, usd,
                          f"{what}: {hours_text(work)} h of work on spot, "
                          f"{found.preemptions:.1f} preemptions expected at "
                          f"{market.preemptions_per_hour:.3f}/h, each losing "
                          f"{hours_text(job.restart_hours + job.checkpoint_hours / 2)} h "
                          f"billed and {hours_text(market.dry_hours)} h without spot, "
                          f"its start included; {spot_hours} h at {price}/h"))
    if found.on_demand_hours > 0:
        usd = found.on_demand_hours * market.on_demand_usd_per_hour
        why = (f"{what}: on-demand if spot is lost too often to finish in time "
               f"({found.fallback_probability:.0%} likely), {hours_text(found.on_demand_hours)} h "
               f"expected at {stored_price(market.on_demand_usd_per_hour)}/h"
               if market.spot_label is not None else
               f"{what}: {hours_text(work)} h of work and a restart on-demand")
        parts.append(Part("on_demand", market.on_demand_label, kind_start, end,
                          0.0 if market.spot_label is not None else work, usd, why))
    total = sum(p.usd for p in parts)
    return parts, total, found.fallback_probability, True


# --- the plans ----------------------------------------------------------------------


def on_demand_plan(job: JobShape, market: HourlyMarket) -> CapacityPlan:
    hours = job.work_hours + job.restart_hours
    usd = hours * market.on_demand_usd_per_hour
    part = Part("on_demand", market.on_demand_label, 0.0, hours, job.work_hours, usd,
                f"{hours_text(job.work_hours)} h of work and a restart at "
                f"{stored_price(market.on_demand_usd_per_hour)}/h")
    late = job.deadline_hours is not None and hours > job.deadline_hours + 1e-9
    return CapacityPlan("on-demand only", (part,), usd, not late,
                        f"needs {hours_text(hours)} h, the deadline is "
                        f"{hours_text(job.deadline_hours)} h away" if late else "")


def spot_plan(job: JobShape, market: HourlyMarket) -> CapacityPlan | None:
    if market.spot_label is None:
        return None
    parts, usd, fallback, ok = _spot_parts(0.0, job.work_hours, job.deadline_hours, market,
                                           job, "the whole job")
    return CapacityPlan("spot with on-demand fallback", tuple(parts), usd, ok,
                        "" if ok else "cannot finish by the deadline even on-demand",
                        fallback_probability=fallback)


def booked_plan(job: JobShape, market: HourlyMarket, booked: BookedOffering, now: datetime,
                move_usd: float = 0.0) -> CapacityPlan:
    """The cheapest way to finish the job using `booked` (see the module's doc);
    `move_usd`: the checkpoint's egress onto it."""
    o = booked.offering
    name = plan_name(booked)
    if booked.instance_count < job.nodes:
        return CapacityPlan(name, feasible=False, booked=booked,
                            reason=f"holds {booked.instance_count} instances, the job "
                                   f"needs {job.nodes}")
    start = max((booked.start - now).total_seconds() / 3600, 0.0) + booked.wait_hours
    end = (booked.end - now).total_seconds() / 3600 - margin_hours(o.market)
    if o.market == "flex_start":
        end = min(end, start + FLEX_START_MAX_HOURS - margin_hours(o.market))
    deadline = job.deadline_hours
    usable_end = end if deadline is None else min(end, deadline)
    inside = min(job.work_hours, max(usable_end - start - job.restart_hours, 0.0))
    if inside <= 0:
        return CapacityPlan(name, feasible=False, booked=booked,
                            reason="none of its time is usable before the deadline")
    if o.market == "flex_start" and deadline is not None and \
            start + job.work_hours + job.restart_hours > deadline + 1e-9:
        return CapacityPlan(name, feasible=False, booked=booked,
                            reason="no time left to finish on-demand if flex-start "
                                   "capacity is not found")
    outside = job.work_hours - inside
    block_end = start + job.restart_hours + inside
    after = None if deadline is None else max(deadline - end, 0.0)
    best: tuple[float, list[Part], list[Part], float] | None = None
    for before_work in _splits(outside, start, after, job):
        before = _spot_parts(0.0, before_work, start, market, job,
                             f"before the {_kind(o.market)} starts")
        later = _spot_parts(end, outside - before_work, after, market, job,
                            f"after the {_kind(o.market)} ends")
        if not (before[3] and later[3]):
            continue
        usd = before[1] + later[1]
        if best is None or usd < best[0]:
            best = (usd, before[0], later[0], max(before[2], later[2]))
    if best is None:
        return CapacityPlan(name, feasible=False, booked=booked,
                            reason=f"the {hours_text(outside)} h it cannot hold do not fit "
                                   "before it starts or after it ends by the deadline")
    hours_used = inside + job.restart_hours
    cost = booked.upfront_usd + booked.usd_per_hour * job.nodes * hours_used
    here = Part(o.market, name, start, block_end if outside <= 0 else end, inside,
                cost + move_usd,
                _booked_why(booked, inside, hours_used, cost, move_usd,
                            end if best[2] else None, now, job))
    wait = [Part("wait", "-", 0.0, start, 0.0, 0.0,
                 f"nothing runs until the {_kind(o.market)} starts: it holds the work")
            ] if start > 0 and not best[1] else []
    parts = (*wait, *best[1], here, *best[2])
    return CapacityPlan(name, parts, cost + move_usd + best[0], True, booked=booked,
                        fallback_probability=best[3])


def plans(name: str, markets: Sequence[tuple[JobShape, HourlyMarket]],
          booked: Sequence[tuple[JobShape, HourlyMarket, BookedOffering, float]],
          now: datetime) -> BookedPlans:
    """On-demand only and spot with on-demand fallback on each of `markets` (the job's
    shape on an instance type, and that type's prices), the cheapest of each kind kept, and
    each booked offering with the job's shape and hourly market on its instance type and
    the egress of a move onto it."""
    if not markets:
        raise ValueError("markets: expected at least one instance type's prices")
    od = min((on_demand_plan(job, m) for job, m in markets), key=_order)
    spots = [p for p in (spot_plan(job, m) for job, m in markets) if p is not None]
    spot = min(spots, key=_order) if spots else None
    found = tuple(booked_plan(job, m, b, now, move) for job, m, b, move in booked)
    return BookedPlans(name, od, spot, found)


def plan_name(b: BookedOffering) -> str:
    """'capacity block p5.48xlarge us-east-1a 12-02 11:30 for 48 h', 'reservation
    p5.48xlarge us-east-1a cr-0123', 'flex-start a3-highgpu-8g us-central1'."""
    o = b.offering
    where = f"{_kind(o.market)} {o.instance_type} {o.zone or o.region}"
    if o.market == "capacity_block":
        return f"{where} {b.start:%m-%d %H:%M} for {b.hours:g} h"
    if o.market == "reservation":
        return f"{where} {b.offering_id}"
    return where


def margin_hours(market: str) -> float:
    """How long before its end the job leaves booked capacity of `market`."""
    return BLOCK_MARGIN_HOURS if market == "capacity_block" else RESERVATION_MARGIN_HOURS


def _splits(outside: float, before: float, after: float | None, job: JobShape) -> list[float]:
    """Work to do before the booked capacity starts (the rest after it ends): all before,
    all after, and as much before as on-demand could finish there."""
    if outside <= 0:
        return [0.0]
    most = max(before - job.restart_hours, 0.0)
    return sorted({min(outside, most), 0.0, outside})


def _booked_why(b: BookedOffering, inside: float, hours_used: float, cost: float,
                move_usd: float, leave_at: float | None, now: datetime, job: JobShape) -> str:
    """Why the booked part: what it is, what it costs, the work it holds, and when the
    job leaves it (`leave_at`, hours from now; None: it finishes there)."""
    o = b.offering
    span = f"{b.start:%Y-%m-%d %H:%M} to {b.end:%Y-%m-%d %H:%M} UTC"
    move = f", the move onto it {_usd(move_usd)} of egress" if move_usd > 0 else ""
    if o.market == "capacity_block":
        what = (f"{counted(b.instance_count, 'instance')} from {span}, bought for "
                f"{_usd(b.upfront_usd)} upfront")
    elif o.market == "reservation":
        what = f"held already ({b.offering_id}), free to use until {b.end:%Y-%m-%d %H:%M} UTC"
    else:
        what = (f"asked for now, expected in {b.wait_hours:g} h, at "
                f"{stored_price(b.usd_per_hour)}/h an instance: {hours_text(hours_used)} h, "
                f"{_usd(cost)}")
    off = ("" if leave_at is None else
           f", moved off by {now + timedelta(hours=leave_at):%Y-%m-%d %H:%M} UTC")
    return f"{what}: {hours_text(inside)} h of the job's {hours_text(job.work_hours)} h{off}{move}"


def _kind(market: str) -> str:
    return {"capacity_block": "capacity block", "flex_start": "flex-start",
            "reservation": "reservation"}.get(market, market)


def _order(p: CapacityPlan) -> tuple[bool, float]:
    return (not p.feasible, p.usd if not math.isnan(p.usd) else math.inf)


def _usd(value: float) -> str:
    """An amount by the one rule of money (`costsched.amounts.usd`): '$12.50', '$0.0049'."""
    return usd(value)

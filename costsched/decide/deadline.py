"""The deadline core: a `costsched.policies.deadline` policy's next placement for a batch of
runs (one live job, or every replayed start of a backtest), from arrays.

The live decider (`service.deadline_jobs`, over the store's market at t, a batch of one) and
the deadline backtest (`backtest.deadline.engine`, over the trace's market at each tick,
every run at once) both ask `next_placements`. A replay may wait (`NONE`: no instance this
tick) where the policy says so; a live job is never left without an instance (`wait=False`):
where the policy would wait, a job that runs keeps its instance, and a job without one goes
to the cheapest zone with spot now, else to the on-demand that costs least to the end of
its work, its start included (`policies.deadline.on_demand_pick`: where its checkpoint is
on a tie).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from costsched.amounts import hours, hours_all
from costsched.decide.deadline_market import DeadlineMarket
from costsched.decide.deadline_why import on_demand_why
from costsched.decide.price import Decision
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.model import InvalidInput, Job, Offering
from costsched.optimize.decision import MovePrice, Overheads, Place, price_move
from costsched.policies import OfferingKey
from costsched.policies.deadline.base import NONE, DeadlinePolicy, DeadlineState, MarketNow
from costsched.policies.deadline.on_demand_pick import cheapest_on_demand

KEY = ["cloud", "region", "zone", "instance_type", "market", "os"]


@dataclass(frozen=True)
class DeadlineDecision(Decision):
    """A deadline policy's decision, with what a launch tries after its offering when
    capacity is short: spot in the other zones of the same market where it is available
    now (cheapest first), then on-demand in the decision's region; (key, {"gpu_model",
    "gpu_count", "usd_per_hour"}) each."""

    fallbacks: tuple[tuple[OfferingKey, dict], ...] = ()
    # Why it runs on on-demand where spot is offered, in the policy's terms and figures
    # ('' when on spot, or where the job already ran on on-demand: `deadline_why`).
    why: str = ""
    # Where it stays: a spot offering cheaper than `other` that has no spot now, (key,
    # expected USD of the rest there with the move, the move's price, why it has none).
    left_out: tuple[OfferingKey, float, MovePrice, str] | None = None


def next_placements(policy: DeadlinePolicy, state: DeadlineState, market: MarketNow, *,
                    wait: bool = True) -> np.ndarray:
    """Per run, the placement for this tick: `NONE`, zone z (spot) or zones + z
    (on-demand), the safety rule applied (`DeadlinePolicy.decide`). `wait=False`: never
    `NONE` (see the module's doc)."""
    chosen = np.asarray(policy.decide(state, market), dtype=np.int64)
    idle = chosen == NONE
    if wait or not idle.any():
        return chosen
    spot_now = np.where(market.spot_available, market.spot_price, np.inf)
    has_spot = np.isfinite(spot_now).any(axis=1)
    cheapest = np.argmin(spot_now, axis=1)
    instead = np.where(state.placement >= 0, state.placement,
                       np.where(has_spot, cheapest,
                                cheapest_on_demand(state, market, state.remaining)))
    return np.where(idle, instead, chosen).astype(np.int64)


def decide_now(chosen: DeadlinePolicy, found: DeadlineMarket, job: Job, *, name: str,
               steps_per_second: float, created_at: datetime, due: datetime, at: datetime,
               steps_left: float, current: OfferingKey | None, overheads: Overheads,
               size_gb: float, late_ok: bool, nodes: int = 1,
               lost_work_hours: float | None = None) -> DeadlineDecision:
    """A live job's decision from its market (`found`): its state as the policy sees it
    (progress, time to `due`, where it runs and last ran, its home zone), the placement
    (`next_placements`, never waiting), its price, the expected cost of staying and of
    the choice with the move priced as the bill prices it, and the fallbacks a launch
    tries. `late_ok=False` (a new job): a deadline that even on-demand from now cannot
    meet is refused in one line. A gang of `nodes` is priced and moved as its N instances
    (the checkpoint's egress once). `lost_work_hours`: the work a move now loses, where
    the job's instance or log knows it (else the model's assumption, as in a replay)."""
    zones, market = found.offerings, found.market
    row = zones.iloc[0]
    sps = steps_per_second
    work = job.steps / sps
    here = _index(zones, current)
    if here is not None and here < len(zones):
        # The job's own spot instance runs there: spot is available in its zone, whatever
        # another launch met lately.
        market.spot_available[0, here] = True
    placement = np.array([here if here is not None else NONE])
    last = NONE if here is None else here % len(zones)
    if here is None and current is not None:
        last = _zone_in_region(zones, current[1], default=NONE)
    home = _zone_in_region(zones, job.constraints.regions[0]
                           if job.constraints.regions else "", default=0)
    state = DeadlineState(
        progress=np.array([max(job.steps - steps_left, 0.0) / sps]),
        work=np.array([work]),
        time_left=np.array([(due - at).total_seconds()]),
        placement=placement,
        overhead_left=np.array([0.0]),
        restart=overheads.restart_hours(job.checkpoint_gb) * 3600,
        checkpoint=max(job.checkpoint_hours * 3600, 1.0),
        home=np.array([home]),
        deadline=np.array([(due - created_at).total_seconds()]),
        last_zone=np.array([last]),
        nodes=nodes,
    )
    # A new job's first start copies no checkpoint (its store is its own, empty): its
    # deadline and its placement count that start, as its plan does (`planner.start_hours`).
    first_gb = size_gb if late_ok else 0.0
    if not late_ok:
        _check_reachable(name, job, state, due, str(row["spot_instance_type"]),
                         overheads.restart_hours(first_gb))
    # Never wait live: a running instance is kept, or the job placed.
    choice = int(next_placements(chosen, state, market, wait=False)[0])
    target = _offering_row(zones, choice)
    hours_left = float(state.remaining[0]) / 3600
    stay = (float("nan") if here is None else
            hours_left * nodes * float(_offering_row(zones, here)["usd_per_hour"]))
    price = float(target["usd_per_hour"])  # one instance's, as every offering is quoted
    gang_price = nodes * price
    key: OfferingKey = tuple(target[KEY])  # type: ignore[assignment]
    # A move priced as the bill prices it (`optimize.decision.price_move`), a first
    # placement at its restart alone.
    move = None
    if current is not None and key != tuple(current):
        src = _offering_row(zones, here) if here is not None else None
        move = price_move(overheads, Place(current[0], current[1], current[2] or ""),
                          Place(key[0], key[1], key[2] or ""),
                          float("nan") if src is None else nodes * float(src["usd_per_hour"]),
                          gang_price, size_gb, job.checkpoint_hours, lost_work_hours)
    start = (0.0 if choice == here else overheads.restart_hours(first_gb) * gang_price) \
        if move is None else float(move.total)
    fallbacks = _fallbacks(found, key)
    other = None  # `Decision.other`: its first fallback, where a launch would go after it
    if current is not None and move is None and here is not None and fallbacks:
        # Staying (its price is the choice's): what the first fallback would cost, the
        # move priced as a move there is.
        alt, facts = fallbacks[0]
        there = price_move(overheads, Place(current[0], current[1], current[2] or ""),
                           Place(alt[0], alt[1], alt[2] or ""), gang_price,
                           nodes * float(facts["usd_per_hour"]), size_gb, job.checkpoint_hours,
                           lost_work_hours)
        other = (alt, hours_left * nodes * float(facts["usd_per_hour"]) + float(there.total),
                 there)
    left_out = None
    if current is not None and move is None and here is not None:
        left_out = _left_out(found, current, other, stay, hours_left, nodes, gang_price,
                             overheads, size_gb, job.checkpoint_hours, lost_work_hours)
    why = ""
    if choice >= len(zones) and (current is None or current[4] != key[4]):
        why = on_demand_why(chosen, state, market, found, _spot_key)
    return DeadlineDecision(at, chosen.name, current, key, _offering(target), price, stay,
                            hours_left * gang_price + start, fallbacks, why, left_out,
                            alternatives=tuple(
                                (_offering(pd.Series({**dict(zip(KEY, k, strict=True)),
                                                      **facts})), facts["usd_per_hour"])
                                for k, facts in fallbacks),
                            move=move, other=other)


def _left_out(found: DeadlineMarket, current: OfferingKey,
              other: tuple[OfferingKey, float, MovePrice] | None, stay: float,
              hours_left: float, nodes: int, gang_price: float, overheads: Overheads,
              size_gb: float, checkpoint_hours: float, lost_work_hours: float | None
              ) -> tuple[OfferingKey, float, MovePrice, str] | None:
    """The spot offering without spot now (`DeadlineMarket.gone` says why) that would cost
    least to finish the job on, the move included, where that is less than its best
    alternative (`other`; else than staying): what a stay leaves out. None when none is."""
    zones = found.offerings
    best = None
    for z in range(len(zones)):
        why = found.gone_at(z)
        if not why:
            continue
        key = _spot_key(zones, z)
        price = float(zones["spot_usd_per_hour"].iloc[z])
        if key == tuple(current) or not np.isfinite(price):
            continue
        move = price_move(overheads, Place(current[0], current[1], current[2] or ""),
                          Place(key[0], key[1], key[2] or ""), gang_price, nodes * price,
                          size_gb, checkpoint_hours, lost_work_hours)
        there = hours_left * nodes * price + float(move.total)
        if best is None or there < best[1]:
            best = (key, there, move, why)
    bar = stay if other is None else other[1]
    return best if best is not None and best[1] < bar else None


def _spot_key(zones: pd.DataFrame, zone: int) -> OfferingKey:
    """The spot offering of the market's `zone`."""
    return tuple(zones[f"spot_{k}"].iloc[zone] for k in KEY)  # type: ignore[return-value]


def _check_reachable(name: str, job: Job, state: DeadlineState, due: datetime,
                     instance_type: str, start: float) -> None:
    """A new job's deadline against its work on `instance_type` on-demand and its first
    start (`start` hours: boot and set-up, warm-up), as the plan counts them
    (`planner.start_hours`)."""
    run = float(state.remaining[0]) / 3600
    have = float(state.time_left[0]) / 3600
    if run + start > have:
        need, run_said, start_said = hours_all(run + start, run, start)
        raise InvalidInput(
            f"job {name!r}: deadline {due:%Y-%m-%d %H:%M} UTC is {hours(have)} h away, but "
            f"its {job.steps:,.0f} steps need {need} h on {instance_type} even on-demand "
            f"({run_said} h to run and {start_said} h to start): set a later deadline or "
            "allow faster GPUs")


def _fallbacks(found: DeadlineMarket, choice: OfferingKey
               ) -> tuple[tuple[OfferingKey, dict], ...]:
    """`DeadlineDecision.fallbacks` of `choice` in the market it was chosen from."""
    zones = found.offerings.assign(available=found.market.spot_available[0])
    spot = zones[zones["available"]].sort_values("spot_usd_per_hour", kind="stable")
    od = zones[zones["region"] == choice[1]].head(1)
    out, seen = [], {choice}
    for prefix, rows in (("spot", spot), ("od", od)):
        for _, row in rows.iterrows():
            key = tuple(row[f"{prefix}_{k}"] for k in KEY)
            if key not in seen:
                seen.add(key)
                out.append((key, {"gpu_model": row["gpu_model"],
                                  "gpu_count": int(row["gpu_count"]),
                                  "usd_per_hour": float(row[f"{prefix}_usd_per_hour"])}))
    return tuple(out)  # type: ignore[arg-type]


def _index(zones: pd.DataFrame, key: OfferingKey | None) -> int | None:
    """The placement index of an offering key: zone i (spot) or zones + i (on-demand)."""
    if key is None:
        return None
    for prefix, offset in (("spot", 0), ("od", len(zones))):
        cols = zones[[f"{prefix}_{k}" for k in KEY]]
        hits = np.flatnonzero([tuple(r) == tuple(key) for r in cols.itertuples(index=False)])
        if len(hits):
            if prefix == "od":  # an on-demand instance: its zone if listed, else the region's
                return offset + _zone_in_region(zones, key[1], default=int(hits[0]),
                                                zone=key[2])
            return offset + int(hits[0])
    return None


def _zone_in_region(zones: pd.DataFrame, region: str, *, default: int, zone: str = "") -> int:
    exact = np.flatnonzero(zones["zone"].to_numpy() == zone) if zone else []
    if len(exact):
        return int(exact[0])
    hits = np.flatnonzero(zones["region"].to_numpy() == region)
    return int(hits[0]) if len(hits) else default


def _offering_row(zones: pd.DataFrame, placement: int) -> pd.Series:
    n = len(zones)
    row = zones.iloc[placement % n]
    prefix = "spot" if placement < n else "od"
    return pd.Series({**{k: row[f"{prefix}_{k}"] for k in KEY},
                      "gpu_model": row["gpu_model"], "gpu_count": int(row["gpu_count"]),
                      "usd_per_hour": float(row[f"{prefix}_usd_per_hour"])}, dtype=object)


def _offering(row: pd.Series) -> Offering:
    cloud, region, zone, instance_type, market, os_name = (row[k] for k in KEY)
    return Offering(cloud, region, zone, instance_type, market, row["gpu_model"],
                    int(row["gpu_count"]), os=os_name)

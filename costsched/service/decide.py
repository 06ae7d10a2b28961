"""Where should a job run now? A policy asked live, from the store's prices as of a time.

The market is read from the store here; the decision itself is `costsched.decide.price`'s,
the same function the backtest replays each period with. One difference: live,
a policy chooses among every offering the job's constraints allow (`JOB_SCOPE`: every
allowed cloud, region, zone, market and GPU count), where a replay keeps the named
policy's published scope. Live, a move is made only when it pays: the decision model's
expected cost of the rest of the job on the choice, the move included, must be below
staying by more than the margin (`pays`), unless the policy weighed the move itself
(`Policy.weighs_moves`: dynamic-aware), whose move is carried out as it decided.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from functools import partial

from costsched import clouds as cloud_facts
from costsched.cpu_work import CpuWork
from costsched.decide.price import (
    Decision,
    choose,
    expected_costs,
    move_of,
    pays,
    per_instance,
    period_cost,
)
from costsched.lazy import numpy as np
from costsched.lazy import pandas as pd
from costsched.model import CLOUDS, MARKETS, InvalidInput, Job
from costsched.optimize.availability import preemption_rates
from costsched.optimize.decision import Overheads
from costsched.optimize.forecast import typical_from_observations
from costsched.optimize.hazard import Evidence
from costsched.optimize.rank import allowed_offerings
from costsched.passes import memo
from costsched.policies import (
    JobState,
    MarketView,
    OfferingKey,
    make_policy,
    view_from_prices,
)
from costsched.policies.base import JOB_SCOPE
from costsched.policies.history import with_typical
from costsched.policies.market import market_view
from costsched.prices import prices_at
from costsched.service.stores import StoreLike, using
from costsched.service.throughputs import table_with_measured
from costsched.service.values import as_time, at_least
from costsched.store import PriceStore
from costsched.store.spot_availability import RUNNING_KINDS
from costsched.throughput import ThroughputTable
from costsched.vocabulary import choose as choose_name
from costsched.vocabulary import closest, did_you_mean

__all__ = ["Ask", "Decision", "OfferingName", "choose", "decide", "decide_all", "decide_to",
           "decision_rates", "move_of", "observed_rates", "parse_offering", "pays",
           "period_cost"]

# Fewer hours of observed spot time than this leave a group to the cloud's default rate.
MIN_OBSERVED_HOURS = 24.0


@dataclass(frozen=True)
class Ask:
    """One job to decide for (`decide_all`): its offering now (`current`, None before its
    first placement), the steps it has left (None: all of them) and its throughput table
    (None: the store's)."""

    job: Job
    home_region: str
    current: OfferingKey | None = None
    steps_left: float | None = None
    table: ThroughputTable | None = None
    nodes: int = 1  # a gang: N instances, priced N times, preempted at N times the rate
    # Offerings the account's quota does not hold the job's instances in: never chosen
    # (but `current`, where it runs). One set shared by the asks of one size.
    blocked: frozenset[OfferingKey] = field(default_factory=frozenset)
    # The job's restart model (`ResolvedJob.overheads`, its nodes' included); None: the
    # `overheads` of `decide_all` for its nodes.
    overheads: Overheads | None = field(default=None, kw_only=True)
    # The hours of work a move of it now loses, as measured (`JobState.lost_work_hours`);
    # None: the decision model's assumption.
    lost_work_hours: float | None = field(default=None, kw_only=True)


def decide(store: StoreLike, job: Job, *, home_region: str,
           current: OfferingKey | None = None, steps_left: float | None = None,
           policy: str = "dynamic-aware", at: datetime | str | None = None,
           margin: float = 0.05, overheads: Overheads | None = None,
           table: ThroughputTable | None = None,
           measured_rates: pd.DataFrame | Evidence | None = None) -> Decision:
    """The offering `policy` puts `job` on at `at` (default now), given the offering it runs
    on (`current`, None before its first placement) and the steps it has left (default all
    of them). `measured_rates`: preemptions and spot hours seen per (cloud, region, GPU
    model, count), as the decision model takes them; the store's spot availability
    observations before `at` are added to them (`observed_rates`); groups seen by
    neither take the clouds' default rates. `decide_all` for one job."""
    [decision] = decide_all(store, [Ask(job, home_region, current, steps_left, table)],
                            policy=policy, at=at, margin=margin, overheads=overheads,
                            measured_rates=measured_rates)
    return decision


def decide_all(store: StoreLike, asks: Sequence[Ask], *, policy: str = "dynamic-aware",
               at: datetime | str | None = None, margin: float = 0.05,
               overheads: Overheads | None = None,
               measured_rates: pd.DataFrame | Evidence | None = None) -> list[Decision]:
    """`decide` for each of `asks`, in order, from one market: the prices, rates and price
    history are read once, each model's view is made once, and jobs of the same
    constraints share their scope and what the policy derives from it; per job, only its
    steps left and placement are its own."""
    when = as_time(at)
    for ask in asks:
        at_least("steps_left", ask.job.steps if ask.steps_left is None else ask.steps_left, 0)
    at_least("margin", margin, 0)
    chosen = make_policy(policy, scope=JOB_SCOPE, margin=margin)  # live: the job's scope
    with using(store) as opened:
        default = None if all(a.table is not None for a in asks) else \
            table_with_measured(opened)
        rates = decision_rates(opened, when, measured_rates)
        # Once per pass (a job decided again under its lease included); the rates object
        # is kept with the market, so its id names it while the pass lasts.
        # CPU jobs (their throughput is CpuWork's) need the CPU instance types in it.
        cpu = any(isinstance(a.table, CpuWork) for a in asks)
        _, market = memo(("market", opened.url, when, chosen.history_hours, id(rates), cpu),
                         lambda: (rates, _market(opened, when, rates, chosen.history_hours,
                                                 cpu)),
                         shared=True)
    views: dict[tuple[int, str], tuple[ThroughputTable, MarketView]] = {}
    # Views without the offerings over quota, one per (view, blocked set): keeping the two
    # keeps their ids theirs while the loop runs.
    masked: dict[tuple[int, int], tuple[MarketView, frozenset, MarketView]] = {}
    out = []
    for ask in asks:
        table = ask.table if ask.table is not None else default
        speeds = table.speeds_key(ask.job.model)
        if speeds is not None:  # one view per pass for the jobs whose speeds are alike
            view = market.shared(("model view", speeds),
                                 partial(market.for_model, table, ask.job.model))
        else:
            key = (id(table), ask.job.model)  # the table is kept with its view: its id holds
            if key not in views:
                views[key] = (table, market.for_model(table, ask.job.model))
            view = views[key][1]
        if ask.nodes > 1:  # a gang: N instances' price and hazard; its checkpoint moves once
            scaled = {"prices": view.prices * ask.nodes, "derived": {},
                      "preemptions_per_hour": view.preemptions_per_hour * ask.nodes}
            if getattr(view, "typical", None) is not None:  # a policy that reads history
                scaled["typical"] = view.typical * ask.nodes  # type: ignore[attr-defined]
            view = replace(view, **scaled)
        if ask.blocked:
            found = masked.get((id(view), id(ask.blocked)))
            if found is None:
                found = masked[(id(view), id(ask.blocked))] = (
                    view, ask.blocked, _without(view, ask.blocked))
            view = _restored(found[2], found[0], ask.current)
        state = JobState(ask.job, ask.home_region,
                         ask.job.steps if ask.steps_left is None else ask.steps_left,
                         None if ask.current is None else tuple(ask.current),
                         ask.overheads or (overheads or Overheads()).gang(ask.nodes),
                         ask.lost_work_hours)
        out.append(per_instance(choose(view, state, chosen, margin, when), ask.nodes))
    return out


def _without(view: MarketView, keys: frozenset[OfferingKey]) -> MarketView:
    """`view` where the offerings `keys` have no price now: no policy chooses them."""
    rows = [r for r in (view.row(k) for k in keys) if r is not None]
    if not rows:
        return view
    prices = view.prices.copy()
    prices[rows] = np.nan
    return replace(view, prices=prices, derived={})


def _restored(masked: MarketView, view: MarketView, current: OfferingKey | None) -> MarketView:
    """`masked` with the price of the offering the job runs on back, where it was masked."""
    row = view.row(current)
    if row is None or masked is view or not np.isnan(masked.prices[row]) or \
            np.isnan(view.prices[row]):
        return masked
    prices = masked.prices.copy()
    prices[row] = view.prices[row]
    return replace(masked, prices=prices, derived={})


def _market(store: PriceStore, when: datetime, rates: Evidence,
            history_hours: float, include_cpu: bool = False) -> MarketView:
    """The market as of `when`, with each offering's typical price over the `history_hours`
    before it when the policy reads history (the same history a replay gives it)."""
    frame = prices_at(store, when, include_cpu=include_cpu)
    if frame.empty:
        raise InvalidInput(f"at {when:%Y-%m-%d %H:%M} UTC: no prices known; import or "
                           "collect prices first")
    market = market_view(frame, when, rates)
    if not history_hours:
        return market
    since = when - timedelta(hours=history_hours)
    past = pd.concat([prices_at(store, since, use_catalog=False),
                      store.history(since, when, os="linux")])
    return with_typical(market, typical_from_observations(
        past, market.keys, when.timestamp(), history_hours))


def decision_rates(store: PriceStore, at: datetime,
                   measured: pd.DataFrame | Evidence | None = None) -> Evidence:
    """What the decision model's hazards are computed from at `at`: `measured` (such as
    the preemptions costsched's own jobs met), the store's observations (`observed_rates`)
    and the newest published risk signals (`costsched.optimize.hazard`). Evidence given
    is complete already: returned as it is."""
    if isinstance(measured, Evidence):
        return measured
    return Evidence(signals=store.signals.latest(at), simulated=simulated_preemptions(
        store, at)).with_observed(measured, observed_rates(store, at))


def simulated_preemptions(store: PriceStore, at: datetime) -> pd.DataFrame | None:
    """The preemptions the local launcher's instances met before `at`, per offering
    (cloud, region, zone, instance type; preemptions): a simulation, never counted
    (`jobs.market.measured_rates`), said where a rate is explained (`hazard.Evidence.simulated`)."""
    from costsched.store.availability import LOCAL

    seen = store.availability.since(event="preempted")
    seen = seen[(seen["source"] == LOCAL) & (seen["at"] <= pd.Timestamp(at))]
    if seen.empty:
        return None
    keys = ["cloud", "region", "zone", "instance_type"]
    return seen.groupby(keys, as_index=False).size().rename(columns={"size": "preemptions"})


def observed_rates(store: PriceStore, at: datetime, *,
                   min_hours: float = MIN_OBSERVED_HOURS) -> pd.DataFrame | None:
    """Preemptions per hour of running spot time per (cloud, region, zone, instance type,
    GPU model, count) from the store's preemption traces and probe logs before `at`, where
    at least `min_hours` were observed in the region; None when no region was. The
    decision model pools them from zone to cloud (`costsched.optimize.hazard`)."""
    lives = store.spot_availability.spells(kinds=RUNNING_KINDS, end=at)
    if lives.empty:  # (most stores: no traces or probe logs imported)
        return None
    rates = preemption_rates(lives, ("cloud", "region", "zone", "instance_type", "gpu_model",
                                     "gpu_count"))
    region_hours = rates.groupby(["cloud", "region"])["hours"].transform("sum")
    rates = rates[region_hours >= min_hours]
    return rates.reset_index(drop=True) if len(rates) else None


# --- a move the user names ------------------------------------------------------------------

# Its example is priced in the bundled prices (by region, as they price aws spot).
OFFERING_EXAMPLE = "aws us-west-2 p3.2xlarge spot"
OFFERING_SPELLING = ("'CLOUD ZONE-OR-REGION INSTANCE_TYPE MARKET' as the tables print it, "
                     f"e.g. '{OFFERING_EXAMPLE}' (or with colons: "
                     f"'{OFFERING_EXAMPLE.replace(' ', ':')}'; market spot or on-demand)")


@dataclass(frozen=True)
class OfferingName:
    """An offering as a user writes it: the location is its zone, or its region where
    the price holds for the whole region."""

    cloud: str
    location: str
    instance_type: str
    market: str  # spot | on_demand

    def __str__(self) -> str:
        return (f"{self.cloud} {self.location} {self.instance_type} "
                f"{self.market.replace('_', '-')}")


def parse_offering(text: str) -> OfferingName:
    """'aws us-west-2 p3.2xlarge spot' (or 'aws:us-west-2:p3.2xlarge:spot') as an
    `OfferingName`; a one-line InvalidInput saying how to write one otherwise."""
    parts = text.strip().replace(":", " ").split()
    if len(parts) != 4:
        raise InvalidInput(f"offering {text!r}: expected {OFFERING_SPELLING}")
    # Names in any case ('AWS', 'On-Demand'); a typo is answered with the close ones.
    spelled = []
    for what, value, accepted in (("cloud", parts[0], CLOUDS), ("market", parts[3], MARKETS)):
        found, error = choose_name([value], accepted)
        if error is not None:  # written in four parts: the one misspelt is what to fix
            raise InvalidInput(f"offering {text!r}: {what} {error}")
        spelled.append(found[0])
    return OfferingName(spelled[0], parts[1], parts[2], spelled[1])


def _find_named(o: pd.DataFrame, target: OfferingName, when: datetime) -> int:
    """The position of the priced offering `target` names (its location and instance type
    in any case); a one-line InvalidInput with the close names when there is none."""
    mine = ((o["cloud"] == target.cloud) & (o["market"] == target.market)).to_numpy()
    zone, region = o["zone"].str.lower(), o["region"].str.lower()
    location = target.location.lower()
    here = mine & ((zone == location) | ((zone == "") & (region == location))).to_numpy()
    typed = mine & (o["instance_type"].str.lower() == target.instance_type.lower()).to_numpy()
    found = np.flatnonzero(here & typed)
    if len(found):
        return int(found[0])
    # A machine type with its GPU attached ('n1-standard-4' of GCP's
    # 'n1-standard-4+1xnvidia-tesla-t4'): the one it names, where it is the only one.
    base = o["instance_type"].str.split("+", n=1).str[0].str.lower().to_numpy()
    attached = np.flatnonzero(here & (base == target.instance_type.lower()))
    if len(attached) and len(set(o["instance_type"].to_numpy()[attached])) == 1:
        return int(attached[0])
    what = f"{target.cloud} {target.market.replace('_', '-')}"
    if not here.any():
        places = sorted(set(o["zone"][mine]) - {""} | set(o["region"][mine]))
        problem = f"no {what} price in {target.location!r}"
        hint = _other_level(o, mine, typed, target, what) or did_you_mean(
            target.location, [p for p in places if p.lower() != location])
    else:
        names = o["instance_type"][here if not typed.any() else mine]
        problem = (f"no {what} price for instance type {target.instance_type!r}"
                   + ("" if not typed.any() else f" in {target.location!r}"))
        # The type is priced, elsewhere: the offerings that have it, never the name typed.
        hint = _typed_elsewhere(o, typed, target) if typed.any() else did_you_mean(
            target.instance_type, sorted(set(names)))
    raise InvalidInput(f"offering '{target}': no price known for it at "
                       f"{when:%Y-%m-%d %H:%M} UTC ({problem})"
                       + (hint or "; `costsched prices show` lists the priced offerings"))


def _typed_elsewhere(o: pd.DataFrame, typed: np.ndarray, target: OfferingName) -> str:
    """'; did you mean ...?' naming the offerings of the type named priced elsewhere (its
    cloud and market: `typed`), each as `--to` takes it: those in the place named (the zones
    of a region, the region of a zone, whichever level holds its price), else the closest."""
    location = target.location.lower()
    region = o["region"].str.lower().to_numpy()
    owner = cloud_facts.zone_region(location)
    named = owner[1].lower() if owner is not None and location not in set(region) else location
    places = o["zone"].where(o["zone"] != "", o["region"]).to_numpy()
    near = sorted(set(places[typed & (region == named)]))
    picks = near[:3] or closest(target.location, sorted(set(places[typed])))
    if not picks:
        return ""
    spelled = str(o["instance_type"][typed].iloc[0])  # as stored, whatever the case typed
    return "; did you mean " + " or ".join(
        f"'{replace(target, location=str(p), instance_type=spelled)}'" for p in picks) + "?"


def _other_level(o: pd.DataFrame, mine: np.ndarray, typed: np.ndarray,
                 target: OfferingName, what: str) -> str | None:
    """What is priced at the other level of the place named: a region whose prices are per
    zone (the zones priced, those of the type named if any), or a zone whose region is
    priced as a whole; None when neither."""
    location = target.location.lower()
    region, zone = o["region"].str.lower().to_numpy(), o["zone"].str.lower().to_numpy()
    zoned = mine & (region == location) & (zone != "")
    if zoned.any():
        of_type = zoned & typed
        if not of_type.any():
            return (f"; {target.location} is priced per zone, and {target.instance_type} "
                    f"has no {what} price in any of them (zones priced: "
                    f"{', '.join(sorted(set(o['zone'][zoned])))})")
        zones = sorted(set(o["zone"][of_type]))
        return (f"; {target.location} is priced per zone: {what} prices for "
                f"{target.instance_type} in {', '.join(zones)}; name a zone, e.g. "
                f"'{replace(target, location=zones[0])}'")
    owner = cloud_facts.zone_region(location)
    if owner is None or owner[0] != target.cloud:
        return None
    unlisted = cloud_facts.given_zone_problem(target.location)
    if unlisted is not None:  # 'us-east-1z': of us-east-1's shape, but no zone of it
        return f"; {unlisted}"
    whole = mine & (zone == "") & (region == owner[1].lower())
    if not whole.any():
        return None
    named = replace(target, location=str(o["region"][whole].iloc[0]))
    return (f"; {target.location} is in {named.location}, priced as a whole: name the "
            f"region, e.g. '{named}'")


def decide_to(store: StoreLike, job: Job, target: OfferingName, *, current: OfferingKey,
              steps_left: float, at: datetime | str | None = None,
              overheads: Overheads | None = None, table: ThroughputTable | None = None,
              measured_rates: pd.DataFrame | Evidence | None = None,
              lost_work_hours: float | None = None,
              prices: Callable[[bool], pd.DataFrame] | None = None) -> Decision:
    """The decision to move `job` from `current` to `target`, the user's choice: with the
    decision model's expected cost of the rest of the job there, the move included, and
    where it is, whichever is less. The target must be priced now, allowed by the job's
    constraints and able to run its model. `lost_work_hours`: the work the move loses, as
    measured (None: the decision model's assumption). `prices(include_cpu)`: the prices
    as of `at` where the caller read them already (a pass's market), else read here."""
    when = as_time(at)
    at_least("steps_left", steps_left, 0)
    table = table if table is not None else ThroughputTable.load()
    cpu = isinstance(table, CpuWork)
    with using(store) as opened:
        frame = prices(cpu) if prices is not None else prices_at(opened, when, include_cpu=cpu)
        rates = decision_rates(opened, when, measured_rates)
    view = view_from_prices(frame, when, table, job.model, rates)
    o = view.offerings
    row = _find_named(o, target, when)
    choice = view.key(row)
    state = JobState(job, current[1], steps_left, tuple(current), overheads or Overheads(),
                     lost_work_hours)
    why = allowed_offerings(o.iloc[[row]], replace(job.constraints, max_price_per_hour=None))
    if why.iloc[0]:
        raise InvalidInput(f"offering '{target}': the job's constraints exclude it "
                           f"({why.iloc[0]})")
    if np.isnan(view.steps_per_second[row]):
        raise InvalidInput(f"offering '{target}': no throughput known for model "
                           f"{job.model!r} on its GPUs")
    stay, there, move = expected_costs(view, state, choice)
    return Decision(when, "asked", state.current, choice, view.offering(choice),
                    float(view.prices[row]), stay, there, move=move)

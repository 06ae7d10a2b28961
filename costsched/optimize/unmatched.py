"""Why no priced offering fits a job, what exists instead, and how to get what is missing.

One explanation for every caller (`plan`, `launch`, a recovery, the deadline policy), from
the prices as of the time asked (`prices_at`'s frame, every offering), the first class that
holds:

1. no price at all as of that time;
2. a value of a filter that no priced offering has (a region, a GPU model, an instance
   type, ...): named, with the values that exist and the closest spelling, and where the
   value is a price missing (a region of the job's clouds, a market, a GPU costsched
   knows), the line that gets it (`unmatched_prices.place_line`, `unmatched_booked`);
3. every value exists, but not together. A SkyPilot task's cpus / memory that leave out
   every instance type its GPUs are priced on at its place and market are said first
   (`unmatched_sizes`), then the shape (GPU model and count, the instance
   types; CPU instance types for CPU work) is looked for, then the place (clouds,
   regions, zones), then the market: "no spot price known for A100:1", with what exists
   instead (the shape in the other market, the same GPUs at other counts in the market
   asked, the shape in the market asked elsewhere) and the `costsched collect` line that
   fetches today's prices of the shape (`unmatched_collect`), or, where costsched's
   catalog lists a region's offerings and the GPU is not among them, that it is not
   offered there and where it is (`unmatched_prices`);
4. every offering that fits is over the job's price cap.

Each ends with the key of the job's file that gets it a plan (`no_plan_keys`): the filter
that matched nothing, or that keeps out where its shape is priced.

Pure: frames in, words out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime, timedelta, timezone

from costsched import catalog, clouds
from costsched.amounts import stored_price
from costsched.cpu_work import CpuWork
from costsched.lazy import pandas as pd
from costsched.model import Constraints
from costsched.optimize.job import Workload
from costsched.optimize.no_plan_keys import FIELD_OF, change, key, of_alternative
from costsched.optimize.rank import zone_allowed
from costsched.optimize.unmatched_booked import booked_line
from costsched.optimize.unmatched_deadline import deadline_missed as deadline_missed
from costsched.optimize.unmatched_deadline import faster_left_out as faster_left_out
from costsched.optimize.unmatched_prices import by_market, no_price, place_line
from costsched.optimize.unmatched_sizes import sized_out
from costsched.optimize.unmatched_words import Missing as Missing
from costsched.optimize.unmatched_words import (
    counts_priced,
    in_market,
    in_place,
    in_shape,
    is_number,
    named_types,
    offerings_said,
    shape_words,
    values_listed,
    where_words,
)
from costsched.throughput import GPU_SPECS
from costsched.vocabulary import ALTERNATIVE_DROPPED, ORDER_DROPPED, did_you_mean, word

# A plan of a time older than this is of the past: today's prices would not fill it.
RECENT = timedelta(days=2)



def with_dropped(missing: Missing | None, notes: Sequence[str]) -> Missing | None:
    """`missing` with the task's alternatives dropped as it was read (`notes`: a job's,
    those ending ALTERNATIVE_DROPPED) said after it: a plan with none names each
    alternative of the task, those it could not use too."""
    dropped = [n for n in notes if n.endswith(ALTERNATIVE_DROPPED)]
    return missing if missing is None or not dropped else replace(missing, dropped=dropped)


def unmatched(job: Workload, market: pd.DataFrame, at: datetime,
              now: datetime | None = None,
              spot_markets: Mapping[str, datetime] | None = None,
              limits: Mapping[str, str] | None = None) -> Missing | None:
    """Why no offering of `market` (every price as of `at`) passes the job's filters, or
    None when some do. `now` (default the clock) decides whether `costsched collect`, which
    fetches today's prices, can fill a plan as of `at`. `spot_markets`: the clouds whose
    spot market the store holds, each with its newest spot price (`costsched.prices.
    spot_markets`), which leave out their bundled spot prices: said where that is why.
    `limits`: why the job has a place filter costsched derived rather than its file wrote
    ('clouds': "the task's s3 bucket /data ... keeps it on aws ..."), said where that
    filter keeps the job from where its shape is priced."""
    c = job.job.constraints
    when = f"{pd.Timestamp(at):%Y-%m-%dT%H:%MZ}"
    if market.empty:
        return Missing(f"no offering has a price as of {when} (neither a stored price nor a "
                       "list price held by then)")
    if c.alternatives:  # a task's alternatives: each one's own reason
        return _each_alternative(job, market, at, now, spot_markets, limits)
    cpu = isinstance(job.table, CpuWork)
    recent = pd.Timestamp(at) >= pd.Timestamp(now or datetime.now(timezone.utc)) - RECENT
    missing = _retired(job, market, at, when) or _unknown_value(job, market, when, recent)
    if missing is not None:
        return missing
    missing = _apart(job, market, when, cpu, recent, at, spot_markets or {}, limits or {})
    if missing is not None:
        return missing
    left = market[in_shape(market, c, cpu) & in_place(market, c) & in_market(market, c)]
    limit = c.max_price_per_hour
    if limit is not None and (left["usd_per_hour"] > limit).all():
        cheapest = left.loc[left["usd_per_hour"].idxmin()]
        return Missing(f"no offering that its filters allow costs at most "
                       f"{stored_price(limit)}/h as of {when}; the cheapest, "
                       f"{_label(cheapest)}, costs {stored_price(cheapest['usd_per_hour'])}/h",
                       fix=_raise(job, "constraints.max_price"))
    return None


def _label(row: pd.Series) -> str:
    """An offering as the plan's tables name it ('gcp us-east5-a g2-standard-4 spot')."""
    if isinstance(row.get("offering"), str):
        return row["offering"]
    zone = row.get("zone")
    where = zone if isinstance(zone, str) and zone else row["region"]
    return f"{row['cloud']} {where} {row['instance_type']} {word(row['market'])}"


def _raise(job: Workload, field: str) -> str:
    """'raise constraints.max_price in job.yaml': the key of the job's file that lifts a
    limit, as the file writes it (`costsched.max_price` in a SkyPilot task)."""
    return change(job, [field.removeprefix("constraints.")], "raise")


_PLACE_FIELDS = ("clouds", "regions", "zones", "markets", "gpu_models", "gpu_counts",
                 "instance_types")


def _each_alternative(job: Workload, market: pd.DataFrame, at: datetime,
                      now: datetime | None, spot_markets: Mapping[str, datetime] | None,
                      limits: Mapping[str, str] | None) -> Missing | None:
    """Why no alternative of a task (`Constraints.alternatives`) has an offering, each
    named with what it asks (`alternative_said`); None when one has."""
    c, cpu, said = job.job.constraints, isinstance(job.table, CpuWork), []
    numbers = _numbers_in_task(job, len(c.alternatives))
    kept = [(i, own) for i, alt in enumerate(c.alternatives, 1)
            if (own := within(c, alt)) is not None]
    for i, own in kept or [(0, replace(c, alternatives=()))]:
        alone = of_alternative(job, i - 1) if kept else job  # its own keys
        missing = unmatched(replace(alone, job=replace(job.job, constraints=own)), market,
                            at, now, spot_markets, limits)
        if not kept:  # none is within the job's filters (a shape of its set): those say it
            return missing
        if missing is None:
            return None
        said.append(alternative_said(numbers[i - 1], own, missing, market, cpu))
    return Missing(said[0] if len(said) == 1 else
                   "none of its alternatives has an offering: " + "; ".join(said))


def _numbers_in_task(job: Workload, kept: int) -> list[int]:
    """The number (from 1) each of a job's `kept` alternatives has in its task: its place
    in the task's `ordered:` list, those dropped as the task was read counted, as every
    line of a plan numbers them (`unmatched_order.PassedOver`); else its place among them."""
    places = [j for j, item in enumerate(job.order, 1) if not item.get(ORDER_DROPPED)]
    return places if len(places) == kept else list(range(1, kept + 1))


def alternative_said(i: int, own: Constraints, missing: Missing, market: pd.DataFrame,
                     cpu: bool) -> str:
    """'alternative 2 (L4:1 spot in gcp): WHY; FIX': alternative `i` (`own`) and `missing`."""
    return f"alternative {i} ({asked_words(own, market, cpu)}): {missing.why()}"


def asked_words(own: Constraints, market: pd.DataFrame, cpu: bool) -> str:
    """What an alternative (`own`) asks: 'L4:1 spot in gcp'."""
    return " ".join(filter(None, [shape_words(own, market, cpu), " or ".join(
        word(m) for m in own.markets), where_words(own)]))


def within(c: Constraints, alt: Constraints) -> Constraints | None:
    """The job's constraints narrowed to one of its alternatives (None when the two have
    nothing in common: a shape of the job's set another alternative asks for)."""
    values = {}
    for name in _PLACE_FIELDS:
        mine, theirs = getattr(alt, name), getattr(c, name)
        values[name] = tuple(v for v in mine if v in theirs) if mine and theirs else (
            mine or theirs)
        if mine and theirs and not values[name]:
            return None
    return replace(c, alternatives=(), **values)


def shapes(job: Workload, market: pd.DataFrame) -> list[tuple[str, Constraints]]:
    """The shapes a job asks for, each named ('A100:1') with the job's constraints narrowed
    to it: the (GPU model, count) pairs of its instance types where it names some (a
    SkyPilot task's accelerators), else of its GPU models and counts. [] for one shape."""
    c = job.job.constraints
    if isinstance(job.table, CpuWork) or not c.gpu_models:
        return []
    counts = c.gpu_counts
    if c.instance_types:
        typed = market[market["instance_type"].isin(list(c.instance_types))
                       & market["gpu_model"].isin(list(c.gpu_models))]
        pairs = sorted({(str(g), int(n)) for g, n in zip(typed["gpu_model"],
                                                          typed["gpu_count"], strict=True)
                        if not counts or int(n) in counts})
        # a model none of whose types is priced here (its types are another cloud's, where
        # a bucket keeps the job off) keeps the pairs its types have in the catalog; one
        # the market has no type of at all keeps the counts asked (one with no type among
        # the job's and priced elsewhere was dropped, with its note, at reading)
        listed = [r for r in map(catalog.lookup_any, c.instance_types) if r is not None]
        priced = set(market["gpu_model"])
        # (a model no type of the job's clouds has was dropped, with its note, at reading)
        sold = _sold_on(c.clouds)
        for g in (g for g in c.gpu_models if g not in {p[0] for p in pairs} and g in sold):
            own = {(g, int(r["gpu_count"])) for r in listed if r["gpu_model"] == g
                   and (not counts or int(r["gpu_count"]) in counts)}
            pairs += sorted(own) or ([(g, n) for n in counts] if g not in priced else [])
    else:
        pairs = [(g, n) for g in c.gpu_models for n in counts] if counts else [
            (g, 0) for g in c.gpu_models]
    if len(pairs) < 2:
        return []
    out = []
    for g, n in sorted(set(pairs)):
        types = market.loc[(market["gpu_model"] == g) & (market["gpu_count"] == n),
                           "instance_type"] if n else market.loc[market["gpu_model"] == g,
                                                                 "instance_type"]
        narrowed = replace(c, gpu_models=(g,), gpu_counts=(n,) if n else c.gpu_counts,
                           instance_types=tuple(t for t in c.instance_types
                                                if t in set(types)) or c.instance_types)
        out.append((f"{g}:{n}" if n else g, _own_place(narrowed, market)))
    return out


def _sold_on(names: Sequence[str]) -> set[str]:
    """The GPU models the catalog has an instance type of on the clouds `names` (any)."""
    types = catalog.instance_types()
    return set((types[types["cloud"].isin(list(names))] if names else types)["gpu_model"])


def _own_place(c: Constraints, market: pd.DataFrame) -> Constraints:
    """A shape's constraints with the place of its own instance types: of the clouds and
    regions a set of alternatives names together (aws/us-west-2 for V100:1, gcp/us-central1
    for T4:1), those of the clouds its types are of."""
    if not c.instance_types or not c.clouds:
        return c
    clouds = set(market.loc[market["instance_type"].isin(list(c.instance_types)), "cloud"])
    own = tuple(x for x in c.clouds if x in clouds)
    if not own or len(own) == len(c.clouds):
        return c
    listed = catalog.on_demand_observations(include_cpu=True)
    regions = set(listed.loc[listed["cloud"].isin(own), "region"])
    # (a list none of whose values is of those clouds is kept as it is: never widened)
    return replace(c, clouds=own,
                   regions=tuple(r for r in c.regions if r in regions) or c.regions,
                   zones=tuple(z for z in c.zones if any(z.startswith(r) for r in regions))
                   or c.zones)


# --- the classes ---------------------------------------------------------------------------


def _retired(job: Workload, market: pd.DataFrame, at: datetime,
             when: str) -> Missing | None:
    """Instance types none of which is priced because their cloud retired them by `at`
    (a task's V100:1 on azure: Standard_NC6s_v3), with the shape priced elsewhere."""
    c = job.job.constraints
    if not c.instance_types or market["instance_type"].isin(list(c.instance_types)).any():
        return None
    rows = [catalog.lookup_any(str(t)) for t in c.instance_types]
    days = {r["retired"] for r in rows if r is not None}
    if None in rows or not days or any(pd.isna(d) or d > pd.Timestamp(at) for d in days):
        return None
    day = max(days)
    clouds = " and ".join(sorted({str(r["cloud"]) for r in rows if r is not None}))
    alive = replace(c, instance_types=(), clouds=(), regions=(), zones=())
    shape = market[in_shape(market, alive) & in_market(market, alive)] if c.gpu_models \
        else market.iloc[:0]
    markets = " or ".join(word(m) for m in c.markets)
    instead = [f"{markets} {shape_words(alive, market, False)} on other types: "
               f"{offerings_said(shape.sort_values('usd_per_hour', kind='stable'))}"] \
        if not shape.empty else []
    return Missing(f"{named_types(c.instance_types)} retired by {clouds} "
                   f"{'on' if len(days) == 1 else 'by'} {day:%Y-%m-%d}: not rented as of "
                   f"{when}", instead,
                   change=change(job, ["gpu_models", "clouds"] if getattr(job, "sky", False)
                                 else ["instance_types"]))  # (a task's come of those)


def _unknown_value(job: Workload, market: pd.DataFrame, when: str,
                   recent: bool = False) -> Missing | None:
    """A filter none of whose values any priced offering has, with those that exist (for
    a GPU count, those of the GPUs the job allows) and the filter's key; markets in the
    users' words, and for booked ones, of a plan of now (`recent`), how to get them."""
    c, cpu = job.job.constraints, isinstance(job.table, CpuWork)
    checks: Sequence[tuple[str, str, Sequence]] = (
        ("cloud", "cloud", c.clouds), ("region", "region", c.regions),
        ("market", "market", c.markets), ("gpu_model", "GPU model", c.gpu_models),
        ("gpu_count", "GPU count", c.gpu_counts),
        ("instance_type", "instance type", c.instance_types), ("zone", "zone", c.zones))
    for column, what, accepted in checks:
        if not accepted:
            continue
        hit = (zone_allowed(market, accepted) if column == "zone"
               else market[column].isin(list(accepted)))
        if not hit.any():
            said = word if column == "market" else str  # 'on-demand', as users write it
            wanted = ", ".join(said(v) for v in accepted)
            fix = change(job, [FIELD_OF[column]])
            if column == "region":
                return Missing(f"no offering priced as of {when} has {what} {wanted}",
                               _regions_instead(c, market),
                               place_line(c, cpu) if recent else "", change=fix)
            found = sorted({said(v) for v in market[column] if str(v)},
                           key=lambda v: (0, float(v), "") if is_number(v) else (1, 0.0, v))
            # A GPU costsched knows, unpriced here, is no typo: no look-alike is offered.
            typo = "" if column == "gpu_model" and str(accepted[0]) in GPU_SPECS else (
                did_you_mean(str(accepted[0]), found))
            # a count: those of the GPUs it allows, not every GPU's
            counts = counts_priced(c, market) if column == "gpu_count" else []
            return Missing(f"no offering priced as of {when} has {what} {wanted}",
                           counts or [f"priced: {values_listed(found)}{typo}"],
                           recent and _got_by(job, column, cpu) or "", change=fix)
    return None


def _got_by(job: Workload, column: str, cpu: bool) -> str:
    """How the prices a filter of the job (`column`) asks for, and none has, are got: of
    booked markets, their `collect --booked` (`booked_line`); of spot or on-demand, or of
    a GPU model or instance type the catalog knows, the collect of the job's place
    (`place_line`); '' for a value that is no price missing (a cloud, a count, a zone, a
    GPU or type costsched does not know)."""
    c = job.job.constraints
    if column == "market":
        return booked_line(c, key(job, "markets")) or place_line(c, cpu)
    known = (column == "gpu_model" and any(g in GPU_SPECS for g in c.gpu_models)) or (
        column == "instance_type" and any(map(catalog.lookup_any, c.instance_types)))
    return place_line(c, cpu) if known else ""


def _regions_instead(c: Constraints, market: pd.DataFrame) -> list[str]:
    """Where the job could go instead of regions no offering has, within its clouds: the
    regions its shape is priced in, in its market, cheapest first ('A10G:1 spot on aws is
    priced in us-west-2, us-east-1'), else the regions priced at all; and the closest
    spelling among those regions, unless the region is one its clouds have (ap-south-1 is
    aws's, unpriced: no typo), never a region of another cloud."""
    own = market[market["cloud"].isin(list(c.clouds))] if c.clouds else market
    on = f" on {', '.join(c.clouds)}" if c.clouds else ""
    shaped = own[in_shape(own, c) & in_market(own, c)] if (
        c.gpu_models or c.gpu_counts or c.instance_types) else own.iloc[:0]
    if not shaped.empty:
        cheapest = shaped.groupby("region", sort=False)["usd_per_hour"].min()
        found = [str(r) for r in cheapest.sort_values(kind="stable").index]
        market_words = f" {word(c.markets[0])}" if len(c.markets) == 1 else ""
        line = (f"{shape_words(c, own, False)}{market_words}{on} is priced in "
                f"{values_listed(found)}")
    else:
        found = sorted({str(v) for v in own["region"] if str(v)})
        line = f"priced{on}: {values_listed(found)}"
    known = {r for name in (c.clouds or clouds.NAMES) if name in clouds.CLOUDS
             for r in clouds.get(name).regions}
    typos = [r for r in c.regions if r not in known]
    return [line + (did_you_mean(typos[0], found) if typos else "")]


def _apart(job: Workload, market: pd.DataFrame, when: str, cpu: bool, recent: bool,
           at: datetime, stored: Mapping[str, datetime],
           limits: Mapping[str, str]) -> Missing | None:
    """Each value is priced, but not together: a task's sizes that leave out its GPUs
    where they are priced (`sized_out`), the shape, then the place and the market
    (`unmatched_prices`); each with the keys of the filters that keep the job from what is
    priced."""
    c = job.job.constraints
    shape = market[in_shape(market, c, cpu)]
    asked = shape_words(c, market, cpu)
    gpus = replace(c, instance_types=())  # (a task's sizes narrow them: weighed first)
    sized = None if cpu else sized_out(
        job, market[in_shape(market, gpus) & in_place(market, c) & in_market(market, c)],
        " ".join([*(word(m) for m in c.markets), shape_words(gpus, market, cpu)]), c.clouds)
    if sized is not None:
        other = shape[in_place(shape, c) & ~in_market(shape, c)]
        return Missing(sized[0], by_market(other, c), change=change(
            job, [*sized[1], *(["markets"] if not other.empty else [])]))
    if shape.empty:
        counts = counts_priced(c, market)
        fields = ["gpu_counts"] if counts and c.gpu_counts else [
            f for f in ("gpu_models", "gpu_counts", "instance_types") if getattr(c, f)]
        return Missing(f"no instance type priced as of {when} is {asked}", counts,
                       change=change(job, fields))
    return no_price(job, market, shape, when, cpu, recent, at, stored, limits)

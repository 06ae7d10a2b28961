"""Why no priced offering fits a job, what exists instead, and how to get what is missing.

One explanation for every caller (`plan`, `launch`, a recovery, the deadline policy), from
the prices as of the time asked (`prices_at`'s frame, every offering), the first class that
holds:

1. no price at all as of that time;
2. a value of a filter that no priced offering has (a region, a GPU model, an instance
   type, ...): named, with the values that exist and the closest spelling;
3. every value exists, but not together. A SkyPilot task's cpus / memory that leave out
   every instance type its GPUs are priced on at its place and market are said first
   (`unmatched_sizes`), then the shape (GPU model and count, the instance
   types; CPU instance types for CPU work) is looked for, then the place (clouds,
   regions, zones), then the market: "no spot price known for A100:1", with what exists
   instead (the shape in the other market, the same GPUs at other counts in the market
   asked, the shape in the market asked elsewhere) and the `costsched collect` line that
   fetches today's prices of the shape (`unmatched_collect`);
4. every offering that fits is over the job's price cap.

Each ends with the key of the job's file that gets it a plan (`no_plan_keys`): the filter
that matched nothing, or that keeps out where its shape is priced.

Pure: frames in, words out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta, timezone

from costsched import catalog, clouds
from costsched.amounts import per_hour
from costsched.cpu_work import CpuWork
from costsched.lazy import pandas as pd
from costsched.model import Constraints
from costsched.optimize.job import Workload
from costsched.optimize.no_plan_keys import FIELD_OF, change
from costsched.optimize.rank import zone_allowed
from costsched.optimize.unmatched_collect import collect_line, there_line
from costsched.optimize.unmatched_deadline import deadline_missed as deadline_missed
from costsched.optimize.unmatched_deadline import faster_left_out as faster_left_out
from costsched.optimize.unmatched_sizes import sized_out
from costsched.throughput import GPU_SPECS
from costsched.vocabulary import ALTERNATIVE_DROPPED, did_you_mean, word

SHOWN = 3  # offerings named as what exists instead
VALUES_SHOWN = 12  # values named as those priced
# A plan of a time older than this is of the past: today's prices would not fill it.
RECENT = timedelta(days=2)


@dataclass(frozen=True)
class Missing:
    """What no priced offering has (`what`), what exists instead, and how to get it."""

    what: str
    instead: list[str] = field(default_factory=list)
    fix: str = ""
    dropped: list[str] = field(default_factory=list)  # a task's alternatives left out
    # The key of the job's file that gets it a plan ('change constraints.regions in
    # job.yaml', `no_plan_keys.change`): said of the job, not of a shape of its set.
    change: str = ""

    def line(self, job: str) -> str:
        """The one line `plan` and `launch` print: 'job NAME: what; instead; fix; change',
        then the task's alternatives dropped as it was read ('note: ...')."""
        return "; ".join([f"job {job}: {self.what}", *self.instead,
                          *filter(None, [self.fix, self.change]),
                          *(f"note: {d}" for d in self.dropped)])

    def note(self, shape: str) -> str:
        """A shape of a job's set left out: 'A100:1 left out: what; instead; fix'."""
        return "; ".join([f"{shape} left out: {self.what}", *self.instead,
                          *filter(None, [self.fix])])


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
    missing = _retired(job, market, at, when) or _unknown_value(job, market, when)
    if missing is not None:
        return missing
    recent = pd.Timestamp(at) >= pd.Timestamp(now or datetime.now(timezone.utc)) - RECENT
    missing = _apart(job, market, when, cpu, recent, at, spot_markets or {}, limits or {})
    if missing is not None:
        return missing
    left = market[_shape(market, c, cpu) & _place(market, c) & _market(market, c)]
    limit = c.max_price_per_hour
    if limit is not None and (left["usd_per_hour"] > limit).all():
        cheapest = left.loc[left["usd_per_hour"].idxmin()]
        return Missing(f"no offering that its filters allow costs at most {per_hour(limit)}/h as "
                       f"of {when}; the cheapest, {_label(cheapest)}, costs "
                       f"{per_hour(cheapest['usd_per_hour'])}/h",
                       fix=_raise(job, "constraints.max_price"))
    return None


def _label(row: pd.Series) -> str:
    """An offering as the plan's tables name it ('gcp us-east5-a g2-standard-4 spot')."""
    if isinstance(row.get("offering"), str):
        return row["offering"]
    zone = row.get("zone")
    where = zone if isinstance(zone, str) and zone else row["region"]
    return f"{row['cloud']} {where} {row['instance_type']} {str(row['market']).replace('_', '-')}"


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
    kept = [(i, own) for i, alt in enumerate(c.alternatives, 1)
            if (own := within(c, alt)) is not None]
    for i, own in kept or [(0, replace(c, alternatives=()))]:
        missing = unmatched(replace(job, job=replace(job.job, constraints=own)), market, at,
                            now, spot_markets, limits)
        if not kept:  # none is within the job's filters (a shape of its set): those say it
            return missing
        if missing is None:
            return None
        said.append(alternative_said(i, own, missing, market, cpu))
    return Missing(said[0] if len(said) == 1 else
                   "none of its alternatives has an offering: " + "; ".join(said))


def alternative_said(i: int, own: Constraints, missing: Missing, market: pd.DataFrame,
                     cpu: bool) -> str:
    """'alternative 2 (L4:1 spot in gcp): WHY; FIX': alternative `i` (`own`) and `missing`."""
    asked = " ".join(filter(None, [_shape_words(own, market, cpu), " or ".join(
        word(m) for m in own.markets), _where_words(own)]))
    return f"alternative {i} ({asked}): " + "; ".join(
        [missing.what, *missing.instead, *filter(None, [missing.fix, missing.change])])


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
    shape = market[_shape(market, alive) & _market(market, alive)] if c.gpu_models \
        else market.iloc[:0]
    markets = " or ".join(word(m) for m in c.markets)
    instead = [f"{markets} {_shape_words(alive, market, False)} on other types: "
               f"{_offerings(shape.sort_values('usd_per_hour', kind='stable'))}"] \
        if not shape.empty else []
    return Missing(f"{_types(c.instance_types)} retired by {clouds} "
                   f"{'on' if len(days) == 1 else 'by'} {day:%Y-%m-%d}: not rented as of "
                   f"{when}", instead,
                   change=change(job, ["gpu_models", "clouds"] if getattr(job, "sky", False)
                                 else ["instance_types"]))  # (a task's come of those)


def _unknown_value(job: Workload, market: pd.DataFrame, when: str) -> Missing | None:
    """A filter none of whose values any priced offering has, with those that exist (for
    a GPU count, those of the GPUs the job allows) and the filter's key."""
    c = job.job.constraints
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
            wanted = ", ".join(str(v) for v in accepted)
            fix = change(job, [FIELD_OF[column]])
            if column == "region":
                return Missing(f"no offering priced as of {when} has {what} {wanted}",
                               _regions_instead(c, market), change=fix)
            found = sorted({str(v) for v in market[column] if str(v)},
                           key=lambda v: (0, float(v), "") if _is_number(v) else (1, 0.0, v))
            # A GPU costsched knows, unpriced here, is no typo: no look-alike is offered.
            typo = "" if column == "gpu_model" and str(accepted[0]) in GPU_SPECS else (
                did_you_mean(str(accepted[0]), found))
            # a count: those of the GPUs it allows, not every GPU's
            counts = _counts_priced(c, market) if column == "gpu_count" else []
            return Missing(f"no offering priced as of {when} has {what} {wanted}",
                           counts or [f"priced: {_listed(found)}{typo}"], change=fix)
    return None


def _regions_instead(c: Constraints, market: pd.DataFrame) -> list[str]:
    """Where the job could go instead of regions no offering has, within its clouds: the
    regions its shape is priced in, in its market, cheapest first ('A10G:1 spot on aws is
    priced in us-west-2, us-east-1'), else the regions priced at all; and the closest
    spelling among those regions, unless the region is one its clouds have (ap-south-1 is
    aws's, unpriced: no typo), never a region of another cloud."""
    own = market[market["cloud"].isin(list(c.clouds))] if c.clouds else market
    on = f" on {', '.join(c.clouds)}" if c.clouds else ""
    shaped = own[_shape(own, c) & _market(own, c)] if (
        c.gpu_models or c.gpu_counts or c.instance_types) else own.iloc[:0]
    if not shaped.empty:
        cheapest = shaped.groupby("region", sort=False)["usd_per_hour"].min()
        found = [str(r) for r in cheapest.sort_values(kind="stable").index]
        market_words = f" {word(c.markets[0])}" if len(c.markets) == 1 else ""
        line = (f"{_shape_words(c, own, False)}{market_words}{on} is priced in "
                f"{_listed(found)}")
    else:
        found = sorted({str(v) for v in own["region"] if str(v)})
        line = f"priced{on}: {_listed(found)}"
    known = {r for name in (c.clouds or clouds.NAMES) if name in clouds.CLOUDS
             for r in clouds.get(name).regions}
    typos = [r for r in c.regions if r not in known]
    return [line + (did_you_mean(typos[0], found) if typos else "")]


def _apart(job: Workload, market: pd.DataFrame, when: str, cpu: bool, recent: bool,
           at: datetime, stored: Mapping[str, datetime],
           limits: Mapping[str, str]) -> Missing | None:
    """Each value is priced, but not together: a task's sizes that leave out its GPUs
    where they are priced (`sized_out`), the shape, then the place, then the market; each
    with the keys of the filters that keep the job from what is priced."""
    c = job.job.constraints
    shape = market[_shape(market, c, cpu)]
    asked = _shape_words(c, market, cpu)
    gpus = replace(c, instance_types=())  # (a task's sizes narrow them: weighed first)
    sized = None if cpu else sized_out(job, market[_shape(market, gpus) & _place(market, c)
                                                   & _market(market, c)], " ".join(
        [*(word(m) for m in c.markets), _shape_words(gpus, market, cpu)]), c.clouds)
    if sized is not None:
        other = shape[_place(shape, c) & ~_market(shape, c)]
        return Missing(sized[0], _by_market(other, c), change=change(
            job, [*sized[1], *(["markets"] if not other.empty else [])]))
    if shape.empty:
        counts = _counts_priced(c, market)
        fields = ["gpu_counts"] if counts and c.gpu_counts else [
            f for f in ("gpu_models", "gpu_counts", "instance_types") if getattr(c, f)]
        return Missing(f"no instance type priced as of {when} is {asked}", counts,
                       change=change(job, fields))
    placed = shape[_place(shape, c)]
    where = _where_words(c)
    if placed.empty and _market(shape, c).any():  # priced in its market, elsewhere only
        elsewhere = shape[_market(shape, c)]
        types = catalog.instance_types()
        return Missing(f"no price known as of {when} for {asked} {where}",
                       [*_by_market(elsewhere, c, " elsewhere"),
                        *_kept_out(c, elsewhere, limits)],
                       there_line(types, _shape(types, c), c, cpu) if recent else "",
                       change=change(job, _keeping_out(c, elsewhere, limits)))
    if not _market(placed, c).any():  # (nor elsewhere, where nothing is priced here)
        markets = " or ".join(word(m) for m in c.markets)
        found = placed if not placed.empty else shape
        instead = _by_market(found, c, "" if not placed.empty else " elsewhere")
        if placed.empty:
            instead += _kept_out(c, found, limits)
        instead += _other_counts(c, market, cpu)
        far = shape[_market(shape, c) & ~_place(shape, c)]
        fields = ["markets", *_keeping_out(c, found, limits)] if placed.empty else ["markets"]
        if not far.empty:
            instead.append(f"{markets} {asked} elsewhere: "
                           f"{_offerings(far.sort_values('usd_per_hour', kind='stable'))}")
            instead += _kept_out(c, far, limits)
            fields += _keeping_out(c, far, limits)
        return Missing(f"no {markets} price known as of {when} for {asked}"
                       + (f" {where}" if where else ""),
                       instead + _untyped(c, market, when) + _stored_market(c, at, stored),
                       collect_line(found, c, cpu, placed.empty) if recent else "",
                       change=change(job, fields))
    return None


def _by_market(rows: pd.DataFrame, c: Constraints, where: str = "") -> list[str]:
    """The offerings of `rows`, cheapest first, one line per market, the job's markets
    first, then the cheapest: 'spot elsewhere: aws us-west-2 g5.xlarge $0.3600/h, ...'."""
    groups = rows.sort_values("usd_per_hour", kind="stable").groupby("market", sort=True)
    ordered = sorted(groups, key=lambda g: (g[0] not in c.markets,
                                            float(g[1]["usd_per_hour"].iloc[0])))
    return [f"{word(m)}{where}: {_offerings(group)}" for m, group in ordered]


def _kept_out(c: Constraints, elsewhere: pd.DataFrame, limits: Mapping[str, str]) -> list[str]:
    """Each place filter of the job that leaves out offerings of `elsewhere` (its shape
    priced outside its place), with why the job has it: `limits`' words for one costsched
    derived (a data bucket's cloud), else the filter as the job's file gives it."""
    out = [limits.get(f"{column}s") or f"its file keeps it in {column}"
           f"{'s' * (len(accepted) > 1)} {', '.join(accepted)}"
           for column, accepted in _leaving_out(c, elsewhere)]
    return [f"not there because {'; and '.join(out)}"] if out else []


def _keeping_out(c: Constraints, elsewhere: pd.DataFrame,
                 limits: Mapping[str, str]) -> list[str]:
    """The fields of `_kept_out`'s filters the job's file writes (not those in `limits`)."""
    return [FIELD_OF[column] for column, _ in _leaving_out(c, elsewhere)
            if f"{column}s" not in limits]


def _leaving_out(c: Constraints, elsewhere: pd.DataFrame) -> list[tuple[str, Sequence[str]]]:
    """The place filters (column, values) of the job that leave out some of `elsewhere`."""
    out = []
    for column, accepted in (("cloud", c.clouds), ("region", c.regions), ("zone", c.zones)):
        if not accepted:
            continue
        hit = (zone_allowed(elsewhere, accepted) if column == "zone"
               else elsewhere[column].isin(list(accepted)))
        if not hit.all():
            out.append((column, accepted))
    return out


def _stored_market(c: Constraints, at: datetime, stored: Mapping[str, datetime]) -> list[str]:
    """For each cloud whose spot market the store holds (`stored`) and whose bundled spot
    prices have the shape at the place asked: that the store's prices leave those out
    (`costsched.spot_market`), and how quotes are imported without that."""
    if "spot" not in (c.markets or ("spot",)) or not stored:
        return []
    bundled = catalog.spot_observations(include_cpu=True)
    bundled = bundled[(bundled["effective_at"] <= pd.Timestamp(at))
                      & bundled["cloud"].isin(list(stored))]
    hidden = bundled[_shape(bundled, c) & _place(bundled, c)]
    return [f"{cloud}'s spot prices are the store's (collected or imported, newest "
            f"{stored[cloud]:%Y-%m-%d}), which leave out its bundled spot prices; "
            "`costsched prices import --partial FILE` imports quotes without that (a file "
            "imported before, imported again with it, stops standing for the whole market)"
            for cloud in sorted(set(hidden["cloud"].astype(str)))]


def _untyped(c: Constraints, market: pd.DataFrame, when: str) -> list[str]:
    """The GPU models of a set (a task's [H100:1, A100:1] on aws) that none of the job's
    instance types has, which the shape's words leave out, each with why: no type of its
    place has it (and the counts the place prices it at), or its types have no price."""
    if not c.instance_types or not c.gpu_models:
        return []
    priced = set(market.loc[market["instance_type"].isin(list(c.instance_types)), "gpu_model"])
    listed = {r["gpu_model"] for r in map(catalog.lookup_any, c.instance_types) if r}
    where = f" on {', '.join(c.clouds)}" if c.clouds else ""
    out = []
    for g in (g for g in c.gpu_models if priced and g not in priced):
        asked = " or ".join(f"{g}:{n}" for n in c.gpu_counts) if c.gpu_counts else g
        if g in listed:
            out.append(f"{asked}: its instance types have no price as of {when}")
            continue
        there = market[(market["gpu_model"] == g) & _place(market, c)]
        counts = sorted({int(n) for n in there["gpu_count"]})
        # (in the market asked, `_other_counts` has named them with their prices already)
        sold = (f" ({g} is priced there at {', '.join(map(str, counts))} GPUs)"
                if counts and not _market(there, c).any() else "")
        out.append(f"{asked}: no instance type{where} has it{sold}")
    return out


# --- filters -------------------------------------------------------------------------------


def _shape(frame: pd.DataFrame, c: Constraints, cpu: bool = False) -> pd.Series:
    """The offerings of the shape asked: CPU instance types (no GPU) for CPU work."""
    ok = (frame["gpu_count"].fillna(0) == 0) if cpu else pd.Series(True, index=frame.index)
    for column, accepted in (("gpu_model", c.gpu_models), ("gpu_count", c.gpu_counts),
                             ("instance_type", c.instance_types)):
        if accepted:
            ok &= frame[column].isin(list(accepted))
    return ok


def _place(frame: pd.DataFrame, c: Constraints) -> pd.Series:
    ok = pd.Series(True, index=frame.index)
    for column, accepted in (("cloud", c.clouds), ("region", c.regions)):
        if accepted:
            ok &= frame[column].isin(list(accepted))
    if c.zones:
        ok &= zone_allowed(frame, c.zones)
    return ok


def _market(frame: pd.DataFrame, c: Constraints) -> pd.Series:
    return (frame["market"].isin(list(c.markets)) if c.markets
            else pd.Series(True, index=frame.index))


# --- words ---------------------------------------------------------------------------------


def _shape_words(c: Constraints, market: pd.DataFrame, cpu: bool) -> str:
    """'A100:1', 'A100:1 or V100:1', 'p3.2xlarge', 'a CPU instance type'."""
    if cpu:
        return "CPU instance types" + (f" {_types(c.instance_types)}"
                                       if c.instance_types else "")
    if c.gpu_models:
        counts = c.gpu_counts
        if c.instance_types:  # the pairs the instance types have, as the catalog says
            typed = market[market["instance_type"].isin(list(c.instance_types))]
            pairs = sorted({f"{g}:{int(n)}" for g, n in zip(typed["gpu_model"],
                                                              typed["gpu_count"], strict=True)
                            if g in c.gpu_models and (not counts or int(n) in counts)})
            if pairs:
                return " or ".join(pairs)
        if counts:
            return " or ".join(f"{g}:{n}" for g in c.gpu_models for n in counts)
        return " or ".join(c.gpu_models)
    if c.instance_types:
        return _types(c.instance_types)
    if c.gpu_counts:
        return " or ".join(f"{n} GPUs" for n in c.gpu_counts)
    return "a GPU instance type"


def _types(types: Sequence[str]) -> str:
    """'p3.2xlarge or g4dn.xlarge', 'c6i.2xlarge, c6i.4xlarge, ... (15 in all)'."""
    types = sorted(types)
    if len(types) <= 3:
        return " or ".join(types)
    return ", ".join(types[:3]) + f", ... ({len(types)} in all)"


def _where_words(c: Constraints) -> str:
    parts = [*c.clouds, *c.regions, *c.zones]
    return "in " + ", ".join(parts) if parts else ""


def _is_number(text: str) -> bool:
    """Whether `text` is a number (GPU counts list in numeric order: 2 before 16)."""
    try:
        float(text)
    except ValueError:
        return False
    return True


def _listed(values: Sequence[str]) -> str:
    return ", ".join(values[:VALUES_SHOWN]) + (f", ... ({len(values)} in all)"
                                               if len(values) > VALUES_SHOWN else "")


def _offerings(rows: pd.DataFrame) -> str:
    """The first few offerings of `rows` priced: 'gcp us-central1 a2-highgpu-1g $3.67/h, ...'."""
    shown = [f"{r.cloud} {r.zone or r.region} {r.instance_type} {per_hour(r.usd_per_hour)}/h"
             for r in rows.head(SHOWN).itertuples()]
    return ", ".join(shown) + (f" ({len(rows)} in all)" if len(rows) > SHOWN else "")


def _counts_priced(c: Constraints, market: pd.DataFrame) -> list[str]:
    """Each GPU model asked at the counts priced on the job's clouds (else any that do)."""
    out = []
    for g in c.gpu_models:
        rows = market[market["gpu_model"] == g]
        own = rows[rows["cloud"].isin(list(c.clouds))] if c.clouds else rows
        rows = own if not own.empty else rows
        counts = sorted({int(n) for n in rows["gpu_count"]})
        if counts:
            on = f" on {', '.join(sorted(set(rows['cloud'].astype(str))))}" if c.clouds else ""
            out.append(f"{g} is priced at {', '.join(map(str, counts))} "
                       f"{'GPU' if counts == [1] else 'GPUs'}{on}")
    return out


def _other_counts(c: Constraints, market: pd.DataFrame, cpu: bool) -> list[str]:
    """The GPU models asked, in the market and place asked, at the counts not asked."""
    if cpu or not c.gpu_models or not c.gpu_counts:
        return []
    rows = market[market["gpu_model"].isin(list(c.gpu_models))
                  & ~market["gpu_count"].isin(list(c.gpu_counts))
                  & _place(market, c) & _market(market, c)]
    if rows.empty:
        return []
    markets = " or ".join(word(m) for m in c.markets)
    out = [f"{g}:{int(n)} from {per_hour(group['usd_per_hour'].min())}/h "
           f"({group['cloud'].iloc[0]} {group['zone'].iloc[0] or group['region'].iloc[0]}"
           f" {group['instance_type'].iloc[0]})"
           for (g, n), group in rows.sort_values("usd_per_hour", kind="stable").groupby(
               ["gpu_model", "gpu_count"], sort=True)]
    return [f"{markets} at other counts: " + ", ".join(out)]

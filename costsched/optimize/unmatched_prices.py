"""The words of a "no plan" whose cause is a missing price (`unmatched`): the job's shape is
priced, but not at its place, or not in its market there; what is priced instead, the
filters of the job that keep it from there, and the line that gets the missing price
(`place_line`: the collect of the place's cloud and region, one line for every market and
for a region no price is known in at all), or that the GPU is not offered there.

Pure: frames in, words out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import datetime

from costsched import catalog
from costsched import clouds as known_clouds
from costsched.amounts import stored_price
from costsched.lazy import pandas as pd
from costsched.model import Constraints
from costsched.optimize.job import Workload
from costsched.optimize.no_plan_keys import FIELD_OF, change
from costsched.optimize.rank import zone_allowed
from costsched.optimize.unmatched_booked import fetch_line, only_booked
from costsched.optimize.unmatched_collect import there_line
from costsched.optimize.unmatched_words import (
    Missing,
    in_market,
    in_place,
    in_shape,
    offerings_said,
    shape_words,
    values_listed,
    where_words,
)
from costsched.vocabulary import word


def no_price(job: Workload, market: pd.DataFrame, shape: pd.DataFrame, when: str, cpu: bool,
             recent: bool, at: datetime, stored: Mapping[str, datetime],
             limits: Mapping[str, str]) -> Missing | None:
    """The job's shape (`shape`: its offerings in `market`, every price as of `at`) is
    priced, but not at its place, or not in its market there: what is priced instead, the
    filters that keep the job from it, and, for a plan of now (`recent`), how to get the
    missing price. None when the shape is priced at its place in its market."""
    c = job.job.constraints
    asked = shape_words(c, market, cpu)
    placed = shape[in_place(shape, c)]
    where = where_words(c)
    close = close_models(c, market, cpu)  # (the GPU models asked change to get them)
    models = ["gpu_models"] if close else []
    if placed.empty and in_market(shape, c).any():  # priced in its market, elsewhere only
        elsewhere = shape[in_market(shape, c)]
        return Missing(f"no price known as of {when} for {asked} {where}",
                       [*by_market(elsewhere, c, " elsewhere"),
                        *kept_out(c, elsewhere, limits), *close],
                       place_line(c, cpu) if recent else "",
                       change=change(job, [*keeping_out(c, elsewhere, limits), *models]))
    if not in_market(placed, c).any():  # (nor elsewhere, where nothing is priced here)
        markets = " or ".join(word(m) for m in c.markets)
        found = placed if not placed.empty else shape
        instead = by_market(found, c, "" if not placed.empty else " elsewhere")
        if placed.empty:
            instead += kept_out(c, found, limits)
        instead += other_counts(c, market, cpu) + close
        far = shape[in_market(shape, c) & ~in_place(shape, c)]
        fields = ["markets", *keeping_out(c, found, limits)] if placed.empty else ["markets"]
        if not far.empty:
            instead.append(f"{markets} {asked} elsewhere: "
                           f"{offerings_said(far.sort_values('usd_per_hour', kind='stable'))}")
            instead += kept_out(c, far, limits)
            fields += keeping_out(c, far, limits)
        return Missing(f"no {markets} price known as of {when} for {asked}"
                       + (f" {where}" if where else ""),
                       instead + untyped(c, market, when) + stored_market(c, at, stored),
                       recent and (place_line(c, cpu) if placed.empty and not only_booked(c)
                                  else fetch_line(found, job, cpu, placed.empty)) or "",
                       change=change(job, [*fields, *models]))
    return None


def by_market(rows: pd.DataFrame, c: Constraints, where: str = "") -> list[str]:
    """The offerings of `rows`, cheapest first, one line per market, the job's markets
    first, then the cheapest: 'spot elsewhere: aws us-west-2 g5.xlarge $0.3600/h, ...'."""
    groups = rows.sort_values("usd_per_hour", kind="stable").groupby("market", sort=True)
    ordered = sorted(groups, key=lambda g: (g[0] not in c.markets,
                                            float(g[1]["usd_per_hour"].iloc[0])))
    return [f"{word(m)}{where}: {offerings_said(group)}" for m, group in ordered]


def kept_out(c: Constraints, elsewhere: pd.DataFrame, limits: Mapping[str, str]) -> list[str]:
    """Each place filter of the job that leaves out offerings of `elsewhere` (its shape
    priced outside its place), with why the job has it: `limits`' words for one costsched
    derived (a data bucket's cloud), else the filter as the job's file gives it."""
    out = [limits.get(f"{column}s") or f"its file keeps it in {column}"
           f"{'s' * (len(accepted) > 1)} {', '.join(accepted)}"
           for column, accepted in _leaving_out(c, elsewhere)]
    return [f"not there because {'; and '.join(out)}"] if out else []


def keeping_out(c: Constraints, elsewhere: pd.DataFrame,
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


def stored_market(c: Constraints, at: datetime, stored: Mapping[str, datetime]) -> list[str]:
    """For each cloud whose spot market the store holds (`stored`) and whose bundled spot
    prices have the shape at the place asked: that the store's prices leave those out
    (`costsched.spot_market`), and how quotes are imported without that."""
    if "spot" not in (c.markets or ("spot",)) or not stored:
        return []
    bundled = catalog.spot_observations(include_cpu=True)
    bundled = bundled[(bundled["effective_at"] <= pd.Timestamp(at))
                      & bundled["cloud"].isin(list(stored))]
    hidden = bundled[in_shape(bundled, c) & in_place(bundled, c)]
    return [f"{cloud}'s spot prices are the store's (collected or imported, newest "
            f"{stored[cloud]:%Y-%m-%d}), which leave out its bundled spot prices; "
            "`costsched prices import --partial FILE` imports quotes without that (a file "
            "imported before, imported again with it, stops standing for the whole market)"
            for cloud in sorted(set(hidden["cloud"].astype(str)))]


def untyped(c: Constraints, market: pd.DataFrame, when: str) -> list[str]:
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
        there = market[(market["gpu_model"] == g) & in_place(market, c)]
        counts = sorted({int(n) for n in there["gpu_count"]})
        # (in the market asked, `_other_counts` has named them with their prices already)
        sold = (f" ({g} is priced there at {', '.join(map(str, counts))} GPUs)"
                if counts and not in_market(there, c).any() else "")
        out.append(f"{asked}: no instance type{where} has it{sold}")
    return out


def other_counts(c: Constraints, market: pd.DataFrame, cpu: bool) -> list[str]:
    """The GPU models asked, in the market and place asked, at the counts not asked."""
    if cpu or not c.gpu_models or not c.gpu_counts:
        return []
    rows = market[market["gpu_model"].isin(list(c.gpu_models))
                  & ~market["gpu_count"].isin(list(c.gpu_counts))
                  & in_place(market, c) & in_market(market, c)]
    if rows.empty:
        return []
    markets = " or ".join(word(m) for m in c.markets)
    return [f"{markets} at other counts: " + ", ".join(_cheapest_each(rows, by_name=True))]


def _cheapest_each(rows: pd.DataFrame, by_name: bool) -> list[str]:
    """Each GPU model and count of `rows` at its cheapest offering: 'A100-80GB:1 from
    $0.7681/h (gcp us-south1 a2-ultragpu-1g)'; by model and count (`by_name`), else
    cheapest first."""
    return [f"{g}:{int(n)} from {stored_price(group['usd_per_hour'].iloc[0])}/h "
            f"({group['cloud'].iloc[0]} {group['zone'].iloc[0] or group['region'].iloc[0]}"
            f" {group['instance_type'].iloc[0]})"
            for (g, n), group in rows.sort_values("usd_per_hour", kind="stable").groupby(
                ["gpu_model", "gpu_count"], sort=by_name)]


def close_models(c: Constraints, market: pd.DataFrame, cpu: bool) -> list[str]:
    """The other models of the families of the GPU models asked (A100-80GB for A100, A100
    for A100-80GB), at the counts asked, in the market and place asked, cheapest first:
    'spot of a close model: A100-80GB:1 from $0.7681/h (gcp us-south1 a2-ultragpu-1g)'.
    (A task's instance types are of the models it asks: a close model's are others.)"""
    if cpu or not c.gpu_models:
        return []
    families = {catalog.gpu_family(g) for g in c.gpu_models}
    models = market["gpu_model"].astype(str)
    close = models.map(catalog.gpu_family).isin(families) & ~models.isin(list(c.gpu_models))
    if c.gpu_counts:
        close &= market["gpu_count"].isin(list(c.gpu_counts))
    rows = market[close & in_place(market, c) & in_market(market, c)]
    if rows.empty:
        return []
    markets = " or ".join(word(m) for m in c.markets)
    return [f"{markets} of a close model: " + ", ".join(_cheapest_each(rows, by_name=False))]


def place_line(c: Constraints, cpu: bool) -> str:
    """How to get a price of the job's shape at its place, where none is known: for each of
    its regions whose cloud's catalog lists prices there but none of the GPU models asked,
    that they are not offered there and the regions that do list them (a collect would
    fetch nothing there); for the rest, the collect line of their clouds (`there_line`:
    the catalog refresh first where a cloud's catalog has no type of the GPUs). '' for CPU
    work, and where no region asked is one of the job's clouds'."""
    if cpu:
        return ""
    types = catalog.instance_types()
    if not c.regions:
        return there_line(types, in_shape(types, c), c, cpu)
    listed = catalog.on_demand_observations(include_cpu=True)
    gpus = list(c.gpu_models)
    absent: dict[str, list[str]] = {}
    fetched: list[tuple[str, str]] = []
    for region in dict.fromkeys(c.regions):
        for cloud in known_clouds.owners_of_region(region):
            if (c.clouds and cloud not in c.clouds) or cloud not in known_clouds.CLOUDS \
                    or region not in known_clouds.get(cloud).regions:
                continue
            there = listed[(listed["cloud"] == cloud) & (listed["region"] == region)]
            sold = listed[(listed["cloud"] == cloud) & listed["gpu_model"].isin(gpus)]
            if gpus and not there.empty and not sold.empty \
                    and not there["gpu_model"].isin(gpus).any():
                absent.setdefault(cloud, []).append(region)
            else:
                fetched.append((cloud, region))
    said = [_not_offered(gpus, cloud, regions, listed) for cloud, regions in absent.items()]
    if fetched:
        own = replace(c, clouds=tuple(dict.fromkeys(x for x, _ in fetched)),
                      regions=tuple(dict.fromkeys(r for _, r in fetched)))
        said.append(there_line(types, in_shape(types, own), own, cpu))
    return "; ".join(filter(None, said))


def _not_offered(gpus: Sequence[str], cloud: str, regions: Sequence[str],
                 listed: pd.DataFrame) -> str:
    """'A10G is not offered in aws us-west-1: costsched's catalog lists it on aws in
    us-east-1, ...' ('none of A100, V100 is offered in ...'): the regions of `cloud` whose
    list prices have the GPUs, cheapest first."""
    rows = listed[(listed["cloud"] == cloud) & listed["gpu_model"].isin(list(gpus))]
    cheapest = rows.groupby("region", sort=True)["usd_per_hour"].min()
    found = [str(r) for r in cheapest.sort_values(kind="stable").index]
    one = len(gpus) == 1
    return (f"{gpus[0] if one else 'none of ' + ', '.join(gpus)} is "
            f"{'not ' if one else ''}offered in {cloud} {', '.join(regions)}: costsched's "
            f"catalog lists {'it' if one else 'them'} on {cloud} in {values_listed(found)}")

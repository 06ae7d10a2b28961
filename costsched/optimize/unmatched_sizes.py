"""Why a SkyPilot task's GPUs have no offering it allows where they are priced in its place
and market: its `cpus` / `memory` leave out every instance type they come on there. Said
before the place and the market (`unmatched`), with the sizes those offerings come with:
"spot T4:1 comes with 4 vCPUs and 16 GB (aws g4dn.xlarge); resources.cpus 8+ and
resources.memory 32+ leave it out"; and the types that would fit them but have no price
there, with the `costsched collect` that fetches today's.

Pure: frames in, words out.
"""

from __future__ import annotations

from collections.abc import Sequence

from costsched import catalog
from costsched.instance_sizes import SIZES, sized
from costsched.lazy import pandas as pd
from costsched.optimize.job import Workload
from costsched.optimize.no_plan_keys import sizes
from costsched.vocabulary import word

SHOWN = 3  # sizes named, cheapest first


def sized_out(job: Workload, rows: pd.DataFrame, asked: str,
              clouds: Sequence[str]) -> tuple[str, list[str]] | None:
    """(the words, the columns of the sizes to change) where the task's sizes leave out
    every one of `rows` (its GPUs' offerings in its place and market, `asked`: 'spot T4:1'),
    the catalog's types of its GPUs on `clouds` (none: any) weighed as its reading weighed
    them; None where it writes no size, names its instance type, or its sizes allow one of
    them (something else leaves it out)."""
    written = sizes(job)
    if not written or rows.empty or "instance_types" in getattr(job, "filter_keys", {}):
        return None
    types = catalog.instance_types()
    if clouds:
        types = types[types["cloud"].isin(list(clouds))]
    pairs = set(zip(rows["gpu_model"], rows["gpu_count"], strict=True))
    types = types[[p in pairs for p in zip(types["gpu_model"], types["gpu_count"],
                                           strict=True)]]
    offered = rows.drop(columns=[c for c in SIZES if c in rows]).merge(  # (the catalog's)
        types[["cloud", "instance_type", *SIZES]], on=["cloud", "instance_type"])
    if offered.empty:
        return None
    key = offered["cloud"] + "/" + offered["instance_type"]
    leaving, kept_by_all = [], pd.Series(True, index=offered.index)
    for column, (_, size, how) in written.items():
        kept, _ = sized(types, column, size, how)
        hit = key.isin(kept["cloud"] + "/" + kept["instance_type"])
        kept_by_all &= hit
        if not hit.all():
            leaving.append(column)
    if not leaving or kept_by_all.any():  # (one it allows: something else leaves it out)
        return None
    first = offered.sort_values("usd_per_hour", kind="stable").drop_duplicates(
        ["vcpus", "memory_gb"]).head(SHOWN)
    comes = ", ".join(f"{r.vcpus:g} {SIZES['vcpus'][1]} and {r.memory_gb:g} GB "
                      f"({r.cloud} {r.instance_type})" for r in first.itertuples())
    named = " and ".join(f"{written[c][0]} {written[c][1]:g}{written[c][2]}" for c in leaving)
    return (f"{asked} comes with {comes}; {named} leave{'s' * (len(leaving) == 1)} it out"
            + _unpriced_fits(job, types, written, set(key), named), leaving)


def _unpriced_fits(job: Workload, types: pd.DataFrame, written: dict, priced: set[str],
                   named: str) -> str:
    """'; aws g5.2xlarge and gcp g2-standard-8 fit resources.cpus 8, with no spot price
    known here: `costsched collect ...` fetches ...': the catalog's types of the GPUs that
    the task's sizes allow (`named`: those sizes) but that have no price in its place and
    market (`priced`: 'cloud/type' of those that have); '' where none does."""
    from costsched.optimize.unmatched_collect import collect_line

    fit = types
    for column, (_, size, how) in written.items():
        fit, _ = sized(fit, column, size, how)
    fit = fit[~(fit["cloud"] + "/" + fit["instance_type"]).isin(priced)]
    if fit.empty:
        return ""
    shown = fit.drop_duplicates(["cloud", "instance_type"])
    listed = [f"{r.cloud} {r.instance_type}" for r in shown.head(SHOWN).itertuples()]
    more = f" ({len(shown)} in all)" if len(shown) > SHOWN else ""
    market = " or ".join(word(m) for m in job.job.constraints.markets) or "a"
    line = collect_line(fit, job.job.constraints, cpu=False, elsewhere=True)
    types_said = " and ".join(filter(None, [", ".join(listed[:-1]), listed[-1]]))
    return (f"; {types_said}{more} {'fits' if len(shown) == 1 else 'fit'} {named}, with no "
            f"{market} price known here" + (f": {line}" if line else ""))

"""A task's `ordered:` alternatives passed over: each one preferred to the alternative its
plan takes first that has no offering, and why, in the words a plan with no offering at
all names it (`unmatched.alternative_said`): 'ordered: alternative 1 (H100:1 spot in aws,
us-east-1): no spot price known ...; passed over: the order holds for the rest
(alternative 2 first)'.

Pure: frames in, words out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace

from costsched.cpu_work import CpuWork
from costsched.lazy import pandas as pd
from costsched.model import Constraints
from costsched.optimize.job import Workload
from costsched.optimize.no_plan_keys import of_alternative
from costsched.optimize.rank import UNFILTERED, zone_allowed
from costsched.optimize.unmatched import Missing, alternative_said, within
from costsched.vocabulary import counted

_FIELDS = ("clouds", "regions", "zones", "markets", "instance_types")  # of an order's item


def passed_over(job: Workload, ranked: pd.DataFrame, market: pd.DataFrame,
                explain: Callable[[Workload], Missing | None]) -> list[str]:
    """A line for each of job `job`'s `ordered:` alternatives preferred to the first of its
    plan's choices (`ranked`, as `planner.in_order` ordered it) that has none, with why
    (`explain` of the job narrowed to it: `unmatched.unmatched` from every price; `market`
    names its shape); [] without an order, a choice, or such an alternative."""
    choices = ranked[ranked["excluded"] == ""] if job.order else ranked.iloc[:0]
    if choices.empty or "order_rank" not in choices:
        return []
    taken = sorted({int(r) for r in choices["order_rank"] if int(r) < len(job.order)})
    if not taken:
        return []
    c, cpu = job.job.constraints, isinstance(job.table, CpuWork)
    out = []
    for i in range(taken[0]):  # those preferred to the first taken: none has a choice
        own = _alternative(c, job.order, i)
        if own is None:
            continue
        alone = of_alternative(job, i)  # its own keys ('resources.ordered[0].use_spot')
        missing = explain(replace(alone, job=replace(job.job, constraints=own))) or \
            _left_out(ranked[in_alternative(ranked, job.order[i])])
        if missing is None:
            continue
        out.append(f"ordered: {alternative_said(i + 1, own, missing, market, cpu)}; passed "
                   f"over: the order holds for the rest (alternative {taken[0] + 1} first)")
    return out


def in_alternative(ranked: pd.DataFrame, item: Mapping[str, Sequence[str]]) -> pd.Series:
    """Which offerings of `ranked` an item of a task's order (`Workload.order`) allows: its
    clouds, regions, markets, instance types ('cloud/type') and zones."""
    match = pd.Series(True, index=ranked.index)
    for column, values in (("cloud", item.get("clouds")), ("region", item.get("regions")),
                           ("market", item.get("markets"))):
        if values:
            match &= ranked[column].isin(list(values))
    if item.get("instance_types"):
        key = ranked["cloud"].astype(str) + "/" + ranked["instance_type"].astype(str)
        match &= key.isin(list(item["instance_types"]))
    if item.get("zones"):  # (a zone's region-wide prices count, as the filter counts them)
        match &= zone_allowed(ranked, list(item["zones"]))
    return match


def _left_out(rows: pd.DataFrame) -> Missing | None:
    """An alternative whose offerings pass the job's filters yet are left out (its
    deadline, its budget, no speed): 'its 2 offerings are left out: 1 misses deadline, 1
    over budget', as the plan counts those it leaves out; None when it has none."""
    rows = rows[rows["excluded"].isin(UNFILTERED)]
    if rows.empty:
        return None
    counts = rows["excluded"].value_counts()
    return Missing(f"its {counted(len(rows), 'offering')} left out: "
                   + ", ".join(f"{int(n)} {why}" for why, n in counts.items()))


def _alternative(c: Constraints, order: Sequence[Mapping[str, Sequence[str]]],
                 i: int) -> Constraints | None:
    """The job's constraints narrowed to alternative `i` of its order: its own
    (`Constraints.alternatives`, as `unmatched` narrows them) where the job keeps one per
    item of the order, else the order's item (its place, market and instance types)."""
    if len(c.alternatives) == len(order):
        return within(c, c.alternatives[i])
    item = {f: tuple(v) for f, v in order[i].items() if f in _FIELDS and v}
    if "instance_types" in item:  # 'cloud/type' in an order, the type in a filter
        types = [t.partition("/") for t in item["instance_types"]]
        item["instance_types"] = tuple(dict.fromkeys(t for _, _, t in types))
        item.setdefault("clouds", tuple(dict.fromkeys(cloud for cloud, _, _ in types)))
    return replace(c, alternatives=(), **item)

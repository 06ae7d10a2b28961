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
from costsched.optimize.unmatched import Missing, alternative_said, within

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
        missing = None if own is None else explain(
            replace(job, job=replace(job.job, constraints=own)))
        if own is None or missing is None:
            continue
        out.append(f"ordered: {alternative_said(i + 1, own, missing, market, cpu)}; passed "
                   f"over: the order holds for the rest (alternative {taken[0] + 1} first)")
    return out


def _alternative(c: Constraints, order: Sequence[Mapping[str, Sequence[str]]],
                 i: int) -> Constraints | None:
    """The job's constraints narrowed to alternative `i` of its order: its own
    (`Constraints.alternatives`, as `unmatched` narrows them) where the job keeps one per
    item of the order, else the order's item (its place, market and instance types)."""
    if len(c.alternatives) == len(order):
        return within(c, c.alternatives[i])
    item = order[i]
    return replace(c, alternatives=(), **{f: tuple(item[f]) for f in _FIELDS if item.get(f)})

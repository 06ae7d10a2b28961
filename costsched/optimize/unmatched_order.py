"""A task's `ordered:` alternatives passed over: each one preferred to the alternative the
job goes to, named in the task's order with why it is not used, in the words a plan with
no offering at all names it (`unmatched.alternative_said`): 'ordered: alternative 1
(H100:1 spot in aws, us-east-1): no spot price known ...; passed over: the order holds
for the rest (alternative 2 first)'. The causes: dropped as the task was read (an
accelerator the catalog has no type of, a cloud costsched does not run on), no offering
priced (`unmatched`), every offering left out (deadline, budget), the account's quota
short of each, or none that the launcher starts.

Pure: frames in, words out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from costsched import catalog
from costsched.cpu_work import CpuWork
from costsched.lazy import pandas as pd
from costsched.model import Constraints
from costsched.optimize.job import Workload
from costsched.optimize.left_out_words import counted_reasons, no_speed_words
from costsched.optimize.no_plan_keys import of_alternative
from costsched.optimize.rank import UNFILTERED, zone_allowed
from costsched.optimize.unmatched import Missing, asked_words, within
from costsched.throughput import GPU_SPECS
from costsched.vocabulary import ALTERNATIVE_DROPPED, ORDER_DROPPED, counted

_FIELDS = ("clouds", "regions", "zones", "markets", "instance_types")  # of an order's item
# Why the launcher does not start an offering (a ranked row): '' when it does.
Unlaunched = Callable[[pd.Series], str]


@dataclass(frozen=True)
class Alternative:
    """An item of a task's order: what it asks ('' for one dropped as read) and why it has
    no choice in the plan ('' when it has one)."""

    asked: str
    unoffered: str = ""


@dataclass(frozen=True)
class PassedOver:
    """An `ordered:` alternative preferred to the one the job goes to (`taken`), each
    numbered in the task's order from 1, and why it is not used (`cause`)."""

    alternative: int
    asked: str
    cause: str
    taken: int

    def line(self) -> str:
        """'ordered: alternative 1 (H100:1 spot in aws): WHY; passed over: ...'."""
        asked = f" ({self.asked})" if self.asked else ""
        return (f"ordered: alternative {self.alternative}{asked}: {self.cause}; passed over: "
                f"the order holds for the rest (alternative {self.taken} first)")

    def as_dict(self) -> dict[str, Any]:
        return {"alternative": self.alternative, "asked": self.asked, "cause": self.cause,
                "taken": self.taken}


def alternatives(job: Workload, ranked: pd.DataFrame, market: pd.DataFrame,
                 explain: Callable[[Workload], Missing | None]) -> tuple[Alternative, ...]:
    """Each item of job `job`'s order (`Workload.order`) with what it asks and, where the
    plan (`ranked`, as `planner.in_order` ordered it) has no choice of it, why (`explain`
    of the job narrowed to it: `unmatched.unmatched` from every price; `market` names its
    shape); asked of those before the last one with a choice only: one after it is never
    passed over. () without an order or a choice."""
    choices = ranked[ranked["excluded"] == ""] if job.order else ranked.iloc[:0]
    if choices.empty or "order_rank" not in choices:
        return ()
    c, cpu = job.job.constraints, isinstance(job.table, CpuWork)
    last = int(choices["order_rank"].max())
    out = []
    for i, item in enumerate(job.order):
        if item.get(ORDER_DROPPED):
            out.append(Alternative("", dropped_said(item[ORDER_DROPPED])))
            continue
        own = _alternative(c, job.order, i)
        asked = "" if own is None else asked_words(own, market, cpu)
        if own is None or i > last or (choices["order_rank"] == i).any():
            out.append(Alternative(asked))
            continue
        alone = of_alternative(job, i)  # its own keys ('resources.ordered[0].use_spot')
        missing = explain(replace(alone, job=replace(job.job, constraints=own))) or \
            _left_out(job, ranked[in_alternative(ranked, item)])
        out.append(Alternative(asked, "" if missing is None else missing.why()))
    return tuple(out)


def passed_over(ranked: pd.DataFrame, order: Sequence[Alternative], *,
                unlaunched: Unlaunched | None = None,
                taken: int | None = None) -> tuple[PassedOver, ...]:
    """Each alternative of `order` (`alternatives`) preferred to the one the job goes to,
    with why: `taken` (from 0), by default that of the first choice of `ranked` the
    launcher starts (`unlaunched(row)`: why it does not, '' when it does; None: it starts
    any). One with choices is passed over for its launcher, or for the account's quota
    short of each (`ranked`'s `quota`); one whose cause is none of these is not said."""
    choices = ranked[ranked["excluded"] == ""] if order else ranked.iloc[:0]
    if choices.empty or "order_rank" not in choices:
        return ()
    if taken is None:
        taken = next((int(r["order_rank"]) for _, r in choices.iterrows()
                      if unlaunched is None or not unlaunched(r)), None)
    if taken is None or taken >= len(order):
        return ()
    out = []
    for i, alternative in enumerate(order[:taken]):
        cause = alternative.unoffered or _not_taken(choices[choices["order_rank"] == i],
                                                    unlaunched)
        if cause:
            out.append(PassedOver(i + 1, alternative.asked, cause, taken + 1))
    return tuple(out)


def unsaid(notes: Sequence[str], over: Sequence[PassedOver]) -> list[str]:
    """A task's `notes` but those a line of `over` says (an alternative dropped as read,
    `dropped_said`): each said once."""
    causes = [p.cause for p in over if not p.asked]
    return [n for n in notes if not any(dropped_said([n]) in c for c in causes)]


def dropped_said(notes: Sequence[str]) -> str:
    """Why an alternative was dropped as the task was read, from its notes."""
    return "; ".join(n.removesuffix(f"; {ALTERNATIVE_DROPPED}") for n in notes)


def _not_taken(mine: pd.DataFrame, unlaunched: Unlaunched | None) -> str:
    """Why an alternative's choices (`mine`) are passed over: none the launcher starts, or
    the account's quota short of each; '' when neither is why (or it has none)."""
    if mine.empty:
        return ""
    launched = mine if unlaunched is None else mine[
        [not unlaunched(r) for _, r in mine.iterrows()]]
    if launched.empty:
        return unlaunched(mine.iloc[0]) if unlaunched is not None else ""
    short = launched["quota"] if "quota" in launched else pd.Series("", index=launched.index)
    if (short == "").any():
        return ""
    return (f"over quota: the account's quota holds none of its offerings "
            f"({'; '.join(dict.fromkeys(short))})")


def in_alternative(ranked: pd.DataFrame, item: Mapping[str, Sequence[str]]) -> pd.Series:
    """Which offerings of `ranked` an item of a task's order (`Workload.order`) allows: its
    clouds, regions, markets, instance types ('cloud/type') and zones; none for one
    dropped as the task was read."""
    match = pd.Series(not item.get(ORDER_DROPPED), index=ranked.index)
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


def _left_out(job: Workload, rows: pd.DataFrame) -> Missing | None:
    """An alternative whose offerings pass the job's filters yet are left out (its
    deadline, its budget, no speed): 'its 2 offerings left out: 1 misses deadline, 1
    over budget', in the words the plan counts those it leaves out by
    (`left_out_words`), a GPU with no speed known named with what the task can do
    (`no_speed_words`); None when it has none."""
    rows = rows[rows["excluded"].isin(UNFILTERED)]
    if rows.empty:
        return None
    gpus = list(dict.fromkeys(str(g) for g in rows.loc[rows["excluded"] == "no throughput",
                                                       "gpu_model"] if g not in GPU_SPECS))
    return Missing(f"its {counted(len(rows), 'offering')} left out: "
                   + ", ".join(f"{n} {said}" for said, n in counted_reasons(
                       job, rows["excluded"]).items())
                   + (f" ({no_speed_words(job, gpus)})" if gpus else ""))


def _alternative(c: Constraints, order: Sequence[Mapping[str, Sequence[str]]],
                 i: int) -> Constraints | None:
    """The job's constraints narrowed to alternative `i` of its order (None where the two
    have nothing in common), as `unmatched` narrows them: to its own
    (`Constraints.alternatives`, one per item of the order not dropped as read) where the
    job keeps them, else to the order's item (its place, market and instance types): what
    the job's filters narrow beyond the task's words (a bucket's cloud) stays narrowed."""
    kept = [j for j, item in enumerate(order) if not item.get(ORDER_DROPPED)]
    if len(c.alternatives) == len(kept):
        return within(c, c.alternatives[kept.index(i)])
    item = {f: tuple(v) for f, v in order[i].items() if f in _FIELDS and v}
    if "instance_types" in item:  # 'cloud/type' in an order, the type in a filter
        types = [t.partition("/") for t in item["instance_types"]]
        item["instance_types"] = tuple(dict.fromkeys(t for _, _, t in types))
        rows = [catalog.lookup(cloud, t) or {} for cloud, _, t in types]  # their GPUs
        if all(r.get("gpu_model") for r in rows):
            item["gpu_models"] = tuple(sorted({str(r["gpu_model"]) for r in rows}))
            item["gpu_counts"] = tuple(sorted({int(r["gpu_count"]) for r in rows}))
    fields = (*_FIELDS, "gpu_models", "gpu_counts")
    return within(c, replace(c, alternatives=(), **{**dict.fromkeys(fields, ()), **item}))

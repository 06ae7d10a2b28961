"""Offerings a launch tries after the others: those where a launch met no capacity in the
last CAPACITY_COOLDOWN (`candidates.candidates_of` orders them so; on a launcher whose
instances run on this machine, what they met counts, never a cloud's own launches':
docs/job-lifecycle.md). The one fact, said in one line by `launch` where it passes over
its plan's first choice for it, by its budget check and a start's hint, which price where
the job is placed instead, and by `plan` under its table."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import datetime
from typing import TYPE_CHECKING

from costsched.amounts import age, stored_price
from costsched.policies import OfferingKey

if TYPE_CHECKING:
    import pandas as pd

    from costsched.optimize.job import Workload
    from costsched.service.jobs.market import Market

KEY = ("cloud", "region", "zone", "instance_type", "market")


def why_last(seen: datetime, when: datetime, launcher: str) -> str:
    """'no capacity met 4 min ago on this machine (local launcher): tried after the others
    until 09:34 UTC': why a launch on `launcher` tries an offering last, that met no
    capacity at `seen`."""
    from costsched.service.jobs.market import CAPACITY_COOLDOWN
    from launchers import runs_here

    ago = age((when - seen).total_seconds())
    where = (f"no capacity met {ago} ago on this machine ({launcher} launcher)"
             if runs_here(launcher) else f"a launch there met no capacity {ago} ago")
    until = seen + CAPACITY_COOLDOWN
    return f"{where}: tried after the others until {until:%H:%M} UTC"


def tried_last(market: Market, launcher: str) -> dict[OfferingKey, str]:
    """Each offering a launch on `launcher` now tries after the others, by key, with why
    (`why_last`)."""
    from launchers import runs_here

    return {key: why_last(seen, market.when, launcher)
            for key, seen in market.full_seen(runs_here(launcher)).items()}


def row_key(row: Mapping) -> tuple[str, ...]:
    """A plan's row's offering key (cloud, region, zone, instance type, market)."""
    return tuple(str(row[k] or "") for k in KEY)


def placed_past(placed: pd.Series, first: pd.Series, why: str) -> str:
    """'placed on X at $a/h, not on Y at $b/h (the plan's first choice): why', of two rows
    of the job's plan."""
    return (f"placed on {placed['offering']} at {stored_price(float(placed['usd_per_hour']))}/h, "
            f"not on {first['offering']} at {stored_price(float(first['usd_per_hour']))}/h "
            f"(the plan's first choice): {why}")


def capacity_passed(ranked: pd.DataFrame, choice: OfferingKey, placed: OfferingKey,
                    last: Mapping[OfferingKey, str]) -> tuple[pd.Series, pd.Series, str] | None:
    """(the row placed on, the row of the decision's `choice`, why) where a launch places
    the job on `placed` rather than its decision's `choice` because a launch met no
    capacity there lately (`last`: `tried_last`'s); None where it does not, or where
    either is not a row of the plan's `ranked`."""
    said = {tuple(k[:5]): why for k, why in last.items()}
    if tuple(placed[:5]) == tuple(choice[:5]) or tuple(choice[:5]) not in said:
        return None
    rows = {}
    for key in (tuple(placed[:5]), tuple(choice[:5])):
        found = ranked[[row_key(r) == key for _, r in ranked.iterrows()]]
        if found.empty:
            return None
        rows[key] = found.iloc[0]
    return rows[tuple(placed[:5])], rows[tuple(choice[:5])], said[tuple(choice[:5])]


def launch_first(job: Workload, ranked: pd.DataFrame,
                 last: Collection[OfferingKey]) -> pd.Series | None:
    """The offering a job's budget is short of, as its launch or start would try it
    (`planner.budget_short`): of those no launch met without capacity lately (`last`),
    where one is short; else of all."""
    from costsched.optimize.planner import budget_short

    full = {tuple(k[:5]) for k in last}
    if full:
        kept = ranked[[row_key(r) not in full for _, r in ranked.iterrows()]]
        short = budget_short(job, kept)
        if short is not None:
            return short
    return budget_short(job, ranked)


def rows_tried_last(rows: pd.DataFrame, last: Mapping[OfferingKey, str]
                    ) -> list[tuple[int, str, str]]:
    """(rank from 1, offering, why) of each of a plan's `rows` a launch tries after the
    others (`last`: `tried_last`'s)."""
    said = {tuple(k[:5]): why for k, why in last.items()}
    if not said:
        return []
    return [(i, str(r["offering"]), said[key])
            for i, (_, r) in enumerate(rows.iterrows(), start=1)
            if (key := row_key(r)) in said]


def table_note(shown: pd.DataFrame, last: Mapping[OfferingKey, str]) -> str:
    """The line under a plan's table naming each row a launch tries after the others, and
    why ('' for none): 'launch passes over #1 (aws us-west-2 g4dn.xlarge spot): no capacity
    met 4 min ago on this machine (local launcher): tried after the others until 09:34
    UTC'."""
    rows = [f"#{i} ({offering}): {why}" for i, offering, why in rows_tried_last(shown, last)]
    return f"launch passes over {'; '.join(rows)}" if rows else ""

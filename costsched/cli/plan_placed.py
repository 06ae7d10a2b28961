"""`plan`'s line for a job that `launch` places by its deadline policy rather than by the
table's order (`service.launch_place`): where it starts, what that costs if spot lasts,
multiplied out, and how to take the table's first row instead."""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING

from costsched.amounts import decimals_kept, times, usd
from costsched.vocabulary import counted

if TYPE_CHECKING:  # (a task refused as it is read loads nothing heavy)
    import pandas as pd

    from costsched.optimize.job import Workload
    from costsched.optimize.planner import JobPlan
    from costsched.service.launch_place import LaunchPlacement


def placing_launcher(explain: str | None, emit: str | None) -> str | None:
    """The launcher `launch` would use (the configuration's), for a plan that shows its
    tables or JSON; None for --explain and --emit, which say nothing of it."""
    if explain is not None or emit is not None:
        return None
    from costsched.config import effective

    return effective().launch.launcher


def placement_json(placed: LaunchPlacement | None) -> dict | None:
    """A job's `launch_placement` in `plan --json` (null when launch takes the ranking's
    order)."""
    return None if placed is None else placed.as_dict()


def launched_as(plan: JobPlan, plans: Sequence[JobPlan]) -> tuple[str, str]:
    """(the job's file as typed, its name where the file holds other jobs of `plans`, else
    ''): what a hint to launch it names."""
    source = str(plan.job.source)
    several = sum(p.job.source == source for p in plans) > 1
    return source, plan.job.name if several else ""


def placed_note(placed: LaunchPlacement | None, ranked: pd.DataFrame,
                shown: pd.DataFrame, source: str = "", job: str = "", *,
                workload: Workload | None = None) -> str:
    """The line under a job's table saying where `launch` places it ('' when launch takes
    the table's order). `ranked`: every offering of the job's plan, `shown`: the rows the
    table shows, best first; `source`, `job`: the job's file as typed and its name where
    the file holds several (`launched_as`), which the hint to take #1 names; `workload`:
    the job, in whose keys an offering left out is said."""
    if placed is None:
        return ""
    if placed.refused:
        return f"launch refuses it: {placed.refused}"
    policy = f"by its deadline policy {placed.policy}"
    spot = len(placed.key) > 4 and placed.key[4] == "spot"
    later = ", on-demand of its type when the deadline needs it" if spot else ""
    first = str(shown["offering"].iloc[0]) if len(shown) else ""
    from costsched.optimize.no_plan_keys import no_spot

    asked = "" if spot or workload is None else no_spot(workload)
    if placed.offering == first and asked:  # no spot to weigh: the file's choice
        return f"launch places it on #1: on-demand, as {asked} asks"
    if placed.offering == first:
        return (f"launch places it on #1 {policy}: " + ("spot while it lasts, on-demand of "
                "its type when the deadline needs it" if spot else "on-demand, as its "
                "deadline needs it now"))
    return (f"launch places it {policy}, not by this table's order: on {placed.offering} "
            f"({_where(placed.offering, ranked, shown, workload)}){_cost(placed, spot)}{later}; "
            f"{_take_first(first, source, job)}")


def _take_first(first: str, source: str, job: str) -> str:
    """'`costsched launch job.yaml --offering 'LABEL'` takes #1 instead', for the job's
    file as typed; of a file of several jobs, for which job, and that the file's others go
    there too (`--offering` places each job of its files)."""
    file = shlex.quote(source) if source and not source.startswith("<") else "JOB.yaml"
    command = f"`costsched launch {file} --offering {shlex.quote(first)}`"
    if not job:
        return f"{command} takes #1 instead"
    return (f"{command} takes #1 for job {job} instead (it places each job of "
            f"{source} there)")


def _where(offering: str, ranked: pd.DataFrame, shown: pd.DataFrame,
           workload: Workload | None = None) -> str:
    """Where the table has the offering: its row, why it is left out (in the keys of
    `workload`'s file, where given), or that it ranks below the rows shown."""
    rows = list(shown["offering"])
    if offering in rows:
        return f"#{rows.index(offering) + 1} here"
    mine = ranked[ranked["offering"] == offering]
    why = str(mine["excluded"].iloc[0]) if len(mine) else ""
    if why:
        if workload is not None:
            from costsched.optimize.left_out_words import reason_words

            why = reason_words(workload, why)
        return f"left out of this table: {why}, on spot alone"
    return f"below the {counted(len(rows), 'row')} shown"


def _cost(placed: LaunchPlacement, spot: bool) -> str:
    """', H h x $P/h = $T for its work and start' (as the policy weighs it: at that
    price, `if spot lasts` on spot; 'for its work' where its start costs nothing), or ''
    where the figures are not known."""
    if not (placed.usd == placed.usd and placed.usd_per_hour > 0):
        return ""
    lasts = (" and start" if placed.started else "") + (" if spot lasts" if spot else "")
    places = decimals_kept([placed.usd])  # a cost the user weighs, as the table's
    written = times(placed.usd / placed.usd_per_hour, placed.usd_per_hour, placed.usd, places)
    if written is None:
        return f", {usd(placed.usd, places)} for its work{lasts}"
    h, price, money = written
    return f", {h} h x {price}/h = {money} for its work{lasts}"

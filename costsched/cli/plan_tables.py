"""The tables and notes `costsched plan` prints of a plan: each job's ranking, a summary
row per group of identical jobs, and a collection's placement. Loaded once the job files
are read and planned: a file refused at parsing loads none of it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from costsched.amounts import given, stored_price
from costsched.cli import plan_figures as figures
from costsched.cli.common import console, err_console, table, user_text
from costsched.cli.plan_cells import ranking_cells
from costsched.cli.plan_json import groups, job_notes
from costsched.cli.plan_placed import launched_as, placed_note
from costsched.optimize.quotas import quota_cost
from costsched.vocabulary import counted

if TYPE_CHECKING:
    import pandas as pd

    from costsched.optimize.collection import CollectionPlan
    from costsched.optimize.planner import JobPlan
    from costsched.service import PlanResult
    from costsched.work import Work

TABLES_UP_TO = 20  # jobs; more get one summary row per group of identical jobs
REASONS_SHOWN = 10  # a collection's reasons printed; the count of the rest follows
QUOTA_MARK = " (over quota)"  # an offering the account's quota does not hold; its note says


def quota_notes(shown: pd.DataFrame) -> list[str]:
    """One note per quota that does not hold offerings of the table, naming them."""
    if "quota" not in shown:
        return []
    over = shown[shown["quota"] != ""]
    return [f"over quota: {', '.join(group['offering'])}: {why}"
            for why, group in over.groupby("quota", sort=False)]


def print_groups(result: PlanResult) -> None:
    """One row per group of identical jobs: its best offering, or why it has none."""
    rows, reasons, notes = [], [], {}
    bests: list[tuple[pd.Series | None, Work | None]] = []
    for members in groups(result):
        first, last = result.jobs[members[0]], result.jobs[members[-1]]
        names = first.job.name + ("" if len(members) == 1 else f" ... {last.job.name}")
        best, work = first.best, first.job.work
        if best is None:
            reasons.append(f"{counted(len(members), 'job')} ({names}): {first.reason}")
        if work is not None and work.assumed:
            notes.setdefault(work.assumption(), None)
        interval = result.interval(members[0])
        if best is not None and best["market"] == "spot" and interval is not None \
                and interval.assumed:
            notes.setdefault(interval.note(), None)
        rows.append([names, str(len(members)), first.job.job.model,
                     figures.group_work(first.job.job.steps, work),
                     "-" if best is None else best["offering"],
                     "-" if best is None else stored_price(best["usd_per_hour"])])
        bests.append((best, work))
    rows = [[*r, *c] for r, c in zip(rows, figures.group_cells(bests), strict=True)]
    console.print(table(f"{counted(len(result.jobs), 'job')} in "
                        f"{counted(len(rows), 'group')} of identical jobs; "
                        f"best by {result.per_job_objective} (--json gives every job)",
                        ["jobs", "count", "model", "work", "best offering", "$/h", "hours",
                         "total $ each"], rows))
    for note in notes:
        console.print(f"  {user_text(note)}", highlight=False)
    for reason in reasons:
        err_console.print(f"[red]no plan:[/red] {user_text(reason)}", highlight=False,
                          soft_wrap=True)


def print_job(result: PlanResult, members: list[int], top: int, stale_after: float,
               wide: bool) -> None:
    """The ranking of the jobs `members` share (one job's, or a sweep's identical jobs')."""
    from costsched.optimize.planner import superseded_offerings
    from costsched.service.budget_short import with_budget_risk
    from costsched.service.jobs.tried_last import table_note
    from costsched.service.staleness import stale

    index = members[0]
    p = result.jobs[index]
    job = p.job.job
    names = [result.jobs[m].job.name for m in members]
    work = p.job.work
    steps_estimated = figures.work_estimated(p.job)
    title = figures.title(names, p.job, result.per_job_objective, steps_estimated)
    if p.reason:  # one line per job, each naming it
        for m in members:
            err_console.print(f"[red]no plan:[/red] {user_text(result.jobs[m].reason)}",
                              highlight=False, soft_wrap=True)
        return
    shown = with_budget_risk(p.job, result.ranking(index).head(top))
    estimated = figures.estimated_figures(shown, p.job)
    b = p.baseline
    # One precision down each column, the baseline's hours and total under it included;
    # each row's $/h times its hours reads as its total.
    work_cells, prices, baseline = ranking_cells(shown, work, estimated, b, steps_estimated)
    vs = figures.vs_places(shown)  # one precision down the column of ratios
    rows = [
        [str(i), r.offering + (QUOTA_MARK if getattr(r, "quota", "") else ""),
         (f"{r.nodes} nodes x " if getattr(r, "nodes", 1) > 1 else "")
         + (f"{r.gpu_count}x{r.gpu_model}" if r.gpu_count else "CPU"),
         prices[i - 1], figures.speed_cell(r),
         figures.rate_cell(r), r.preemption_basis, *work_cells[i - 1],
         figures.vs_cell(r, b is not None and b.estimated, bool(mine), vs)]
        for i, (r, mine) in enumerate(zip(shown.itertuples(), estimated, strict=True),
                                      start=1)
    ]
    speed = figures.speed_column(work)
    columns, rows = figures.dated(["#", "offering", "GPUs", "$/h", speed, "preempt/h",
                                   "risk source", *figures.work_columns(work), "vs OD V100"],
                                  rows, shown, result.at, stale_after)  # which row's is old
    drawn = table(title, columns, rows, detail=[
        "risk source", "preempt/h", speed, "GPUs", "vs OD V100", figures.PRICE_OF], wide=wide)
    console.print(drawn, soft_wrap=wide, markup=False)  # (its cells are Text already)
    # Columns left out to fit: their notes say --wide shows them, no mark is explained bare.
    hidden = tuple(set(columns) - {str(c.header) for c in drawn.columns})
    first_of_file = next(q for q in result.jobs if q.job.source == p.job.source) is p
    hint = (figures.rule_hint(job.model, p.job.table.frame, p.job.source, first_of_file, shown)
            if estimated.any() else "")
    notes = [*map(user_text, job_notes(p)),  # plain words: a `[section]` shown as written
             *filter(None, [figures.gang_note(p.job, shown, work, hidden),
                            user_text(figures.zone_note(p.job, shown)),
                            figures.start_note(p.job, work)]),
             *figures.notes(shown, work, hint, steps_estimated, hidden),
             *filter(None, [figures.rate_note(shown, p.job.nodes, "preempt/h" in hidden),
                            figures.interval_note(result.interval(index), shown)]),
             *filter(None, [figures.budget_note(p.job, shown),
                            user_text(placed_note(result.launch_of(index), p.ranked, shown,
                                                  *launched_as(p, result.jobs),
                                                  workload=p.job)),
                            user_text(table_note(shown, result.tried_last))])]
    if baseline:
        notes.append(baseline.replace("baseline:", "baseline of the vs OD V100 column "
                                      f"({figures.HIDDEN}):", 1)
                     if "vs OD V100" in hidden else baseline)
    old = stale(shown, result.at, stale_after)
    if old is not None:  # (and which row's, under PRICE_OF where the rows differ)
        notes.append(figures.stale_note(old, shown, result.at, stale_after,
                                        figures.PRICE_OF in hidden))
    notes.extend(quota_notes(shown))
    paid = quota_cost(p.ranked)
    if paid is not None:
        notes.append(paid.line())
    n_excluded = int((p.ranked["excluded"] != "").sum())
    if n_excluded:
        from costsched.optimize.left_out_words import counted_reasons

        why = counted_reasons(p.job, p.ranked["excluded"])
        notes.append(f"{counted(n_excluded, 'offering')} left out: "
                     + ", ".join(f"{n} {reason}" for reason, n in why.items()))
    gone = superseded_offerings(p)
    if gone:  # which, and why: a bundled price its type's newer price superseded
        notes.append("superseded (its instance type's bundled price changed since, "
                     "`costsched prices history --instance TYPE`): " + ", ".join(gone[:3])
                     + (f" and {len(gone) - 3} more (--json lists them)" if len(gone) > 3
                        else ""))
    for note in notes:
        console.print(f"  {note}", highlight=False, markup=True)  # each note escapes its text
    booked = result.booked[index] if result.booked else None
    if booked is not None:  # capacity booked ahead that fits the job: weighed apart
        from costsched.cli.booked import print_booked
        from costsched.config import effective

        print_booked(booked, result.at, wide, p.job.source, effective().launch.launcher)



def print_collection(c: CollectionPlan, budget: float | None,
                      jobs: Sequence[JobPlan] = ()) -> None:
    print_collection_table(c, budget)
    note = figures.collection_note([p.job for p in jobs])
    if note and c.feasible:
        console.print(f"  {user_text(note)}", highlight=False)


def print_collection_table(c: CollectionPlan, budget: float | None) -> None:
    if not c.feasible:
        for reason in c.reasons[:REASONS_SHOWN]:
            err_console.print(f"[red]no collection plan ({c.policy}):[/red] "
                              f"{user_text(reason)}", highlight=False, soft_wrap=True)
        if len(c.reasons) > REASONS_SHOWN:
            err_console.print(f"[red]no collection plan ({c.policy}):[/red] and "
                              f"{len(c.reasons) - REASONS_SHOWN} more reasons (--json gives "
                              "them all)", highlight=False, soft_wrap=True, markup=True)
        return
    a = c.assignment
    heads, rows, costs = figures.collection_rows(a, by_offering=len(a) > TABLES_UP_TO)
    total, makespan = figures.heading_figures(rows, costs, c.makespan_hours)
    title = (f"Collection plan ({c.policy}): {counted(len(a), 'job')}, total {total}, "
             f"makespan {makespan} h" + (f", budget {given(budget, figures.written_places(total))}"
                                         if budget else ""))
    console.print(table(title, heads, rows))
    if c.instances is not None and len(a) <= TABLES_UP_TO:
        from costsched.cli.packing import instances_table

        console.print(instances_table(c))

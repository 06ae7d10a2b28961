"""`costsched plan JOB.yaml...`: rank offerings per job and place a collection of jobs."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from costsched.cli.common import (
    JsonOption,
    ListPricesDbOption,
    WideOption,
    bar_hidden,
    console,
    dollars,
    err_console,
    friendly_errors,
    future_line,
    options,
    print_json,
    say_list_prices,
    stream_json,
    user_text,
)
from costsched.cli.said import Said, as_json, noted, say_all, task_file_said
from costsched.model import InvalidInput
from costsched.taskfile import read_jobs
from costsched.vocabulary import canonical, did_you_mean

# The planner, the store, the prices and the tables load once the job files are read: a bad
# file is refused before any of them.
if TYPE_CHECKING:
    import pandas as pd

    from costsched.jobspec import JobSpec
    from costsched.optimize.planner import Progress as Report
    from costsched.service import PlanResult
    from costsched.store import PriceStore


@friendly_errors
def plan(
    jobs: Annotated[list[Path], typer.Argument(help="Job spec YAML file(s).",
                                               show_default=False)],
    objective: Annotated[str, typer.Option(
        help="cost | time | tradeoff | throughput-per-dollar. Per job: the lowest cost, the "
             "earliest finish, or --weight between them. Collections: min total cost "
             "(tradeoff too), min makespan (time), or Gavel's throughput per dollar "
             "(per-job tables then rank by cost).")] = "cost",
    deadline: Annotated[str | None, typer.Option(
        help="Every job's deadline: hours (48, 36h, 2d) or an ISO time; overrides the specs.",
        show_default=False)] = None,
    budget: Annotated[float | None, typer.Option(
        help="USD (5, 12.50, $5). One job: its budget. Several: the collection's total "
        "budget.", show_default=False, parser=dollars, metavar="USD")] = None,
    weight: Annotated[float, typer.Option(
        help="tradeoff: weight of cost against time, in [0, 1].", min=0.0, max=1.0)] = 0.5,
    at: Annotated[str | None, typer.Option(help="Price as of this time (ISO 8601; default now).",
                                           show_default=False)] = None,
    top: Annotated[int, typer.Option(help="Offerings shown per job.", min=1)] = 10,
    quota: Annotated[int | None, typer.Option(
        help="Collections: at most this many instances of a type in a region.", min=1,
        show_default=False)] = None,
    availability: Annotated[list[Path] | None, typer.Option(
        help="Probe log(s) to measure preemption rates from (else the store's availability "
             "observations and per-cloud defaults).",
        show_default=False)] = None,
    explain: Annotated[str | None, typer.Option(
        "--explain", help="An offering's row number in the plan's table (1) or its label "
        "as ranked ('aws us-east-1a p3.2xlarge spot'): the arithmetic of its preemption "
        "rate and expected cost, and the price of a move there itemised as migrate prices "
        "it (first job).",
        show_default=False)] = None,
    moved_from: Annotated[str | None, typer.Option(
        "--from", help="With --explain: price the move there from this offering (its row "
        "number or label as ranked; default the plan's choice).", show_default=False)] = None,
    share_instances: Annotated[bool, typer.Option(
        "--share-instances", help="Collections: jobs that can run on one GPU may share "
        "multi-GPU instances, one GPU each; the plan lists the instances to rent.")] = False,
    emit: Annotated[str | None, typer.Option(
        "--emit", help="sky: print each job as a SkyPilot task pinned to its best offering "
        "(cloud, region, zone, instance type, spot) instead of the tables.",
        show_default=False)] = None,
    db: ListPricesDbOption = None,
    json_out: JsonOption = False,
    wide: WideOption = False,
) -> None:
    """Rank offerings by expected cost and time for each job; for several jobs, also place
    them all at once (min cost under deadlines, min makespan under --budget, or
    throughput per dollar), within --quota."""
    if moved_from is not None and explain is None:
        raise InvalidInput(f"--from {moved_from!r}: prices a move to the offering --explain "
                           "names: expected --explain OFFERING with it")
    _check_options(objective, deadline, budget, emit, json_out, at)  # before the files, the planner
    future = future_line(at)  # (a bad --at refused here, before the files)
    with ExitStack() as held:  # the store: opened once, for the plan and its notes
        with options(objective="--objective", deadline="--deadline", budget="--budget",
                     at="--at"), _progress(hidden=bar_hidden(json_out)) as report:
            from costsched.validation import as_time

            # A file's deadline that has passed is refused as the file is read (--deadline
            # replaces it): before the catalog, the throughputs or the prices are.
            specs = read_jobs(jobs, report, at=None if deadline is not None else as_time(at))
            say_list_prices(db)
            from costsched.cli.plan_placed import placing_launcher
            from costsched.service import plan as plan_jobs
            from costsched.service.stores import using

            store = held.enter_context(using(db))
            result = plan_jobs(store, specs, at=at, objective=objective, deadline=deadline,
                               budget=budget, weight=weight, quota=quota, availability=availability,
                               progress=report, share_instances=share_instances,
                               launcher=placing_launcher(explain, emit))
        from costsched.config import effective

        launcher = effective().launch.launcher
        # said of the files as read, before any table: secrets written, mounts, images
        before = [*noted(future), *task_file_said(specs, launcher)]
        say_all(before)
        if explain is not None:
            overheads = effective().migration.overheads()
            explain = _offering_of(result, explain, "--explain", top)
            moved_from = (None if moved_from is None
                          else _offering_of(result, moved_from, "--from", top))
            lines = result.explain(explain, moved_from=moved_from, overheads=overheads)
            move = result.move_here(explain, moved_from, overheads=overheads)
            if json_out:
                print_json({"offering": explain, "explain": lines,
                            "move": None if move is None else move.as_dict(),
                            "messages": as_json(before)})
            else:
                for line in lines:
                    console.print(user_text(line), highlight=False, soft_wrap=True)
            return
        from costsched.cli import plan_tables as tables
        from costsched.cli.plan_json import JSON_INDENTED_UP_TO, groups, plan_json
        from costsched.price_ages import stale_after_hours

        stale_after = stale_after_hours()
        after = _said_after(store, specs, result, launcher, top, json_out, emit)
        if emit is not None:
            from costsched.cli.plan_emit import emit_sky

            emit_sky(specs, result, top)
        elif json_out:
            stream_json(plan_json(result, top, stale_after, [*before, *after]),
                        indent=len(result.jobs) <= JSON_INDENTED_UP_TO)
        elif len(result.jobs) > tables.TABLES_UP_TO:
            tables.print_groups(result)
            if result.collection is not None:
                tables.print_collection(result.collection, budget, result.jobs)
        else:
            for members in groups(result):  # a sweep's identical jobs: one table
                tables.print_job(result, members, top, stale_after, wide)
            if result.collection is not None:
                tables.print_collection(result.collection, budget, result.jobs)
        say_all(after)
        if result.quota_note and not json_out and emit is None and result.ok:
            err_console.print(f"note: {user_text(result.quota_note)}", highlight=False,
                              soft_wrap=True)
        if not result.ok or any(line.level == "error" for line in after):
            raise typer.Exit(1)


def _said_after(store: PriceStore, specs: list[tuple[str, JobSpec]], result: PlanResult,
                launcher: str, top: int, json_out: bool, emit: str | None) -> list[Said]:
    """What the plan says after its tables (and in --json): earlier jobs of these models
    that ran far from their plans' throughput, the booked markets not weighed and a
    launcher that goes elsewhere (not beside --emit's tasks), then what `launch` checks the
    named budgets by, an error where it refuses a job."""
    from costsched.cli.plan_left_out import left_out_lines
    from costsched.cli.plan_named_budgets import named_budget_lines
    from costsched.service.speeds import plan_notes_for

    said = []
    if emit is None:
        said += [Said("throughput", line) for line in
                 plan_notes_for(store, {p.job.job.model for p in result.jobs})]
        # (the start left out: a field of each job in --json)
        said += [Said("note", line) for line in
                 left_out_lines(result, launcher, top, start=not json_out)]
    return said + [Said("error" if refuses else "note", line)
                   for line, refuses in named_budget_lines(store, specs, result.jobs, result.at)]


EMITS = ("sky",)  # what --emit writes: SkyPilot tasks


def _check_options(objective: str, deadline: str | None, budget: float | None,
                   emit: str | None, json_out: bool = False, at: str | None = None) -> None:
    """One line refusing a bad --objective, --deadline (or one not after --at), --budget
    or --emit (or --emit with --json, whose output is the task files, not JSON) at once,
    before anything heavy loads (the service checks them again for its other callers)."""
    from datetime import datetime

    from costsched.jobspec import deadline_value
    from costsched.optimize import objectives
    from costsched.service.values import choices
    from costsched.validation import as_time

    with options(objective="--objective"):
        choices("objective", [objective], objectives.ALL)
    if emit is not None and canonical(emit, EMITS) is None:  # (any case: 'SKY')
        raise InvalidInput(f"--emit {emit!r}: expected {' or '.join(EMITS)}"
                           f"{did_you_mean(emit, EMITS)}")

    if deadline is not None:
        try:
            due = deadline_value(deadline)
        except ValueError as exc:
            raise InvalidInput(f"--deadline: {exc}") from None
        with options(at="--at"):
            when = as_time(at) if isinstance(due, datetime) else None
        if when is not None and due <= when:
            raise InvalidInput(f"--deadline {deadline}: {due:%Y-%m-%dT%H:%MZ} is not after the "
                               f"planning time {when:%Y-%m-%dT%H:%MZ}")
    if budget is not None and not (math.isfinite(budget) and budget > 0):
        raise InvalidInput(f"--budget {budget:g}: expected a positive amount of USD")
    if emit is not None and json_out:
        raise InvalidInput(f"--emit {emit} prints SkyPilot task YAML, not JSON: expected "
                           "--emit or --json, not both")


@contextmanager
def _progress(hidden: bool) -> Iterator[Report | None]:
    if hidden:
        yield None
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=err_console, transient=True) as bar:
        task = bar.add_task("planning", total=None)

        def report(stage: str, done: int, total: int) -> None:
            bar.update(task, description=stage, completed=done, total=total)

        yield report


def _offering_of(result: PlanResult, given: str, option: str, top: int) -> str:
    """The label of the offering `given` names for the first job: its label as ranked, or
    its row number in the plan's table ('3' or '#3'; the table shows `top` rows);
    InvalidInput naming the rows there are for a row number out of range."""
    number = given.strip().removeprefix("#")
    ranked = result.ranking(0)["offering"]
    if not number.isdigit():
        return _label_of(ranked, given, option)
    if not 1 <= int(number) <= len(ranked):
        rows = (f"rows 1 to {len(ranked):,}" if len(ranked) > 1
                else "row 1" if len(ranked) else "no rows")
        if len(ranked) > top:
            rows += f" (--top {len(ranked)} shows them all)"
        raise InvalidInput(f"{option} {given}: the plan of {result.jobs[0].job.name} has "
                           f"{rows}; expected a row number there or an offering's label")
    return str(ranked.iloc[int(number) - 1])


def _label_of(ranked: pd.Series, given: str, option: str) -> str:
    """The ranked label `given` writes, in any case and with ':' or ' ' between its parts;
    a misspelt cloud or market, or a label close to a ranked one, said with the close
    names (an offering not ranked at all is said by the plan's explanation)."""
    from costsched.service.decide import parse_offering
    from costsched.vocabulary import closest

    words = " ".join(given.replace(":", " ").split()).lower()
    labels = {str(label).lower(): str(label) for label in ranked}
    if words in labels or not labels:
        return labels.get(words, given)
    if len(words.split()) == 4:
        try:
            parse_offering(given)  # its cloud and market, each with the close names
        except InvalidInput as exc:
            raise InvalidInput(f"{option} {exc}") from None
    close = closest(words, labels) if len(words.split()) >= 3 else []  # a label's parts
    if close:
        raise InvalidInput(f"{option} {given!r}: not in the plan's ranking; did you mean "
                           + " or ".join(repr(labels[c]) for c in close) + "?")
    return given

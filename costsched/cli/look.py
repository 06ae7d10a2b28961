"""`costsched status | logs`: the looks at jobs that must start at once. A store with
nothing to show, the output of a job named plainly, and a job the store does not hold are
read straight from the SQLite file (costsched.service.glance); everything else is
answered by costsched.cli.jobs, which opens the store and asks the launcher."""

from __future__ import annotations

from typing import Annotated

import typer

from costsched.cli.common import (
    NEVER_RUN,
    NO_JOBS,
    NO_STORE,
    DbOption,
    JobArgument,
    JobsDbOption,
    JsonOption,
    WideOption,
    at_least,
    console,
    friendly_errors,
    no_store_yet,
    print_json,
    say_no_store,
    split_csv,
)
from costsched.cli.wait_ended import HELP as WAIT_HELP
from costsched.model import SHOWN_STATES, InvalidInput
from costsched.redact import remembered_masked
from costsched.service import glance
from costsched.service.job_filters import parse_labels, parse_states


@friendly_errors
def status(
    job: Annotated[str | None, typer.Argument(help="Job id or name (default: every job).",
                                              show_default=False)] = None,
    wait: Annotated[float, typer.Option(help=WAIT_HELP)] = 0.0,
    state: Annotated[list[str] | None, typer.Option(
        "--state", help=f"Only jobs shown in these states ({', '.join(SHOWN_STATES)}; "
        "repeat or comma-separate).", show_default=False)] = None,
    name: Annotated[str | None, typer.Option(
        help="Only jobs whose name matches this pattern ('resnet*').", show_default=False)]
    = None,
    limit: Annotated[int | None, typer.Option(help="Only the newest N jobs.", min=1,
                                              show_default=False)] = None,
    label: Annotated[list[str] | None, typer.Option(
        "--label", help="Only jobs whose task carries this label (LABEL=VALUE; repeat: all "
        "of them).", show_default=False)] = None,
    budget: Annotated[str | None, typer.Option(
        help="Only jobs in this budget: its constraints.budget_name, or a named budget's "
        "labels (\\[budgets.named.NAME]).", show_default=False)] = None,  # \\[: not Rich markup
    reconcile: Annotated[bool, typer.Option(
        "--reconcile/--no-reconcile", help="Recover preempted jobs and close finished ones "
        "first (--no-reconcile: only read; the daemon's watcher does it).")] = True,
    db: JobsDbOption = None,
    wide: WideOption = False,  # read by common.table
    json_out: JsonOption = False,
) -> None:
    """Each job's state, placement, progress and cost so far (recovering preempted jobs and
    closing finished ones first)."""
    parse_labels(label or [])  # a malformed one is refused, jobs or none
    states = parse_states(split_csv(state))  # and an unknown state
    at_least("--wait", wait, 0.0)
    if db == NO_STORE:  # nothing launched on this machine yet
        if job is not None:
            raise InvalidInput(f"job {job!r}: no job of that name ({no_store_yet(db)}; `costsched "
                               "launch JOB.yaml` starts one)")
        say_no_store(db)
        print_nothing(json_out)
        return
    if job is None and not wait and glance.nothing_to_show(db):
        print_nothing(json_out)
        return
    refuse_missing(db, job)
    from costsched.cli.jobs import show_status

    show_status(job, wait=wait, state=states, name=name, limit=limit, reconcile=reconcile,
                db=db, json_out=json_out, labels=label or [], budget=budget)


def refuse_missing(db: str | None, job: str | None) -> None:
    """A job the store does not hold is refused after one read of its file, as the store's
    path refuses it."""
    refused = None if job is None else glance.missing_job(db, job)
    if refused is not None:
        raise InvalidInput(refused)


def print_nothing(json_out: bool) -> None:
    """What `status` shows of a store without jobs whose scheduled optimizer never ran."""
    if json_out:
        print_json({"jobs": [], "daemon": [{"task": t, "next_run": None, "last": None,
                                            "failures": []} for t in glance.TASKS],
                    "budgets": [],  # no jobs: no budget has spent or stopped anything
                    "held_bookings": [],  # none held (glance.nothing_to_show)
                    "costs_note": "",  # no costs
                    "recovery": {"armed": False, "live_jobs": 0, "fix": None,
                                 "daemons": [], "line": None, "blocked": [],
                                 "unscheduled": None}})
        return
    console.print(NEVER_RUN, highlight=False, markup=False)
    console.print(NO_JOBS, highlight=False, markup=False)


@friendly_errors
def logs(job: JobArgument,
         tail: Annotated[int, typer.Option(help="Lines from the end.", min=1)] = 200,
         follow: Annotated[bool, typer.Option(
             "--follow", "-f", help="Keep printing the output as it comes, across "
             "recoveries and moves, until the job ends (Ctrl-C stops).")] = False,
         node: Annotated[int | None, typer.Option(
             help="The node of a multi-node job (its rank; 0 is the first, the one shown "
             "without --node); with --all, that node's on every instance.", min=0,
             show_default=False)] = None,
         every: Annotated[bool, typer.Option(
             "--all", help="The output on every instance the job ran on (before each "
             "recovery or move too), oldest first, the last --tail lines of each; a "
             "multi-node job's, every node's of every round (--node: that node's).")
         ] = False,
         db: DbOption = None) -> None:
    """The job's output on its current (or last) instance.

    --all: on every instance it ran on; --follow: as it comes, until the job ends."""
    found = None if follow or node or every else glance.last_instance(db, job)
    if found is not None:
        from launchers import make_launcher

        launcher, instance, stored = found
        glance.remember_secrets(stored)  # a job that prints a secret: masked here too
        text = remembered_masked(make_launcher(launcher).logs(instance, tail=tail))
        if text:  # which instance's (none: the line below names it)
            from costsched.cli.logs_lines import instance_header

            typer.echo(instance_header(instance), err=True)
        typer.echo(text, nl=False)
        if not text:  # not a silent nothing: `status` says why it ended, if it did
            typer.echo(f"job {job}: no output on instance {instance} (`costsched status "
                       f"{job}` says how the job stands)", err=True)
        return
    refuse_missing(db, job)
    from costsched.cli.jobs import show_logs

    show_logs(job, tail=tail, follow=follow, db=db, node=node, every=every)

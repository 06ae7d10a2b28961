"""`costsched launch | migrate | stop | start`, and `status | logs` from the store: run
jobs on the chosen offerings."""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from costsched.cli.budgets import budgets_now, print_budgets
from costsched.cli.common import (
    EXIT_FAILED,
    EXIT_TRY_AGAIN,
    NO_JOBS,
    DbOption,
    JobArgument,
    JsonOption,
    NewStoreOption,
    WritesDbOption,
    announce_new_store,
    at_least,
    console,
    dollars,
    err_console,
    friendly_errors,
    live_status,
    options,
    print_json,
    printable,
    say_error,
    user_text,
    writes_store,
)
from costsched.cli.status_lines import print_daemon as _print_daemon  # noqa: F401
from costsched.cli.status_lines import print_status as _print_status
from costsched.cli.status_lines import problems as _problems  # noqa: F401
from costsched.cli.status_lines import progress as _progress
from costsched.cli.status_lines import (
    undecided,  # noqa: F401
    written_costs,
)
from costsched.cli.wait_ended import (
    EXIT_WAIT_RAN_OUT,
    EXIT_WAITED_FAILED,
    ended_failed,
    not_ended,
    waited_for,
)
from costsched.config import effective
from costsched.model import InvalidInput
from costsched.passes import one_pass
from costsched.service import jobs as service
from costsched.service import views

# The store, the planner and the launchers load once the command's input is read: a bad
# job file or option is refused before any of them.
if TYPE_CHECKING:
    from costsched.jobspec import JobSpec
    from costsched.store import PriceStore


def open_store(db: str | None) -> PriceStore:
    """The store at `db` (costsched.service.stores.open_store)."""
    from costsched.service.stores import open_store as opened

    return opened(db)


def make_launcher(name: str) -> Any:
    """A launcher with this machine's defaults (local instances under $COSTSCHED_INSTANCES,
    else the user data directory; cloud launchers with their SDK's credentials)."""
    from launchers import make_launcher as make

    return make(name)


def job_launcher(store: PriceStore, job: str | None) -> Any:
    """The launcher of `job` (or of the store's jobs: local unless they say otherwise)."""
    return views.job_launcher(store, job)


@friendly_errors
def launch(
    jobs: Annotated[list[Path], typer.Argument(help="Job spec YAML file(s).",
                                               show_default=False)],
    offering: Annotated[str | None, typer.Option(
        help="Run on this offering, as `costsched plan` names it ('aws us-east-1a p3.2xlarge "
             "spot'), instead of the decision model's pick.", show_default=False)]
    = None,
    launcher: Annotated[str | None, typer.Option(
        "--launcher", help="local (subprocesses on this machine), aws, gcp, azure, or clouds "
        "(the cloud of the offering chosen, moving between them when it pays); default: "
        "config launch.launcher.", show_default=False)] = None,
    wait: Annotated[float, typer.Option(help="Seconds to wait for the job to run.")] = 30.0,
    env: Annotated[list[str] | None, typer.Option(
        "--env", help="NAME=VALUE for a SkyPilot task's envs (NAME alone: the value of NAME "
                      "in your environment), stored with the job; may be repeated. A secret "
                      "goes in --secret.", show_default=False)] = None,
    secret: Annotated[list[str] | None, typer.Option(
        "--secret", help="NAME=VALUE for a SkyPilot task's secrets (NAME alone: from your "
                         "environment): passed to the job, never stored or shown.",
        show_default=False)] = None,
    book: Annotated[bool, typer.Option(
        "--book", help="Buy the booked capacity in each job's best plan (a capacity block, "
        "as `costsched plan` shows it) and run the job there while it lasts; asks first "
        "unless --yes.")] = False,
    yes: Annotated[bool, typer.Option(
        "--yes", help="Launch even when a job's pessimistic cost (preemptions at the 95th "
                      "percentile) does not fit what is left of its budgets; with --book, "
                      "buy without asking.")] = False,
    db: WritesDbOption = None,
    new_store: NewStoreOption = False,
    json_out: JsonOption = False,
) -> None:
    """Start jobs on the best offering now (trying the next ones if a cloud has no
    capacity), with their checkpoints kept in their checkpoint store."""
    db = writes_store(db, new_store)
    at_least("--wait", wait, 0.0)
    if offering is not None:
        from costsched.service.decide import parse_offering

        parse_offering(offering)  # how to write one, before anything is opened or reached
    from costsched.cli.booked import confirm_booking
    from costsched.cli.launch_given import env_note, given, refuse_unset
    from costsched.cli.said import noted, say_all, task_file_said
    from costsched.service.values import as_time
    from costsched.taskfile import read_jobs

    envs, secrets = given(env, secret)
    # each file once, before the store is opened; a misspelt name is said first, then
    # every name missing from the environment at once
    read = read_jobs(jobs, envs=envs, secrets=list(secrets),
                     at=datetime.now(timezone.utc))  # a passed deadline, before any load
    envs, secrets = refuse_unset(envs, secrets)
    settings = effective().launch
    chosen = launcher or settings.launcher
    with options(**{chosen: f"--launcher {chosen}" if launcher else
                    f"the configuration's launch.launcher {chosen}"}):  # (an SDK missing)
        backend = make_launcher(chosen)
    _refuse_bad_input(db, read, backend, envs, secrets, settings.checkpoint_root, offering)
    said = task_file_said(read, chosen,  # (an --env named like a
                          getattr(backend, "base_dir", None), given=envs,  # secret: below)
                          unrunnable=False)  # (refused above)
    say_all(said)
    announce_new_store(db)
    store = open_store(db)
    launching = f"launching, waiting up to {wait:g} s for the jobs to run"
    # One pass, one instant: the budget check prices each job by the plan its launch then
    # places it by (read once: the market, the throughputs, the plan).
    with one_pass():
        when = as_time(None)
        # Said once the launch goes ahead: a launch refused after it never said it fits.
        fitting = _check_budgets(store, read, envs, yes, offering, backend,
                                 settings.checkpoint_root, at=when)
        with live_status(launching, shown=not json_out):
            records = service.launch(store, read, launcher=backend, offering=offering,
                                     envs=envs, secrets=secrets, at=when,
                                     checkpoint_root=settings.checkpoint_root,
                                     book=confirm_booking(yes) if book else None)
    with live_status(launching, shown=not json_out):  # (the wait reads afresh: no pass)
        armed = _arm(store, backend, records)  # watched from now on, however the wait ends
        if wait > 0:
            service.settle(store, backend, wait)
    for line in fitting if not json_out else ():
        if line not in _passed_said(records):  # said under the table, once
            console.print(printable(line), highlight=False, markup=False)
    with one_pass():  # the jobs and their budgets as of one instant, read once
        shown = service.status(store, backend, None)
        shown = [s for s in shown if s.record.id in {r.id for r in records}]
        budgets = None if json_out else budgets_now(store, of_jobs={r.id for r in records})
    stored = noted(env_note(envs))  # an --env named like a secret is stored
    _print_status(shown, json_out, title="Launched", assumed_figures=True, budgets=budgets,
                  said={spec.name: [*(s for s in said if s.source == source), *stored]
                        for source, spec in read})
    _print_checkpoints(records, json_out)
    _print_passed_over(records, json_out)
    _print_armed(armed, json_out)
    _print_armed(env_note(envs), json_out)
    _say_stopped_namesakes(store, records, shown=not json_out)
    _say_not_launched(store, [r.id for r in records], shown=not json_out)


def _say_stopped_namesakes(store: PriceStore, records: Sequence[Any], shown: bool) -> None:
    """A line on stderr for each stopped job of a launched job's name: a new launch
    starts afresh, and while it runs the stopped one (its checkpoint kept) cannot start,
    one live job a name."""
    launched = {r.id for r in records}
    for record in records if shown else ():
        for old in store.jobs.find(record.name):
            if old.id not in launched and old.state == "stopped":
                err_console.print(
                    f"note: job {old.id} ({old.name}) is stopped at step "
                    f"{old.steps_done:,.0f} and keeps its checkpoint; job {record.id}, "
                    f"launched now under its name, started afresh, and job {old.id} cannot "
                    f"start while job {record.id} runs (`costsched stop {record.id}`, then "
                    f"`costsched start {old.id}` resumes it; `costsched start` of a stopped "
                    "job, not `launch`, resumes one)", highlight=False, markup=False,
                    soft_wrap=True)


def _refuse_bad_input(db: str | None, read: list, backend: Any, envs: dict[str, str],
                      secrets: dict[str, str], checkpoint_root: str | None,
                      offering: str | None) -> None:
    """Bad input is refused before the store is opened: a refused launch makes none
    (service.refuse_bad_input_at)."""
    service.refuse_bad_input_at(db, read, backend, envs=envs, secrets=secrets,
                                checkpoint_root=checkpoint_root, offering=offering)


def _say_not_launched(store: PriceStore, job_ids: list[int], shown: bool) -> None:
    """Each job a launch or a start left without an instance, a line on stderr; then exit
    code 1 when one failed, 75 when one waits on a cloud (its next pass asks again). A job
    that failed on its instance, its failure and last lines `shown` in the table's notes
    above, is not said again there."""
    left = service.not_launched(store, job_ids)
    for job in left:
        say_error(f"job {job.job_id} ({job.name}) failed on its instance, as said above; "
                  f"`costsched logs {job.job_id}` shows its output" if job.ran and shown
                  else job.said())
    if left:
        raise typer.Exit(EXIT_FAILED if any(j.failed for j in left) else EXIT_TRY_AGAIN)


def _arm(store: PriceStore, backend: Any, records: Sequence[Any] = (),
         command: str = "launch") -> str | None:
    """Recovery for the jobs just started (`records`) by `command` (daemon.arming.arm)."""
    from costsched.daemon.arming import arm

    return arm(store, effective(), backend, records, command)


def _rearm(store: PriceStore, backend: Any) -> str | None:
    """Recovery for the jobs a command other than launch and start looks after
    (`autostart.rearm`): a supervisor started where a job runs and none watches; the line
    that says so."""
    from costsched.daemon.autostart import rearm

    return rearm(store, effective(), env=getattr(backend, "environment", dict)())


def _print_checkpoints(records: Sequence[Any], json_out: bool) -> None:
    """A line for each job launched whose task's file mounts say where its checkpoints go
    (as `plan` says it), with the job's own store (on stderr beside --json)."""
    from costsched.cli.common import err_console
    from costsched.service.jobs.carry import CHECKPOINT_SCOPE, root_said
    from costsched.skypilot import checkpoint_note

    for r in records:
        stored = r.spec if isinstance(r.spec, dict) else {}
        notes = ((stored.get("spec") or {}).get("task") or {}).get("notes") or []
        note = checkpoint_note(notes, root_said(stored.get("checkpoint_root"), r.id,
                                                stored.get(CHECKPOINT_SCOPE) or ""))
        if note:
            (err_console if json_out else console).print(
                printable(f"  job {r.id}: {note}"), highlight=False, markup=False,
                soft_wrap=True)


def _passed_said(records: Sequence[Any]) -> set[str]:
    """The lines under the table of a launch (`_print_passed_over`) as the budget check
    words them ('job NAME: placed on ...'): not said twice."""
    from costsched.service.jobs.launches import PASSED_OVER

    return {f"job {r.name}: {line}" for r in records
            for line in (r.spec.get(PASSED_OVER) or () if isinstance(r.spec, dict) else ())}


def _print_passed_over(records: Sequence[Any], json_out: bool) -> None:
    """A line for each `ordered:` alternative a launched job's launch passed over, with why
    (as `plan` says it; on stderr beside --json)."""
    from costsched.cli.common import err_console
    from costsched.service.jobs.launches import PASSED_OVER

    for r in records:
        stored = r.spec if isinstance(r.spec, dict) else {}
        for line in stored.get(PASSED_OVER) or ():
            (err_console if json_out else console).print(
                printable(f"  job {r.id}: {line}"), highlight=False, markup=False,
                soft_wrap=True)


def _print_armed(line: str | None, json_out: bool) -> None:
    """A line beside the table: the recovery line, the other jobs of a name (on stderr
    beside --json)."""
    from costsched.cli.common import err_console

    for part in (line or "").splitlines():  # each line escaped, not the breaks between
        (err_console if json_out else console).print(printable(part), highlight=False,
                                                     markup=False, soft_wrap=True)


def _check_budgets(store: PriceStore, jobs: list[tuple[str, JobSpec]], envs: dict[str, str],
                   yes: bool, offering: str | None = None, launcher: Any = None,
                   checkpoint_root: str | None = None, *,
                   at: datetime | None = None) -> list[str]:
    """Each budgeted job's expected and pessimistic cost (on the `offering` named, else the
    one the launch places it on) against what is left of its budgets, a line each, to say
    once the launch goes ahead; refused when the expected cost does not fit, or the
    pessimistic one without --yes. `at`: the launch's instant (now when not given)."""
    from costsched.service.jobs.budget_launch import launch_fits, refused_fit
    from costsched.service.values import as_time

    config = effective()
    fits = launch_fits(store, jobs, config.budgets, as_time(at), envs=envs,
                       interval_seconds=config.daemon.watch_seconds, offering=offering,
                       launcher=launcher, checkpoint_root=checkpoint_root)
    f = refused_fit(fits, yes)
    if f is not None:
        if f.placed:  # where the figures come from, before the refusal's one line
            err_console.print(printable(f.placed), highlight=False, markup=False,
                              soft_wrap=True)
        raise InvalidInput(f.line() + ("" if not f.fits else
                                       "; give --yes to launch it anyway"))
    # where the deadline policy places a job off its plan's first choice, once a job
    placed = list(dict.fromkeys(f.placed for f in fits if f.placed))
    return [*placed, *(fit.line() for fit in fits)]


def show_status(job: str | None, *, wait: float, state: list[str] | None, name: str | None,
                limit: int | None, reconcile: bool, db: str | None, json_out: bool,
                labels: list[str] | None = None, budget: str | None = None) -> None:
    """`costsched status` (costsched.cli.look) from the store, reconciling the jobs first
    unless told not to; `labels` (LABEL=VALUE) and `budget`: only the jobs they select."""
    from costsched import daemon
    from costsched.service.job_filters import job_filter

    only = job_filter(labels or [], budget, where="--label")

    store = open_store(db)
    launcher = job_launcher(store, job)
    deadline = time.monotonic() + wait
    states = list(state or ())  # in their stored spelling (costsched.cli.look)

    seen = datetime.now(timezone.utc)  # the time of the last look: costs and budgets alike

    def look() -> list[service.JobStatus]:
        nonlocal seen
        seen = datetime.now(timezone.utc)
        with options(name="--name", budget="--budget", state="--state"):
            return service.status(store, launcher, job, at=seen, reconcile_first=reconcile,
                                  states=states, name=name, limit=limit, only=only)

    shown = look()
    waited = waited_for(shown, named=job is not None)
    delay: float | None = None
    changed = False
    with live_status("waiting", shown=not json_out and wait > 0) as live:
        while time.monotonic() < deadline and not all(s.record.final for s in shown):
            live.update(_waiting_line(shown, deadline - time.monotonic()))
            delay = next_poll(delay, changed)
            time.sleep(min(delay, max(0.0, deadline - time.monotonic())))
            before = _states(shown)
            shown = look()
            changed = _states(shown) != before
    from costsched.daemon.supervision import recovery
    from costsched.service.booking import held_unused

    if reconcile:  # its jobs watched from now on, as a launch arms it: said below
        _rearm(store, launcher)
    armed = recovery(store, effective(), datetime.now(timezone.utc), db=db)
    held = held_unused(store, seen, {s.record.id for s in shown})  # paid for, not in use
    # Every table follows the filters: the budgets of the jobs shown (`status JOB`, --state,
    # --name, --limit, --label, --budget); every budget when every job is shown.
    narrowed = job is not None or bool(states) or name is not None or limit is not None \
        or not only.empty
    named = {s.record.id for s in shown} if narrowed else None
    budgets = budgets_now(store, at=seen, of_jobs=named, shown=shown)  # charged as above
    # The list of every job says why each failed in a line; `status JOB` says it whole.
    none = ("No job matches the filters given (--state, --name, --limit, --label, --budget); "
            "`costsched status` with none lists every job." if narrowed and job is None
            else NO_JOBS)
    from costsched.service.jobs.budget_start import start_commands

    # What starts each job a cap stopped, as `start` checks it now (the lines say it).
    starts = None if json_out else start_commands(store, launcher, [s.record for s in shown],
                                                  seen)
    places = _print_status(shown, json_out, scheduled=daemon.status(store), budgets=budgets,
                           recovery=armed, held=held, brief=job is None, none=none,
                           starts=starts)
    if not json_out:  # its spend at the jobs' costs' precision: the same amounts alike
        print_budgets(store, of_jobs=named, at=seen, states=budgets, spent_places=places,
                      written=None if places is None else written_costs(shown))
    _print_armed(service.namesakes(store, job), json_out)  # the others of its name
    ran_out, failed = not_ended(shown, wait), ended_failed(shown, waited, wait)
    for line in (ran_out, failed):
        if line:
            err_console.print(user_text(line), highlight=False, markup=False, soft_wrap=True)
    _say_not_looked_after(shown)
    if ran_out:
        raise typer.Exit(EXIT_WAIT_RAN_OUT)
    if failed:  # (so that `status JOB --wait N && costsched fetch JOB DIR` stops here)
        raise typer.Exit(EXIT_WAITED_FAILED)


def _say_not_looked_after(shown: list[service.JobStatus]) -> None:
    """Jobs this look could not look after (each shown with why, `JobStatus.trouble`):
    a line on stderr, and exit code 75 (try again), as when nothing could be shown."""
    troubled = [s.record.id for s in shown if s.trouble]
    if troubled:
        which = ", ".join(str(j) for j in troubled)
        say_error(f"job{'s' if len(troubled) > 1 else ''} {which}: not looked after in this "
                  "pass (shown with why); `costsched status` again tries again")
        raise typer.Exit(EXIT_TRY_AGAIN)


# Between two looks at the jobs while waiting (each reconciles them): soon at first, and
# after a look that saw a job change state, then less often while nothing changes.
POLL_FIRST, POLL_GROWTH, POLL_MOST = 0.5, 1.5, 5.0


def next_poll(last: float | None, changed: bool) -> float:
    """Seconds to wait before the next look: POLL_FIRST at first and after a look that saw
    a change, else the `last` wait grown by POLL_GROWTH, up to POLL_MOST."""
    if last is None or changed:
        return POLL_FIRST
    return min(last * POLL_GROWTH, POLL_MOST)


def _states(shown: list[service.JobStatus]) -> list[tuple[int, str]]:
    return [(s.record.id, s.record.state) for s in shown]


def _waiting_line(shown: list[service.JobStatus], left: float) -> str:
    """What a wait shows while it waits: each unfinished job's state and progress."""
    jobs = ", ".join(f"{s.record.name} {s.record.state} {_progress(s)}" for s in shown
                     if not s.record.final)
    return user_text(f"waiting ({left:,.0f} s left): {jobs}")


@friendly_errors
def stop(job: JobArgument, db: DbOption = None, json_out: JsonOption = False) -> None:
    """Stop a job: its instance is terminated; its checkpoints are kept.

    A job that ended by itself since the supervisor last looked is closed as it ended, not
    stopped: exit code 2, 'has succeeded: nothing to stop'."""
    from costsched.cli.status_next import stopped_starts_again
    from costsched.service.jobs.stopping import stop_said

    store = open_store(db)
    launcher = job_launcher(store, job)
    record, lost = stop_said(store, launcher, job)
    armed = _rearm(store, launcher)  # the other jobs watched from now on
    if json_out:
        print_json(views.record_document(record))
    else:
        said = f"; {lost}; {stopped_starts_again(record)}" if lost else ""
        console.print(printable(f"job {record.id} ({record.name}): {record.state}{said}"),
                      highlight=False, markup=False, soft_wrap=True)
    _print_armed(armed, json_out)


@friendly_errors
def start(job: JobArgument,
          wait: Annotated[float, typer.Option(help="Seconds to wait for the job to run.")]
          = 30.0,
          budget: Annotated[float | None, typer.Option(
              help="USD (5, 12.50, $5): the job's own budget from now on (raise it to "
                   "start a job its budget stopped).", show_default=False, parser=dollars,
              metavar="USD")] = None,
          secret: Annotated[list[str] | None, typer.Option(
              "--secret", help="NAME=VALUE for the job's secrets (NAME alone, or none "
                               "given: from your environment): passed to the job, never "
                               "stored or shown.", show_default=False)] = None,
          repack: Annotated[bool, typer.Option(
              "--repack", help="Pack the job's workdir again, as it is now (a bug fixed "
                               "since), and run that code from now on, instead of the code "
                               "packed at its launch.")] = False,
          db: DbOption = None, json_out: JsonOption = False) -> None:
    """Start a stopped or failed job again from its newest verified checkpoint (from step
    0 where it published none), with the spec it was launched with and the code packed at
    its launch (--repack: its workdir as it is now), on the best offering now.

    A job that ended short of its declared steps (exited 0 early) starts likewise, to do
    the rest of them. The job's cost so far is kept and the new run's charges add to it.
    Its secrets' values come from --secret or your environment, as at launch."""
    from costsched.cli.launch_given import given
    from costsched.service.jobs.start_code import code_line, edited_since_launch

    at_least("--wait", wait, 0.0)
    at_least("--budget", budget, 0.0, above=True)
    _, secrets = given(None, secret)
    store = open_store(db)
    launcher = job_launcher(store, job)
    record = service.start(store, launcher, job, secrets=secrets, budget=budget,
                           repack=repack)
    said = f"job {record.id} ({record.name}): {code_line(record, repack)}"
    edited = edited_since_launch(record.id, record.name, record.spec)
    for line in filter(None, (said, edited)):
        if json_out:  # (its standard output is the document)
            typer.echo(printable(line), err=True)
        else:
            console.print(printable(line), highlight=False, markup=False, soft_wrap=True)
    armed = _arm(store, launcher, [record], command="`costsched start`")
    if wait > 0:
        service.settle(store, launcher, wait)
    _print_status(service.status(store, launcher, record.id), json_out, title="Started",
                  budgets=None if json_out else budgets_now(store, of_jobs={record.id}))
    _print_armed(armed, json_out)
    _say_not_launched(store, [record.id], shown=not json_out)


def show_logs(job: str, *, tail: int, follow: bool, db: str | None, node: int | None = None,
              every: bool = False) -> None:
    """`costsched logs` (costsched.cli.look) from the store, following the job with
    --follow; `node`: a multi-node job's node (its rank; None: as given none, node 0, or
    every node with `every`); `every`: every instance's."""
    from costsched.cli.logs_lines import instance_line, namesakes_line
    from costsched.redact import remembered_masked
    from costsched.service.glance import remember_secrets

    store = open_store(db)
    launcher = job_launcher(store, job)
    for found in service.job_ids(store, job, states=()):  # its secrets' values: masked
        remember_secrets(store.jobs.get(found).spec)
    if every and follow:
        raise InvalidInput("--all and --follow cannot be given together: --follow follows "
                           "the job across its instances itself; --all shows what each "
                           "instance printed")
    if follow and node:
        raise InvalidInput(f"--follow and --node {node} cannot be given together: --follow "
                           f"shows node 0's output; `costsched logs {job} --all --node "
                           f"{node}` shows node {node}'s on every instance")
    if shared := namesakes_line(store, job):  # whose output this is, and the others'
        typer.echo(shared, err=True)
    if every:
        text = remembered_masked(service.every_log(store, launcher, job, tail=tail,
                                                   node=node))
        typer.echo(text, nl=False)
        return
    if not follow or node:
        text = remembered_masked(service.logs(store, launcher, job, tail=tail,
                                              node=node or 0))
        if text and (which := instance_line(store, job, node or 0)):
            typer.echo(which, err=True)
        typer.echo(text, nl=False)
        if not text:
            typer.echo(f"job {job}: no output yet (`costsched status {job}` says how the job "
                       "stands)", err=True)
        return
    try:
        for text in service.follow(store, launcher, job, tail=max(tail, 1000)):
            typer.echo(remembered_masked(text), nl=False)
    except KeyboardInterrupt:
        pass



_finite = views.finite  # as tests and older callers name it

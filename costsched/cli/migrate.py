"""`costsched migrate`: where each running job should be now, and the moves that pay."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from costsched.amounts import age
from costsched.cli import jobs
from costsched.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_TRY_AGAIN,
    EmptyDbOption,
    JsonOption,
    at_least,
    console,
    friendly_errors,
    print_json,
    printable,
    say_no_store,
)
from costsched.clouds.hints import collect_hint
from costsched.config import effective, fraction_problem
from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.service import views
from costsched.service.no_step import priced_unreported
from costsched.work import NOT_KNOWN, Work


@friendly_errors
def migrate(
    job: Annotated[str | None, typer.Argument(help="Job id or name (default: every running "
                                              "job).", show_default=False)] = None,
    to: Annotated[str | None, typer.Option(
        "--to", help="Move the job to this offering, written as the tables print it: "
        "'CLOUD ZONE-OR-REGION INSTANCE_TYPE MARKET', e.g. 'aws us-west-2 p3.2xlarge spot'. "
        "Your choice: it moves even when dearer (the expected difference in dollars is "
        "printed), within the job's constraints, max_migrations and own budget (a move "
        "whose expected total passes it is refused, saying what is enough).",
        show_default=False)] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would move, and why, "
                                          "without moving.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Move now if the move pays at all: "
                                        "neither the once-a-day limit nor the margin holds "
                                        "it back. Never a move that costs more than staying; "
                                        "max_migrations still holds.")] = False,
    margin: Annotated[float, typer.Option(help="A move is made only when the expected cost "
                                          "of the rest of the job there, the move included, "
                                          "is below staying by more than this fraction of the "
                                          "next day's expected cost where the job is.")] = 0.05,
    wait: Annotated[float, typer.Option(help="Seconds to wait for moves to complete.")] = 60.0,
    secret: Annotated[list[str] | None, typer.Option(
        "--secret", help="NAME=VALUE for the jobs' secrets (NAME alone: from your "
                         "environment): passed to the instances the moves start, never "
                         "stored or shown.", show_default=False)] = None,
    db: EmptyDbOption = None,
    json_out: JsonOption = False,
) -> None:
    """Ask the policy where each running job should be now, among every offering its
    constraints allow, in dollars, and move the jobs whose move pays (checkpoint, verify,
    launch the target, then end the source). With --to, move one job where you say.

    Exit code 0 when each move decided on was started (a job that stays, and --dry-run:
    0); 2 when one was not for want of a secret's value (the line says which, and how to
    give it), or a --to move the job's limits forbid (max_migrations, once a day, its own
    budget); 75 when
    another costsched acts on the job, or the --to offering could not be launched within
    --wait (no capacity there now: the job runs where it was): the same command may work
    later."""
    from costsched.cli.launch_given import given
    from costsched.price_ages import stale_after_hours
    from costsched.service.decide import parse_offering

    _, secrets = given(None, secret)
    margin_problem = fraction_problem(margin)  # (NaN and inf too)
    if margin_problem:
        raise InvalidInput(f"--margin {margin:g}: {margin_problem}")
    at_least("--wait", wait, 0.0)
    if to is not None:
        parse_offering(to)  # how to write one, before anything is opened
    store = jobs.open_store(db)
    launcher = jobs.job_launcher(store, job)
    say_no_store(db)
    service.reconcile(store, launcher)
    advice = service.migrate(store, launcher, job, dry_run=dry_run, margin=margin,
                             force=force, to=to, overheads=effective().migration.overheads(),
                             secrets=secrets)
    if advice and not dry_run and wait > 0:
        service.settle(store, launcher, wait)
    armed = jobs._rearm(store, launcher)  # the jobs watched from now on: said last
    if advice and not dry_run and to is not None:  # made, or not, where the move ended
        from costsched.service.jobs.move import landed

        advice = landed(store, advice)
    ages, stale_after = views.price_ages(store, advice), stale_after_hours()
    works = views.assumed_works(store, advice)
    unreported = views.unreported_totals(store, advice)
    if json_out:
        print_json(views.advice_document(advice, ages, works, unreported))
        jobs._print_armed(armed, json_out)
        _exit_held_back(advice, to is not None, dry_run)
        return
    if not advice:
        console.print("No running job to consider.")
    for line in dict.fromkeys(why for a in advice for why in a.left_out):  # each said once
        console.print(printable(f"note: {line}"), highlight=False, markup=False,
                      soft_wrap=True)
    for a in advice:
        for line in _advice_lines(a):
            console.print(printable(line), highlight=False, markup=False, soft_wrap=True)
        old = {k: v for k, v in (ages.get(a.job_id) or {}).items()
               if v is not None and v > stale_after}
        if old:
            clouds = sorted({getattr(a.decision, k)[0] for k in old})  # (each: its offering)
            console.print(printable(
                f"  note: a price compared is {age(max(old.values()) * 3600)} old (more "
                f"than prices.stale_after): {collect_hint(clouds)} brings newer ones"),
                highlight=False, markup=False, soft_wrap=True)
        if a.job_id in works:  # its dollars rest on an assumed hour of work
            console.print(printable(f"  note: {_work_note(a, works[a.job_id])}"),
                          highlight=False, markup=False, soft_wrap=True)
        elif a.job_id in unreported:  # its dollars price all of its steps as left
            console.print(printable(f"  note: {priced_unreported(unreported[a.job_id])}"),
                          highlight=False, markup=False, soft_wrap=True)
    jobs._print_armed(armed, json_out)
    _exit_held_back(advice, to is not None, dry_run)


def _work_note(advice: Any, work: Work) -> str:
    """What its note says of a job's assumed work: where its line said the work is not
    given (its rest not priced: no figures), only what gives the total, once a job."""
    said = " ".join(_advice_lines(advice))
    return work.assumption(figures=NOT_KNOWN not in said)


def _exit_held_back(advice: Any, asked: bool, dry_run: bool) -> None:
    """Exit 2 when a move decided on was not started for want of a secret, or a move
    `asked` for (--to) was held back by the job's limits; 75 when it was because another
    costsched acts on the job, or its offering could not be launched (as `start` exits for
    the same missing secret and a busy store). A dry run and a job that stays: exit 0."""
    if dry_run:
        return
    held = {a.held_back for a in advice} if asked else \
        {a.held_back for a in advice if a.held_back == "secret"}
    if held & {"secret", "limit"}:
        raise typer.Exit(EXIT_BAD_INPUT)
    if held & {"busy", "capacity"}:
        raise typer.Exit(EXIT_TRY_AGAIN)


def _advice_lines(advice: Any) -> list[str]:
    """A job's advice in short lines: why its move was not started first, when it was not
    ("job 5 (x): not moved: ..."), then the decision's reason, one clause a line, led by
    what is done (`_verdict`)."""
    head = f"job {advice.job_id} ({advice.name}): "
    why = advice.not_moved
    said = _clauses(_verdict(advice, advice.decision.reason if why else advice.reason))
    if why:
        return [f"{head}not moved: {why}", *(f"  {c}" for c in said)]
    return [head + said[0], *(f"  {c}" for c in said[1:])]


def _clauses(text: str) -> list[str]:
    """`text` cut at each '; ' outside brackets."""
    out, depth, start = [], 0, 0
    for i, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and text.startswith("; ", i):
            out.append(text[start:i])
            start = i + 2
    return [*out, text[start:]]


def _verdict(advice: Any, reason: str) -> str:
    """The decision's `reason` ("move ...", "stay: ...") led by what is done: "moving",
    "would move" (a dry run, or a move not started) or "staying"."""
    verb = "moving" if advice.started else ("would move" if advice.decision.moves
                                            else "staying")
    for lead in ("move", "stay"):
        if reason.startswith(lead):
            return verb + reason[len(lead):]
    return f"{verb}: {reason}"

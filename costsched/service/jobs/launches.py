"""Launching jobs, and starting a stopped or failed job again."""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from costsched import clouds, launch_secrets, redact
from costsched.frames import OFFERING_KEY
from costsched.jobspec import JobSpec, ResolvedJob
from costsched.lazy import pandas as pd
from costsched.migration.launcher import CloudError, Launcher
from costsched.migration.machine import WAIT_NOTE
from costsched.model import InvalidInput
from costsched.optimize.unmatched_order import passed_over
from costsched.passes import memo, one_pass
from costsched.service.deadline_terms import DEFAULT_DEADLINE_POLICY
from costsched.service.decide import Decision
from costsched.service.estimates import record_landed, record_launch
from costsched.service.glance import MASKED_AT_SOURCE
from costsched.service.jobs.busy import raced
from costsched.service.jobs.carry import CHECKPOINT_SCOPE, launch_stores, readable
from costsched.service.jobs.decider import JobNow, market_at, planned
from costsched.service.jobs.file_jobs import FILE_JOBS, all_of_them, file_jobs
from costsched.service.jobs.first_place import first_placement
from costsched.service.jobs.market import pass_table
from costsched.service.jobs.recovered import START_RESUMES
from costsched.service.jobs.runs import (
    STEP_LEASE_SECONDS,
    RunningJob,
    _open_placement,
    _running,
    job_ids,
    refuse_live_name,
    steps_left,
)
from costsched.service.jobs.start_code import keep_repacked, repacked
from costsched.service.jobs.state_said import STARTABLE, state_said
from costsched.service.jobs.steps import (
    _pack_code,
    _run_move,
    _start_launch,
    check_checkpoint_root,
    resume_from,
    resume_step,
    unsay_waits,
)
from costsched.service.jobs.tried_last import capacity_passed, placed_past, tried_last
from costsched.service.jobs.unready import unlaunched
from costsched.service.jobs.watch import close_ended, close_ended_named, settle
from costsched.service.resolve import resolve
from costsched.service.throughputs import table_with_measured
from costsched.service.values import as_time
from costsched.shown_state import record_ended_short
from costsched.store import PriceStore
from costsched.store.booked import Booking
from costsched.store.decisions import StoredDecision
from costsched.store.jobs import JobRecord
from costsched.store.leases import holder_name
from costsched.store.scope import store_scope
from costsched.taskfile import Jobs
from costsched.taskfile import read_jobs as job_specs
from costsched.throughput import ThroughputTable
from costsched.work import own_total

if TYPE_CHECKING:
    from costsched.optimize.booked import BookedPlans


def launch(store: PriceStore, jobs: Jobs, *, launcher: Launcher, at: datetime | str | None = None,
           offering: str | None = None, wait_seconds: float = 0.0,
           table: ThroughputTable | None = None,
           checkpoint_root: str | None = None,
           deadline_policy: str = DEFAULT_DEADLINE_POLICY,
           envs: Mapping[str, str] | None = None,
           secrets: Mapping[str, str] | None = None,
           book: Callable[[BookedPlans], bool] | None = None) -> list[JobRecord]:
    """Start each job of `jobs` (spec files or JobSpecs) on the best offering the launcher
    can start (or `offering`, as plans name it: 'aws us-east-1a p3.2xlarge spot'), trying the next
    ones of the ranking on a capacity error. A job with a deadline that may use on-demand
    capacity is placed by `deadline_policy` (spot in a zone that has it, or on-demand), now
    and whenever it is re-planned or recovered. `wait_seconds`: how long to wait for the
    instances to run. `envs` and `secrets`: values given at launch for a SkyPilot task's
    envs and secrets (the secrets are never stored: costsched.launch_secrets). Returns
    the stored jobs. `book`: buy the booked capacity in each job's best plan
    (`service.booking`), after its yes (`book(plans)` says it) and before the job is stored;
    the job then runs on it while it can."""
    when = as_time(at)
    launcher.check_ready()  # a backend that cannot be used is said before anything is stored
    launched = []
    # One pass: the prices, rates, spells and throughputs every job is placed from are read
    # once (the launches write none of them), so launching N jobs grows as N, not N squared;
    # a job is planned once (`Market.plan`), its budget check's plan in a pass around it.
    with one_pass():
        table = table if table is not None else pass_table(store)
        read = job_specs(jobs, envs=envs)
        together = file_jobs(read)  # a file's several jobs: its launch runs them all
        for source, spec in read:
            close_ended_named(store, launcher, spec.name, when)  # over, not yet seen so
            refuse_live_name(store, spec.name)
            given = _refused(source, spec, launcher, secrets, checkpoint_root)
            resolved = _resolved(spec, source, table, when, launcher, checkpoint_root)
            code = _pack_code(spec, source)  # refused when too large: nothing stored
            booking, pick = None, offering
            if book is not None:  # bought before the job is stored: a refusal stores none
                from costsched.service.booking import book_for_launch

                booking, pick = book_for_launch(store, launcher, resolved, source, when, book)
                pick = pick or offering
            try:
                policy, decided, candidates = first_placement(
                    store, launcher, resolved, when, pick, deadline_policy, booking)
            except InvalidInput as exc:  # what was bought is held, and said so
                from costsched.service.booking import not_placed

                raise not_placed(store, booking, spec.name, exc, when) from None
            # What a costsched resuming this launch (after a crash) needs to carry it on.
            stored = {"spec": spec.model_dump(mode="json"), "source": source,
                      SOURCE_PATH: _absolute(source),
                      LAUNCHED_WITH: _launched_with(spec, envs, secrets),
                      **({FILE_JOBS: together[spec.name]} if spec.name in together else {}),
                      "launcher": launcher.name, "code": code, "offering": pick,
                      "checkpoint_root": checkpoint_root, MASKED_AT_SOURCE: True,
                      CHECKPOINT_SCOPE: store_scope(store.engine)}
            # its plan's first choice passed over for want of capacity lately, and the
            # alternatives of its order it does not start on, with why
            over = [*_capacity_passed(store, launcher, resolved, when, decided, candidates),
                    *_passed_over(store, launcher, resolved, when, candidates)]
            if over:
                stored[PASSED_OVER] = over
            # Stored with its lease held by this launch: a daemon finds it only to leave it.
            holder = holder_name()
            record_id = store.jobs.create(spec.name, stored, resolved.job.steps, at=when,
                                          policy=policy,  # refused if the name is live
                                          lease=("steps:{id}", holder, STEP_LEASE_SECONDS))
            if booking is not None:
                store.booked.give(booking.token, record_id, at=when)
            launch_secrets.keep(record_id, given)
            with store.leases.holding(f"steps:{record_id}", STEP_LEASE_SECONDS,
                                      holder=holder) as mine:
                if mine:  # else a reconciler resumed it already (it carries it on)
                    _start_launch(store, launcher, store.jobs.get(record_id), when,
                                  candidates, at=None if at is None else when)
                    _keep_why(store, record_id, decided, when)
                    # What its plan predicts, kept beside what it will do.
                    market = market_at(store, when)
                    record_launch(store, record_id, resolved, when, market.rates,
                                  ranked=planned(resolved, market, when).ranked)
            launched.append(record_id)
    if wait_seconds > 0:
        settle(store, launcher, wait_seconds)
    return [store.jobs.get(i) for i in launched]


# The stored job's lines on the `ordered:` alternatives its launch passed over (`launch`
# prints them).
PASSED_OVER = "passed_over"


def _capacity_passed(store: PriceStore, launcher: Launcher, resolved: ResolvedJob,
                     when: datetime, decided: Decision, candidates: list[dict]) -> list[str]:
    """The line of a launch that starts the job past its decision's choice, where a launch
    met no capacity lately (`tried_last`): 'placed on X at $a/h, not on Y at $b/h (the
    plan's first choice): no capacity met 4 min ago on this machine (local launcher): ...';
    [] where it starts on that choice."""
    if not candidates:
        return []
    market = market_at(store, when)
    passed = capacity_passed(planned(resolved, market, when).ranked, tuple(decided.choice),
                             tuple(candidates[0]["key"]), tried_last(market, launcher.name))
    return [] if passed is None else [placed_past(*passed)]


def _passed_over(store: PriceStore, launcher: Launcher, resolved: ResolvedJob,
                 when: datetime, candidates: list[dict]) -> list[str]:
    """A line for each `ordered:` alternative of the job preferred to the one its launch
    starts it on (the first of `candidates`), with why, as `plan` says it
    (`unmatched_order.passed_over`); [] without an order, or where the offering is not
    of the plan's choices (booked capacity)."""
    if not resolved.order or not candidates:
        return []
    plan = planned(resolved, market_at(store, when), when)  # (the launch's own, made once)
    ranked, first = plan.ranked, pd.Series(candidates[0]["key"], index=OFFERING_KEY)
    rank = ranked.loc[(ranked[OFFERING_KEY] == first).all(axis=1) & (ranked["excluded"] == ""),
                      "order_rank"]
    if rank.empty:
        return []
    return [o.line() for o in passed_over(ranked, plan.alternatives, taken=int(rank.iloc[0]),
                                          unlaunched=unlaunched(launcher))]


def refuse_bad_input(jobs: Jobs, launcher: Launcher, *, envs: Mapping[str, str] | None = None,
                     secrets: Mapping[str, str] | None = None,
                     checkpoint_root: str | None = None, stand_in: PriceStore | None = None,
                     offering: str | None = None,
                     deadline_policy: str = DEFAULT_DEADLINE_POLICY) -> None:
    """What `launch` refuses, asked before its store is opened (a refused launch makes
    none): InvalidInput, one line, for a launcher that cannot be used here or a job it
    cannot take whatever the store holds (`_refused`); with `stand_in`, an empty store
    standing for one not made yet, also a job whose work cannot be read or that no offering
    (or not `offering`) can run, as `launch` would find them on a new store."""
    launcher.check_ready()
    specs = job_specs(jobs, envs=envs)
    with one_pass():  # what a launcher asks of this machine (Docker's daemon), asked once
        for source, spec in specs:
            _refused(source, spec, launcher, secrets, checkpoint_root)
    if stand_in is None:
        return
    when = as_time(None)
    table = table_with_measured(stand_in)
    with one_pass():
        for source, spec in specs:
            resolved = _resolved(spec, source, table, when, launcher, checkpoint_root)
            _first_place(stand_in, launcher, resolved, when, offering, deadline_policy)


def refuse_bad_input_at(db: str | None, jobs: Jobs, launcher: Launcher,
                        **options: Any) -> None:
    """`refuse_bad_input` for a launch into the store at `db` (a URL or SQLite path; None:
    the default store), before it is opened: a store not made yet is stood for by an empty
    one in memory, so that what a launch would find wrong on it is found first."""
    from costsched.service.store_files import missing_store

    stand_in = PriceStore("sqlite://") if missing_store(db) is not None else None
    try:
        refuse_bad_input(jobs, launcher, stand_in=stand_in, **options)
    finally:
        if stand_in is not None:
            stand_in.dispose()


def _resolved(spec: JobSpec, source: str, table: ThroughputTable, when: datetime,
              launcher: Launcher, checkpoint_root: str | None) -> ResolvedJob:
    """The job's work read (`resolve`), kept to the clouds that can read its checkpoints:
    once per pass (a launch's budget check and its placement plan the one job)."""
    key = ("launch-resolved", source, spec.model_dump_json(), when, launcher.name,
           checkpoint_root, id(table))
    return memo(key, lambda: _resolve(spec, source, table, when, launcher, checkpoint_root),
                shared=True)


def _resolve(spec: JobSpec, source: str, table: ThroughputTable, when: datetime,
             launcher: Launcher, checkpoint_root: str | None) -> ResolvedJob:
    return readable(resolve(spec, table, when, source=source, launcher=launcher.name),
                    launch_stores(spec.checkpoint.location, checkpoint_root, launcher.name),
                    spec.name)


def launch_resolved(spec: JobSpec, source: str, table: ThroughputTable, when: datetime,
                    launcher: Launcher, checkpoint_root: str | None) -> ResolvedJob:
    """The job as `launch` places it (`_resolved`): what its budget check prices."""
    return _resolved(spec, source, table, when, launcher, checkpoint_root)


def _first_place(store: PriceStore, launcher: Launcher, resolved: ResolvedJob,
                 when: datetime, pick: str | None, deadline_policy: str,
                 booking: Booking | None = None) -> tuple[str, list[dict]]:
    """The policy that decides for a job from its launch on, and the offerings to try
    first (InvalidInput when none can run it)."""
    policy, _, candidates = first_placement(store, launcher, resolved, when, pick,
                                            deadline_policy, booking)
    return policy, candidates


def _keep_why(store: PriceStore, job_id: int, decision: Decision, at: datetime) -> None:
    """Keep a deadline job's placement on on-demand, and why spot was not taken
    (`DeadlineDecision.why`), as its latest decision on the placement it started, so that
    `status` says it as the re-plans' decisions are said; nothing where it started
    elsewhere (a fallback, after a capacity error) or on spot."""
    placed = _open_placement(store, job_id)
    if not getattr(decision, "why", "") or placed is None or tuple(
            placed[k] for k in ("cloud", "region", "zone", "instance_type", "market")) \
            != tuple(decision.choice[:5]):
        return
    store.decisions.record([StoredDecision(job_id, int(placed["id"]), at, LAUNCH_COMMAND,
                                           False, "", decision.choice_usd,
                                           decision.choice_usd, None, decision.reason)])


def _refused(source: str, spec: JobSpec, launcher: Launcher,
             secrets: Mapping[str, str] | None, checkpoint_root: str | None
             ) -> dict[str, str]:
    """InvalidInput (one line naming the file and field) for a job `launcher` cannot take
    whatever the store holds; else the job's secrets given at launch."""
    leaked = sorted(set(spec.envs) & clouds.credential_envs())
    if leaked:
        # (worded so that no word follows the variable's name after a colon: the one rule
        # for secrets, costsched.redact, would take that word for its value)
        raise InvalidInput(f"{source}: job {spec.name!r}: field envs.{leaked[0]} is a "
                           "cloud credential, which is neither stored nor sent to "
                           "instances; instances use their own role (remove it)")
    # every env and secret not given, in one line
    given = launch_secrets.check(spec.task.secrets,  # --secret first, then the file's
                                 {**spec.task.written_secrets, **(secrets or {})}, source,
                                 envs=spec.task.launch_envs)
    if spec.task.needs:  # what the task left to the launch: plan said it
        raise InvalidInput(f"{source}: field {spec.task.needs[0]}")
    unsupported = launcher.cannot_run(spec.task.model_dump())
    if unsupported:
        raise InvalidInput(f"{source}: {unsupported}")
    for mount in spec.task.mounts:  # copied from this machine at each start
        if "://" not in mount.source and not Path(mount.source).exists():
            raise InvalidInput(f"{source}: field file_mounts.{mount.path}: local path "
                               f"{mount.source}: no such file or folder")
    if spec.num_nodes > 1 and not getattr(launcher, "runs_gangs", False):
        raise InvalidInput(f"{source}: field num_nodes: {spec.num_nodes}: the "
                           f"{launcher.name} launcher starts one instance a job; "
                           "multi-node jobs run on the local, aws and gcp launchers")
    check_checkpoint_root(spec, checkpoint_root)  # a root that cannot be used
    if launcher.name == "local":  # its folder on this machine's disk
        from costsched.checkpoint_dirs import refused_location, refused_root
        from costsched.config.env_names import env_name

        if refused := (refused_location(spec, source) or refused_root(
                spec, checkpoint_root, env_name("launch.checkpoint_root"))):
            raise InvalidInput(refused)
    return given


def start(store: PriceStore, launcher: Launcher, job: int | str, *,
          at: datetime | str | None = None,
          secrets: Mapping[str, str | None] | None = None,
          budget: float | None = None, repack: bool = False) -> JobRecord:
    """Start a stopped or failed job again, or one that exited 0 short of its declared
    steps (`work.ended_short`) to do the rest: from its newest verified checkpoint, with
    the spec it was launched with and the code packed at its launch (`repack`: its workdir
    packed again now, its code from then on: `start_code`), on the best offering now (or
    its deadline policy's). The same job: its charges go on, and it is no recovery.
    `secrets`: values for the job's secrets (`--secret`; None: given alone, not set here),
    else this process's environment gives them; refused, the job left as it was, when one
    has neither. They are held as a launch holds them (`launch_secrets.keep`): the
    supervisor this process starts gets them. `budget`: the job's own budget from now on
    (USD): the start is checked against it, and it is kept once the start is not refused."""
    when = as_time(at)
    job_id = job_ids(store, job, states=())[0]
    close_ended(store, launcher, job_id, when)  # ended since the last pass: closed first
    record = store.jobs.get(job_id)
    _given_secrets(record, secrets or {})  # what the command line says, first
    launcher.check_ready()
    short = record_ended_short(record)  # `start` continues it, as a stopped job
    if record.state not in STARTABLE and not short:
        raise InvalidInput(f"job {job_id} ({record.name}) {state_said(record)}: only "
                           "a stopped or failed job, or one that ended short of its steps, "
                           "can be started again; " + (launch_again(record) if record.final
                                                       else f"`costsched status {job_id}` "
                                                       "shows how it stands"))
    if record.state == "failed" and not record.checkpoint_location:
        raise InvalidInput(f"job {job_id} ({record.name}) failed before it was placed "
                           f"(`costsched status {job_id}` says why): nothing to start again; "
                           f"{launch_again(record)}")
    # (One that ended short exited 0 on its last instance: its step says what is left.)
    done = "" if short else _ran_to_its_end(store, launcher, record)
    if done:
        raise InvalidInput(f"job {job_id} ({record.name}) ran to its end: {done}; nothing "
                           f"to start (its final checkpoint is kept); {launch_again(record)}")
    busy = [r for r in store.jobs.find(record.name) if not r.final and r.id != job_id]
    if busy:
        raise InvalidInput(f"job name {record.name!r}: job {busy[0].id} of that name is "
                           f"{busy[0].state}; stop it first")
    run = _running(store, job_id)
    if run.launcher != launcher.name:
        raise InvalidInput(f"job {job_id} ({record.name}) runs with the {run.launcher} "
                           f"launcher, not {launcher.name}")
    _hold_secrets(run.record, secrets or {},  # before anything is changed
                  launch_secrets.start_typed(job if isinstance(job, str) else record.name,
                                             budget, repack))
    cands = _within_budgets(store, launcher, JobNow.of(run, None, steps_left(store, run, when)),
                            when, budget)
    # Packed and stored before anything is changed: a workdir refused leaves the job as it was.
    code = repacked(record, run.checkpoint_uri, str(record.spec.get(SOURCE_PATH) or ""),
                    when) if repack else None
    # A failed job resumes from the newest checkpoint its last instance published.
    saved = _last_checkpoint(store, launcher, run) if record.state == "failed" else None
    if budget is not None:  # kept once the start is not refused
        from costsched.service.jobs.caps import raise_budget

        raise_budget(store, job_id, budget, at=when)
    # Another start of it (or a stop) may have come first: said in the job's words.
    with raced(store, job_id, f"nothing to do here; `costsched status {job_id}` shows how "
               "it stands"):
        store.jobs.transition(job_id, "pending", at=when, expect=record.state,
                              detail="started again by the user" + (
                                  " for the rest of its steps" if short else
                                  " after it failed" if record.state == "failed" else ""))
    unsay_waits(store, [job_id], when)  # said of the run before: a daemon says it anew
    if code is not None:  # its code from now on, its recoveries' and moves' too
        keep_repacked(store, record, code, when)
    # Its step until it reports: its checkpoint's, said with its start ('resumes from
    # step 3,471 ...', `START_RESUMES`).
    said = resume_from(store, run, saved, when)
    # A start, not a recovery: no instance was lost (it counts in neither the job's
    # recoveries nor the preemption figures).
    move = store.moves.create(job_id, "start", cands, at=when,
                              detail=START_RESUMES + (f": {said}" if said else ""))
    _run_move(store, launcher, move, at)
    # A job stopped before any launch of it could be predicted: what its plan predicts
    # where it starts now (a job keeps the first prediction it had).
    record_landed(store, job_id, when, kind="start")
    return store.jobs.get(job_id)


def _last_checkpoint(store: PriceStore, launcher: Launcher, run: RunningJob
                     ) -> float | None:
    """The step a failed job resumes from (`steps.resume_step`): its last instance's
    newest checkpoint's, where the launcher still says; 0 with no checkpoint."""
    placed = store.jobs.placement_rows([run.record.id])
    instance = None
    if placed:
        try:
            instance = launcher.status(str(placed[-1].instance))
        except (InvalidInput, CloudError):  # gone with its instance: its store says
            instance = None
    step = resume_step(instance, run.checkpoint_uri)
    # Not known (a step not said): its step stays until it reports, never the step of a
    # checkpoint an earlier stop kept (newer ones may have come since).
    return run.record.steps_done if step is None else step


# The job file's absolute path, stored beside the path as typed: a hint given later, from
# another folder, names the file so that it can be followed from there.
SOURCE_PATH = "source_path"


def _absolute(source: str) -> str | None:
    """`source` (a job file as typed) as an absolute path; None for a spec in no file."""
    return None if not source or source.startswith("<") else str(Path(source).resolve())


# What the launch was given beside the file, by name: {'envs': [...], 'secrets': [...]}
# (the envs' values are the job's, stored with it; the secrets' never are).
LAUNCHED_WITH = "launched_with"
LAUNCH_COMMAND = "costsched launch"  # who decided a placement kept at launch (`_keep_why`)


def _launched_with(spec: JobSpec, envs: Mapping[str, str] | None,
                   secrets: Mapping[str, str] | None) -> dict[str, list[str]]:
    return {"envs": sorted(n for n in envs or {} if n in spec.envs),
            "secrets": sorted(n for n in secrets or {} if n in spec.task.secrets)}


def job_file(record: JobRecord) -> str | None:
    """The file a job was launched from, as a hint names it: as typed where that names it
    from here, else by its absolute path (a job stored before the path was kept: as
    typed); None for a spec given in no file."""
    stored = record.spec or {}
    source = str(stored.get("source") or "")
    if not source or source.startswith("<"):
        return None
    path = stored.get(SOURCE_PATH)
    return str(path) if path and _absolute(source) != path else source  # typed elsewhere


def launch_again(record: JobRecord) -> str:
    """How a job that has ended runs again: '`costsched launch fail.yaml` (the file it was
    launched from) runs it again as a new job, started afresh', the file as typed where
    that names it from here, else by its absolute path (a job stored before the path was
    kept: as typed), with what its launch was given beside the file (`--env MODE=fast`;
    one named like a secret, and a secret, by name: from the shell, which must set it,
    told why: `_from_shell`).
    A job whose file made several (a sweep's) is told that the file launches them all,
    and how to run it alone (`file_jobs.all_of_them`)."""
    stored = record.spec or {}
    source = job_file(record)
    if source is None:  # a spec given in no file
        return "`costsched launch FILE` with its job file runs it again as a new job, " \
               "started afresh"
    options, envs, secrets = _given_again(stored)
    first = _from_shell(record.id, [n for n in envs if not os.environ.get(n)],
                        [n for n in secrets if not os.environ.get(n)])
    command = (f"`costsched launch {' '.join([shlex.quote(source), *options])}` (the file "
               f"it was launched from{', and what its launch was given' if options else ''})")
    several = all_of_them(record.name, stored.get(FILE_JOBS))
    if several is not None:  # a sweep's job: the file launches all of them
        what, alone = several
        return (f"{command} launches {what} again as new jobs, started afresh{first}, not "
                f"{record.name} alone; {alone}")
    return f"{command} runs it again as a new job, started afresh{first}"


def _from_shell(job_id: int, envs: list[str], secrets: list[str]) -> str:
    """' with HF_TOKEN set in your shell first (...)' for the names a launch again takes
    from the shell, this shell having no value for them, with why for each kind: an env
    named like a secret has its value stored with the job, never printed; a secret's value
    is never stored. '' with none."""
    if not envs and not secrets:
        return ""
    listed = launch_secrets.listed
    one, single = len(envs) == 1, len(secrets) == 1
    stored = (f"stored with job {job_id} but never printed, as "
              f"{'it is named like a secret' if one else 'they are named like secrets'}")
    if not secrets:
        why = f"{'its value is' if one else 'their values are'} {stored}"
    elif not envs:
        why = "a secret's value is never stored" if single else \
            "secrets' values are never stored"
    else:  # never 'NAME: words', which a printed line masks as a secret's value
        why = (f"the value{'' if one else 's'} of {listed(envs)} {'is' if one else 'are'} "
               f"{stored}; {'that' if single else 'those'} of {listed(secrets)}, "
               f"{'a secret' if single else 'secrets'}, {'is' if single else 'are'} never "
               "stored")
    return f" with {listed([*envs, *secrets])} set in your shell first ({why})"


def _given_again(stored: Mapping) -> tuple[list[str], list[str], list[str]]:
    """The options that give a job's launch again what it was given beside its file
    ('--env MODE=fast', '--env WANDB_API_KEY', '--secret HF_TOKEN'), and the names of
    those taken from the shell, envs and secrets apart: an env named like a secret (whose
    value a printed line masks, though stored) and a secret (never stored) are given by
    name alone."""
    given = stored.get(LAUNCHED_WITH) or {}
    values = (stored.get("spec") or {}).get("envs") or {}
    options, envs, secrets = [], [], []
    for name in given.get("envs", []):
        if redact.is_secret_name(name) or name not in values:
            options.append(f"--env {shlex.quote(name)}")
            envs.append(name)
        else:
            options.append(f"--env {shlex.quote(f'{name}={values[name]}')}")
    for name in given.get("secrets", []):
        options.append(f"--secret {shlex.quote(name)}")
        secrets.append(name)
    return options, envs, secrets


def _ran_to_its_end(store: PriceStore, launcher: Launcher, record: JobRecord) -> str:
    """How the job's last instance says it finished its work ('' when it does not): it
    succeeded, or it exited 0 at its last step (a stop that came after its end). Such a
    job is never run again; a launcher that no longer knows the instance says nothing."""
    placed = store.jobs.placement_rows([record.id])
    if not placed:
        return ""
    last = str(placed[-1].instance)
    try:
        instance = launcher.status(last)
    except (InvalidInput, CloudError):  # gone with its instance: nothing to read
        return ""
    if instance.exit_code != 0:
        return ""
    total = own_total(record.spec, record.steps_total)
    reached = max(instance.step or 0, instance.checkpoint_step or 0)
    if total is not None and reached >= total:
        return (f"its last instance ({last}) exited 0 at step {reached:,.0f} of "
                f"{total:,.0f}")
    return f"its last instance ({last}) succeeded" if instance.state == "succeeded" else ""


def _given_secrets(record: JobRecord, given: Mapping[str, str | None]) -> None:
    """InvalidInput for a secret given for the job's start (`--secret`) that the job does
    not name (a close name first), given alone but not set here (None), or given empty."""
    names = list((record.spec["spec"].get("task") or {}).get("secrets", []))
    launch_secrets.check_given(f"job {record.name}", names, given)


def _hold_secrets(record: JobRecord, given: Mapping[str, str | None], typed: str) -> None:
    """Hold the values of the job's secrets for its start (and the supervisor it starts):
    `given` (checked by `_given_secrets`), else this process's environment's; InvalidInput
    for one with no value (and how to give it: the start `typed` again)."""
    names = list((record.spec["spec"].get("task") or {}).get("secrets", []))
    launch_secrets.keep(record.id, {n: v for n, v in given.items() if v})
    lacking = launch_secrets.missing(record.id, names)
    if lacking:
        raise InvalidInput(launch_secrets.start_refusal(record.name, lacking, typed))
    kept = launch_secrets.held_for(record.id)  # given here (checked), else the shell's
    held = launch_secrets.values(record.id, names, record.name)
    launch_secrets.refuse_short_in_env(f"job {record.name}",
                                       {n: v for n, v in held.items() if n not in kept})
    launch_secrets.refuse_short(f"job {record.name}", held)
    launch_secrets.keep(record.id, held)


def _within_budgets(store: PriceStore, launcher: Launcher, job: JobNow, when: datetime,
                    budget: float | None) -> list[dict]:
    """Where a start places the job (`start_check.start_places`): not started when its budget,
    as it stands or as `budget` gives it, leaves too little for its steps left or its cap
    would stop it again at the first watch: one line says which budget, by how much, and
    what gives it enough."""
    from costsched.config import effective
    from costsched.service.jobs.start_check import start_places

    config = effective()
    return start_places(store, launcher, job, when, config.budgets,
                        config.daemon.watch_seconds, budget)


@dataclass(frozen=True)
class NotLaunched:
    """A job a launch (or a start) left without an instance: `failed` (no offering could
    be launched, or `ran`: one was, and the job failed on it; `line` says why and what to
    do), or waiting on a cloud that failed a call (`line`: which and why; its next step, at
    the next pass, asks again)."""

    job_id: int
    name: str
    failed: bool
    line: str
    ran: bool = False  # failed on an instance it was launched on

    def said(self) -> str:
        """'job 1 (name) failed: why' (not launched, not launched yet)."""
        state = ("failed" if self.ran else "not launched" if self.failed
                 else "not launched yet")
        return f"job {self.job_id} ({self.name}) {state}: {self.line}"


def not_launched(store: PriceStore, job_ids: Iterable[int]) -> list[NotLaunched]:
    """Those of `job_ids` (just launched or started) that have no instance, in order."""
    records = store.jobs.records(list(job_ids))
    failed = [r.id for r in records if r.state == "failed"]
    launching = [r.id for r in records if r.state in ("pending", "launching")]
    why = store.jobs.last_details(failed, "state") if failed else {}
    waits = store.jobs.last_details(launching, WAIT_NOTE) if launching else {}
    moves = store.moves.of_jobs([*waits, *why]) if waits or why else {}
    out = []
    for record in records:
        if record.id in why:
            ran = any(m.target_instance for m in moves.get(record.id, ()))
            out.append(NotLaunched(record.id, record.name, True, why[record.id], ran=ran))
        elif record.id in waits and moves[record.id] and not moves[record.id][-1].ended \
                and not moves[record.id][-1].target_instance:
            out.append(NotLaunched(record.id, record.name, False, waits[record.id]))
    return out

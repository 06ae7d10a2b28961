"""Carrying a job's moves out: its launch, migration and recovery moves stepped through the
persisted state machine (`costsched.migration.machine`), under the job's lease."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from costsched import launch_secrets
from costsched.lazy import pandas as pd
from costsched.migration.launcher import Instance, Launcher
from costsched.model import BOOKED_MARKETS, InvalidInput
from costsched.service.jobs.carry import CHECKPOINT_SCOPE, carrier, home_store
from costsched.service.jobs.runs import (
    CANDIDATES,
    STEP_LEASE_SECONDS,
    JobEvent,
    RunningJob,
    _label,
    _placed_offering,
    _progress_of,
    _running,
    trouble,
)
from costsched.service.values import as_time
from costsched.store import PriceStore
from costsched.store.job_rows import EventRow
from costsched.store.jobs import JobRecord, StaleState
from costsched.store.moves import MoveRecord

if TYPE_CHECKING:
    from costsched.jobspec import JobSpec
    from costsched.migration.machine import Mover
    from costsched.service.decide import Decision
    from costsched.service.jobs.checkpoint_seen import Reported

SECRET_NOTE = "secret"  # the job's log: the secret a daemon lacks to carry its move on
# The job's log: what its agent says of its checkpoints' publishing, as it changes
# ("published", or UNPUBLISHED and why: `watch._check_instances`).
CHECKPOINT_NOTE, UNPUBLISHED = "checkpoint", "not published: "
# The job's log: the step a job stood at when a start took it up again (`resume_from`), the
# run before's end: a start that ends short at no step past it went nowhere
# (`JobStatus.start_went_nowhere`); its readings may have seen the run before end sooner.
STOOD_AT_NOTE = "stood_at"


def _start_migration(store: PriceStore, launcher: Launcher, run: RunningJob,
                     choice: Decision, placement: pd.Series, at: datetime | None,
                     fallbacks: bool = True, why: str = "") -> MoveRecord:
    """Start moving the job to `choice` (the caller holds the job's lease, and decided
    under it); when it has no capacity there, try the next best offerings (not with
    `fallbacks` False: a move the user asked for goes there or nowhere), then stay where it
    is. `at`: the time its steps are stamped with (None: the clock's); `why`: the words
    of a move a budget's cap makes, kept with the move (`cap_move.moved_at_cap`)."""
    from costsched.migration.machine import utcnow  # a move's: `status` loads it not

    cands = _migration_candidates(launcher, choice, placement, fallbacks)
    mover = _mover(store, launcher, run, at)  # a secret it lacks: refused, nothing stored
    move = store.moves.create(run.record.id, "migration", cands, at=at or utcnow(),
                              source_instance=str(placement["instance"]),
                              detail=f"to {_label(choice.choice)}"
                              + (f"; {why}" if why else ""))
    return mover.run(move)  # made under the lease: as it is


def _migration_candidates(launcher: Launcher, choice: Decision, placement: pd.Series,
                          fallbacks: bool = True) -> list[dict]:
    """The offerings a migration to `choice` tries, in order: the choice, then (with
    `fallbacks`) the next best the launcher can start, then the source's own offering."""
    from costsched.migration.machine import candidate  # a move's: `status` loads it not

    current = _placed_offering(placement)
    first = candidate(choice.offering, choice.usd_per_hour, choice.reservation)
    if choice.move is not None:  # the move's price as decided, itemised: the report shows it
        first["move"] = choice.move.as_dict()
    if not launcher.can_launch(choice.offering):
        raise InvalidInput(f"offering {_label(choice.choice)}: the {launcher.name} launcher "
                           "cannot start it")
    try:
        rest = [] if not fallbacks else [candidate(o, price) for o, price in
                                         choice.alternatives if launcher.can_launch(o)]
        rest = [c for c in rest if tuple(c["key"]) != current.key]
    except InvalidInput:
        rest = []
    # Last: the source's own offering, so a move that cannot land keeps the job running
    # (not booked capacity: a move off it is made because it ends).
    stay = [] if current.market in BOOKED_MARKETS else [
        candidate(current, float(placement["usd_per_hour"]))]
    return [first, *rest[:CANDIDATES - 2], *stay]


def _run_moves(store: PriceStore, launcher: Launcher,
               moves: Sequence[tuple[RunningJob, MoveRecord]], holder: str,
               at: datetime | None = None) -> list[MoveRecord | StaleState]:
    """Step many moves as far as they go now, together (`machine.run_many`): the caller
    holds their jobs' leases as `holder`; they are renewed as the steps go, and a move
    whose lease was lost meanwhile is left to whoever took it."""
    from costsched.migration.machine import run_many, utcnow  # a move's: `status` loads it not

    def held(job_ids: list[int]) -> set[int]:
        kept = store.leases.renew_many([f"steps:{j}" for j in job_ids], holder,
                                       STEP_LEASE_SECONDS, utcnow())
        return {int(name.split(":", 1)[1]) for name in kept}

    return run_many(store, [(_mover(store, launcher, run, at), move) for run, move in moves],
                    held=held)


def _run_move(store: PriceStore, launcher: Launcher, move: MoveRecord,
              at: datetime | None = None) -> MoveRecord:
    """Step `move` as far as it goes now; left as it is when another costsched is stepping
    this job's moves (it carries on)."""
    with store.leases.holding(f"steps:{move.job_id}", STEP_LEASE_SECONDS) as mine:
        if not mine:
            return move
        return _step_move(store, launcher, move, at)


def _step_move(store: PriceStore, launcher: Launcher, move: MoveRecord,
               at: datetime | None = None) -> MoveRecord:
    """`_run_move` for a caller that holds the job's lease already."""
    move = store.moves.get(move.id)  # as the last holder left it
    if move.ended:
        return move
    return _mover(store, launcher, _running(store, move.job_id), at).run(move)


def _start_launch(store: PriceStore, launcher: Launcher, record: JobRecord, when: datetime,
                  candidates: list[dict] | None = None, at: datetime | None = None) -> None:
    """Carry a pending job without a move to its launch move and step it (under the job's
    lease, held by the caller): check its checkpoint store, then launch. A job that
    cannot start (its checkpoint store, no offering) fails, saying why. `at`: the time
    the launch's step is stamped with where the caller gave one (None: the clock's, as
    the step happens), as its later steps are (`_mover`)."""
    from costsched.jobspec import parse

    stored = record.spec
    spec = parse(stored["spec"], stored.get("source", "<stored spec>"))
    uri = _checkpoint_uri(spec, record.id, stored.get("checkpoint_root"),
                          stored.get(CHECKPOINT_SCOPE) or "")
    try:
        _check_checkpoints(uri)
        _store_code(stored.get("code"), uri)
        if candidates is None:
            run = _running(store, record.id)
            from costsched.service.jobs.decider import JobNow, place  # the policy's

            candidates = place(store, replace(JobNow.of(run, None, run.resolved.job.steps),
                                              offering=stored.get("offering"), first=True),
                               launcher, when)
    except InvalidInput as exc:
        store.jobs.transition(record.id, "failed", at=when, expect="pending",
                              detail=str(exc))
        raise
    store.jobs.record_progress(record.id, 0.0, at=when, checkpoint_location=uri)
    from costsched.vocabulary import counted

    move = store.moves.create(record.id, "launch", candidates, at=when,
                              detail=counted(len(candidates), "candidate offering")
                              + (f"; {candidates[0]['quota_cost']}"
                                 if candidates and candidates[0].get("quota_cost") else ""))
    _step_move(store, launcher, move, at)


def secret_names(run: RunningJob) -> list[str]:
    """The names of the job's secrets (their values are never stored)."""
    return launch_secrets.names_of(run.record.spec)


def waiting_for_secrets(store: PriceStore, moves: Sequence[tuple[RunningJob, str]],
                        at: datetime | None, *, ahead: bool = False
                        ) -> tuple[set[int], list[JobEvent]]:
    """Which of the jobs whose move (of the kind given with each) this process would carry
    on it cannot, for want of a secret's value: they are left as they are, for a process
    that holds it. A daemon says so once per job, in the job's log (SECRET_NOTE, which
    `status` shows under the job) and in a line returned; a job it can carry on again has
    its note cleared. `ahead`: the jobs run, and the move is one that may come (their
    recovery): only a daemon says it (and unsays it), before it is needed."""
    if ahead and not launch_secrets.carrying():
        return set(), []
    # A stopped job's move only winds down: it starts no instance, and needs no secret.
    named = [(run, kind) for run, kind in moves
             if secret_names(run) and run.record.state != "stopped"]
    if not named:
        return set(), []
    said = store.jobs.last_details([run.record.id for run, _ in named], SECRET_NOTE)
    when = at or as_time(None)
    blocked: set[int] = set()
    lines: list[JobEvent] = []
    for run, kind in named:
        job_id = run.record.id
        lacking = launch_secrets.missing(job_id, secret_names(run))
        before = said.get(job_id) or ""
        if not lacking:
            if before:  # carried on from now: it no longer waits
                store.jobs.note(job_id, SECRET_NOTE, "", at=when)
            continue
        blocked.add(job_id)
        # Only a daemon says it (another process leaves the job to one, and writes nothing:
        # `status` shows what its own shell lacks without storing it).
        line = launch_secrets.waits_line(kind, lacking, ahead=ahead) \
            if launch_secrets.carrying() else None
        if line is not None and line != before:
            store.jobs.note(job_id, SECRET_NOTE, line, at=when)
            lines.append(JobEvent(job_id, "secret", line, level="warning",
                                  notify="" if ahead else "failure"))
    return blocked, lines


def unsay_waits(store: PriceStore, job_ids: Sequence[int], at: datetime | None = None
                ) -> None:
    """Clear what a daemon said the jobs `job_ids` wait for (SECRET_NOTE) once it is no
    longer so: a start begins another run, or the daemon was given their secrets. A
    daemon that still lacks one says so again at its next pass."""
    said = store.jobs.last_details(list(job_ids), SECRET_NOTE) if job_ids else {}
    for job_id in [j for j, line in said.items() if line]:
        store.jobs.note(job_id, SECRET_NOTE, "", at=at or as_time(None))


def _resume_launches(store: PriceStore, launcher: Launcher,
                     at: datetime | None) -> list[JobEvent]:
    """Launches a costsched stopped between storing the job and starting its launch move:
    each is carried on by whoever takes the job's lease (free at once when its holder died
    on this host, else when the lease expires)."""
    done = []
    pending = store.jobs.records(states=["pending"])
    if not pending:
        return done
    moved = store.moves.of_jobs([r.id for r in pending])
    for job_id in [r.id for r in pending
                   if r.spec.get("launcher") == launcher.name and not moved[r.id]]:
        with store.leases.holding(f"steps:{job_id}", STEP_LEASE_SECONDS) as mine:
            record = store.jobs.get(job_id)  # as things are now, under the lease
            if not mine or record.state != "pending" or store.moves.of_job(job_id):
                continue
            waiting, said = waiting_for_secrets(store, [(_running(store, job_id), "launch")],
                                                at)
            done += said
            if waiting:
                continue
            try:
                _start_launch(store, launcher, record, at or as_time(None), at=at)
                _landed(store, job_id, at)  # its plan's prediction, kept as at launch
                done.append(JobEvent(job_id, "launch", "interrupted launch resumed"))
            except InvalidInput as exc:
                done.append(JobEvent(job_id, "failed", f"failed: {exc}", notify="failure"))
            except Exception as exc:  # noqa: BLE001 - this job's: the others go on
                done.append(trouble(job_id, exc))
    return done


def _record_step(store: PriceStore, record: JobRecord, step: int | None,
                 at: datetime | None, live: bool = True,
                 step_at: datetime | None = None, setup: float | None = None) -> None:
    """Store the step the job reported, when it is news (`live`: read off an instance
    still running; else its reading's time is not moved on, `JobStore.record_step`), its
    reading timed when the job reported it where its instance says (`reported_at`), with
    how long that instance's setup took, where it says (`setup`)."""
    news = _step_news(record, step, live)
    if news is not None:
        when = at or as_time(None)
        store.jobs.record_steps({record.id: news}, at=when, extend=live,
                                reported=reported_at({record.id: step_at}, when),
                                setups={record.id: setup})


def steps_left_seen(store: PriceStore, run: RunningJob, seen: Reported | None,
                    at: datetime | None) -> float | None:
    """The steps a running job has left as its instance reports its step now (`seen`: read
    for what a move now loses), that step stored as a pass stores it when it is news: what
    a decision prices, its lost work and the note of a job that has reported no step
    (`views.unreported_totals`, read from the store) stand on one step. Without a report,
    its stored step's."""
    step = run.record.steps_done
    if seen is not None:
        _record_step(store, run.record, int(seen.step), at, step_at=seen.step_at,
                     setup=seen.setup_seconds)
        step = _step_news(run.record, int(seen.step)) or step
    return _progress_of(run, step)[0]


def reported_at(said: Mapping[int, datetime | None], when: datetime) -> dict[int, datetime]:
    """When each job reported the step its instance says (`Instance.step_at`, by job id),
    at most `when` (an instance's clock ahead of ours); those whose instance does not say
    are left out (their readings are timed `when`, as read). A step paired with the time
    it was read, seconds after it was written, would pace the steps before it in less time
    than they took."""
    return {job: min(at, when) for job, at in said.items() if at is not None}


def _step_news(record: JobRecord, step: int | None, live: bool = True) -> float | None:
    """The step to store from the job's report (None: no report, or nothing new). Step 0
    is stored once its instance has ended (not `live`) with no step stored before: a job
    that reported 0 and exited did report (it ended short of its steps, never "done"),
    while one that sits at 0 as it starts is stored nothing each pass."""
    if step is None or step < 0 or (step == 0 and (live or record.steps_done > 0)):
        return None
    if step == 0:
        return 0.0
    # As reported, past its declared total too: work done is never hidden (its share done
    # is at most all of it: `JobStatus.progress`; its rest none: `runs._progress_of`).
    step = float(step)
    return step if step != record.steps_done else None


def _mover(store: PriceStore, launcher: Launcher, run: RunningJob,
           at: datetime | None = None) -> Mover:
    """What steps the job's moves: its launch, from its stored spec (which never changes)."""
    from costsched.migration.machine import JobLaunch, Mover, utcnow
    from costsched.optimize import checkpoint_interval  # a move's: `status` loads it not

    spec = run.resolved
    code = run.record.spec.get("code") or {}
    task = run.record.spec["spec"].get("task") or {}
    # A stopped job's mover only winds its move down (`Mover.step`): no instance, no secret.
    secrets = {} if run.record.state == "stopped" else \
        launch_secrets.values(run.record.id, task.get("secrets", []), run.record.name)
    kept = spec.job.constraints  # the zones it keeps to, its alternatives' too
    zones = tuple(dict.fromkeys([*kept.zones, *(z for a in kept.alternatives for z in a.zones)]))
    job = JobLaunch(run.record.id, run.record.name, spec.job.run, run.checkpoint_uri,
                    {**spec.envs, **checkpoint_interval.launch_env(
                        spec.checkpoint_hours * 60, spec.checkpoint_auto), **secrets},
                    code_uri=_code_uri(run.checkpoint_uri, code),
                    code_sha256=code.get("sha256", ""), code_size=int(code.get("size", 0)),
                    setup=run.record.spec["spec"].get("setup", ""), task=task,
                    secret_names=tuple(secrets),
                    max_usd_per_hour=spec.job.constraints.max_price_per_hour, zones=zones)
    from costsched.service.jobs.moved import note_moved
    from launchers import observed_as, runs_here

    exact = runs_here(run.launcher)  # its progress file outlives it: its last step known
    return Mover(store, launcher, job, _newest_checkpoint,
                 (lambda: at) if at is not None else utcnow, carrier(store, launcher, run),
                 observed_as=observed_as(launcher.name),
                 stopped=lambda to, source, version, when: note_moved(
                     to, run.record.id, source, version, exact, when, run.record.steps_done))


def resume_from(store: PriceStore, run: RunningJob, saved: float | None,
                at: datetime, inferred: bool = False, *, silent: bool = False,
                ran: bool | None = False, version: int | None = None) -> str:
    """Store, as the step the job stands at until it reports one again, the step its next
    instance resumes from (a recovery's, a start's): its newest checkpoint's. `saved`: that
    step as the instance it resumes after reported it (`Instance.checkpoint_step`), else
    the one stored at its stop; with neither, 0 when its checkpoint store holds no verified
    checkpoint (it starts over), else not known: the step stays. The words for the steps
    lost ('resumes from step 300, its checkpoint's: 94 steps lost'; 'no step lost' after a
    checkpoint at its last step, as at a notice, or before its first step); '' when the
    step it resumes from is not known.
    Lost is counted from the last step read: exact for an instance on this machine (its
    progress file outlives it, `LocalLauncher.status`), a floor for a cloud's ('at least
    94 steps lost (since its last reading at step 394)'). `inferred`: `saved` was read off
    the time its checkpoint was saved (`Instance.checkpoint_step_inferred`): said 'about'.
    `silent`: the instance reported no step in its run; where the job reported none before
    either (its step stands at 0):
    a checkpoint whose step is not known is named by its version, never said to be at a
    step; with none, the work its command did is said lost, by how much not known, where
    it ran or whether it ran is not known (`ran`: `Instance.ran`; `may_have_run`)
    (`resumed_words.unknown_step_words`, `nothing_saved_words`); where it did, and the
    checkpoint is still the one it stood at (the one the instance restored), the words of
    an instance lost before it reported a step (`resumed_words.unreported_words`).
    `version`: the checkpoint version `saved` is the step of (`Instance.checkpoint_version`);
    where the store holds a newer one (published as the instance was lost, before it said
    its step), that version's step as kept with it, or its version with its step not known
    (`restored_step`, `resumed_words.unsaid_step_words`)."""
    from costsched.service.jobs.restored_step import restored_step
    from costsched.service.jobs.resumed_words import (
        may_have_run,
        nothing_saved_words,
        resumed_words,
        resumes_from_checkpoint,
        unknown_step_words,
        unreported_words,
        unsaid_step_words,
    )
    from launchers import runs_here

    record = store.jobs.get(run.record.id)
    unreported = silent and record.steps_done > 0  # none in this run, some before it
    silent = silent and record.steps_done == 0
    if record.state == "pending" and record.steps_done > 0:  # a start's: where it ended
        store.jobs.note(record.id, STOOD_AT_NOTE, f"{record.steps_done:g}", at=at)
    if saved is not None and version is not None:  # of the version restored, or an older one
        said = float(saved)
        saved, inferred, restored = restored_step(run.checkpoint_uri, version, said, inferred)
        if saved is None and restored is not None:
            return unsaid_step_words(restored, version, said)
    saved = record.checkpoint_step if saved is None else float(saved)
    newest, none = None, False
    if saved is None:
        try:
            newest = _newest_checkpoint(run.checkpoint_uri)
            saved, none = (None, False) if newest is not None else (0.0, True)
        except Exception:  # noqa: BLE001 - a store it cannot read now: the step stays
            saved = None
    if saved is None:
        return unknown_step_words(newest) if silent and newest is not None else ""
    if silent and none and may_have_run(ran):
        return nothing_saved_words() + _unpublished(store, record.id)
    saved = max(saved, 0.0)
    if unreported and saved == record.steps_done:
        # lost before it reported a step, its checkpoint the one the job stood at (the one
        # it restored): what its command did there is lost where it ran, never 'no step lost'
        return unreported_words(saved, ran)
    if record.steps_done > saved:  # (at its checkpoint's step: said all the same)
        # No placement is open (the lost one ended, the next not begun): no reading is
        # kept, and no progress record, which a measured speed would read.
        store.jobs.record_steps({record.id: saved}, at=at, extend=False)
    words = resumed_words(saved, record.steps_done, runs_here(run.launcher), inferred)
    if record.steps_done > saved and not resumes_from_checkpoint(saved):  # all of it lost
        words += _unpublished(store, record.id)
    return words


def _unpublished(store: PriceStore, job_id: int) -> str:
    """Why the job's checkpoints were not published, as its agent last said it (a
    recovery from the start then says so, with the fix), else ''."""
    from launchers.settle_words import cause

    said = store.jobs.last_details([job_id], CHECKPOINT_NOTE).get(job_id, "")
    if not said.startswith(UNPUBLISHED):
        return ""
    return f"; nothing was published: {cause(said.removeprefix(UNPUBLISHED))}"


def stood_at_of(notes: Iterable[EventRow]) -> dict[int, float]:
    """The step each job stood at when a start took it up last (its newest STOOD_AT_NOTE
    among `notes`, oldest first), by job id; a note that says no step is left out."""
    found: dict[int, float] = {}
    for note in notes:
        if note.kind == STOOD_AT_NOTE:
            try:
                found[note.job_id] = float(note.detail or "")
            except ValueError:
                continue
    return found


def resume_step(instance: Instance | None, checkpoint_uri: str) -> float | None:
    """The step a job resumes from after `instance` (its last, ended: a failed job's) when
    it is started again: the step of the newest checkpoint that instance published, where
    its launcher says; 0 when its checkpoint store holds no verified checkpoint (it starts
    over); None when neither is known (a store it cannot read now, a step not said)."""
    if instance is not None and instance.checkpoint_step is not None:
        return float(max(instance.checkpoint_step, 0))
    if not checkpoint_uri:
        return None
    try:
        return 0.0 if _newest_checkpoint(checkpoint_uri) is None else None
    except Exception:  # noqa: BLE001 - a store it cannot read now: not known
        return None


def _newest_checkpoint(uri: str) -> int | None:
    from launchers.checkpoints import open_store

    newest = open_store(uri).newest_verified()
    return None if newest is None else newest.version


def _pack_code(spec: JobSpec, source: str) -> dict | None:
    """The job's workdir packed once at launch (None without one): every instance of the
    job, recoveries and moves included, runs this code; its file (`source`), when it is in
    the workdir, without the secrets' values it writes; and without any file that holds
    the value of an env named like a secret's (its file's or one given with --env)."""
    from costsched.skypilot_emit import secret_like_envs
    from launchers.codepack import pack_workdir

    return pack_workdir(spec.workdir, f"{source}: job {spec.name!r}", source,
                        list(spec.task.written_secrets.values()),
                        known=[spec.envs[n] for n in secret_like_envs(spec)])


def _store_code(code: dict | None, checkpoint_uri: str) -> None:
    if code is not None:
        from launchers.codepack import store_code

        store_code(code, checkpoint_uri)


def _code_uri(checkpoint_uri: str, code: dict) -> str:
    if not code:
        return ""
    from launchers.codepack import archive_uri

    return archive_uri(checkpoint_uri, code["sha256"])


def _check_checkpoints(uri: str) -> None:
    """Fail now, in one line, when the job's checkpoint store cannot be used (its name,
    the bucket, the credentials or the network: whatever the store's client raises)."""
    from costsched.clouds.base import SdkMissing
    from launchers.checkpoints import open_store

    try:
        store = open_store(uri)
        store.check()
    except InvalidInput:
        raise
    except SdkMissing as exc:  # its own line says what to install
        raise InvalidInput(f"checkpoint location {uri}: {exc}") from None
    except Exception as exc:  # noqa: BLE001 - any client's error, said in one line
        why = (str(exc).strip().splitlines() or [""])[0][:300]
        raise InvalidInput(f"checkpoint location {uri}: cannot be used ({type(exc).__name__}"
                           f"{': ' + why if why else ''}); `costsched check` tests the "
                           "cloud's credentials") from None


def check_checkpoint_root(spec: JobSpec, root: str | None) -> None:
    """Before a job is stored: fail in one line when the bucket its checkpoints go to
    cannot be used (a folder is made when the job starts)."""
    base = (spec.checkpoint.location or root or "").rstrip("/")
    if "://" not in base or base.startswith("file://"):
        return
    probe = f"{base}/job-0"  # a folder no job has: listing it reads nothing
    try:
        _check_checkpoints(probe)
    except InvalidInput as exc:
        raise InvalidInput(str(exc).replace(probe, base)) from None


def _checkpoint_uri(spec: JobSpec, job_id: int, root: str | None, scope: str) -> str:
    return home_store(spec.checkpoint.location, job_id, root, scope)


def _landed(store: PriceStore, job_id: int, at: datetime | None) -> None:
    """`estimates.record_landed`: the planner it asks loads when a launch lands, not for
    every pass."""
    from costsched.service.estimates import record_landed

    record_landed(store, job_id, at)

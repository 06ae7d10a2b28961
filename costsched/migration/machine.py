"""The job-move state machine, persisted in the job store so that a crash at any step
resumes where it was (`Mover.step` is idempotent in every state).

    planned -> checkpointing -> checkpoint_verified -> target_launched -> target_running
            -> source_terminated -> done

A launch, a recovery or a start has no source to checkpoint: planned -> checkpoint_verified.
Before a target is launched on another cloud than the job's checkpoint store, its
checkpoint is carried into that cloud's store (`Mover.carry`, part of checkpoint_verified ->
target_launched: done once, so a step taken again after a crash launches at once). Failure
edges: the source is preempted or fails while checkpointing -> checkpoint_verified with the
newest verified checkpoint; the job finishes while checkpointing -> cancelled (the move;
the job succeeded); a target that cannot be launched (capacity) or dies before it runs ->
terminated, and the next candidate offering is tried (a migration's last candidate is the
source's own offering: the job stays where it was), as it is when the checkpoint cannot be
carried to the target's cloud; no candidate left -> failed. A launch the cloud fails for
another reason (`CloudError`: the network, throttling, a 5xx, a permission) tries the next
candidate the same error does not refuse (a permission: another cloud's), after looking for
what the launch may have made by its attempt tag (adopted); when that cannot be looked at
and the create may have been carried out, the move waits for its next step. Any other call
a step makes that the cloud fails leaves the move as it is, to be stepped again at the next
pass (the reason in the job's log, said once).

Safety: the source is terminated only once the target runs from the verified checkpoint;
a failed target is terminated before the next one is launched, so a job never has more
than two instances; every launch carries a per-store, per-move, per-candidate attempt
tag, so a costsched that crashed after asking for an instance adopts it instead of
launching again, and only ever adopts or ends its own store's instances (`_ours`: another
store on the same account numbers its jobs and moves alike).

A stop wins over a move in every state: once the job is recorded as stopped, the next
step of its move (whoever takes it, whenever) winds the move down instead: every live
instance of the job is terminated (those the move launched or was launching included),
every placement ends, and the move is cancelled. A launch that returns after the job was
stopped is ended at once, and so is one whose step lost a race with the stop.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from costsched.migration.launcher import (
    CapacityError,
    CarryError,
    CloudError,
    Instance,
    Launcher,
    LaunchSpec,
    QuotaError,
)
from costsched.migration.owned import owned
from costsched.migration.quotas import next_fitting
from costsched.migration.quotas import refused as quota_refused
from costsched.model import BILLED_FROM_RUNNING, FINAL_STATES, InvalidInput, Offering
from costsched.store import PriceStore
from costsched.store.batch import BATCH_STEPS, Batch
from costsched.store.jobs import StaleState
from costsched.store.moves import MoveRecord
from costsched.store.scope import parse_attempt
from costsched.vocabulary import offering_label

# The job's state while a move of each kind is under way.
JOB_STATE = {"launch": "launching", "migration": "migrating", "recovery": "recovering",
             "start": "launching"}
RENEW_SECONDS = 60.0  # `run_many` renews the jobs' leases at least this often
RETRIES = 3  # a step left out of a batch's writes this often is left for the next pass
STOP_TIMEOUT = timedelta(minutes=10)  # a source that does not checkpoint by then is ended
WAIT_NOTE = "cloud"  # the job's log: why its move waits on a cloud


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


@dataclass(frozen=True)
class JobLaunch:
    """What every instance of a job is started with (from the job's stored spec)."""

    job_id: int
    name: str
    command: str
    checkpoint_uri: str
    envs: dict[str, str]
    code_uri: str = ""  # the job's code archive (launchers.codepack), with its SHA-256 and size
    code_sha256: str = ""
    code_size: int = 0
    setup: str = ""
    task: Mapping[str, Any] = field(default_factory=dict)  # LaunchSpec.task
    secret_names: tuple[str, ...] = ()
    max_usd_per_hour: float | None = None  # LaunchSpec.max_usd_per_hour
    zones: tuple[str, ...] = ()  # LaunchSpec.zones


class Mover:
    """Drives moves one step at a time. `newest_checkpoint(uri)` is the newest verified
    checkpoint version in a job's checkpoint store (None when there is none). `carry(job,
    offering)`, asked before each launch: the job as launched on that offering, its
    checkpoints carried first into that cloud's store when they are in another cloud's
    (idempotent; CarryError when they cannot be: the next candidate is tried).
    `observed_as`: the source what its launches meet is stored with (`launchers.observed_as`:
    the local launcher's instances stand in for a cloud's and meet no cloud's market).
    `stopped(store, source, version, at)`: told of a migration's source instance once it
    has stopped (or is gone), with the newest checkpoint version the move resumes from."""

    def __init__(self, store: PriceStore, launcher: Launcher, job: JobLaunch,
                 newest_checkpoint: Callable[[str], int | None],
                 clock: Callable[[], datetime] = utcnow,
                 carry: Callable[[JobLaunch, Offering], JobLaunch] | None = None,
                 observed_as: str = "",
                 stopped: Callable[[Any, Instance, int | None, datetime], None] | None = None
                 ) -> None:
        self.store, self.launcher, self.job = store, launcher, job
        self.newest_checkpoint = newest_checkpoint
        self.clock = clock
        self.carry = carry
        self._observed_as = observed_as
        self._source_stopped = stopped

    def bound(self, store: Any) -> Mover:
        """This mover writing to `store` (a batch's stores, `run_many`)."""
        twin = copy.copy(self)
        twin.store = store
        return twin

    def run(self, move: MoveRecord) -> MoveRecord:
        """Step until the move ends or has to wait for an instance."""
        while not move.ended:
            after = self.step(move)
            if after.state == move.state and after.tried == move.tried:
                return after  # waiting on an instance
            move = after
        return move

    def step(self, move: MoveRecord) -> MoveRecord:
        """One transition of `move` (or none when it waits on an instance); a move of a job
        that was stopped is wound down instead (`wind_down`)."""
        state = self.store.jobs.state(self.job.job_id)
        if state == "stopped":
            return self.wind_down(move)
        try:
            return self._transition(move, state)
        except StaleState:
            # Another writer changed the job or the move under this step: a stop, when the
            # job is stopped now (whatever this step launched is ended); else re-raised.
            if not self._stopped():
                raise
            return self.wind_down(self.store.moves.get(move.id))
        except CloudError as exc:
            # The cloud could not be asked (a launch's own failures are acted on where it
            # is made): the move waits as it is, and its next step (the next pass) asks
            # again; a migration that could not ask its source to stop is given up.
            if move.state == "planned" and move.kind == "migration" and not exc.transient:
                return self._not_moved(move, exc)
            self._waits(move, f"{exc}; asked again at the next pass")
            return move

    def wind_down(self, move: MoveRecord) -> MoveRecord:
        """The job was stopped: terminate every live instance of it this store launched
        (the move's source and target, and any its launches left unrecorded), end every
        placement, and cancel the move (unless it ended already). Idempotent."""
        now = self.clock()
        ids = {i.id for i in self._ours()}
        for instance_id in sorted(ids | {move.source_instance, move.target_instance} - {""}):
            try:
                self.launcher.terminate(instance_id)
            except InvalidInput:
                continue  # an instance the backend never knew (it was never started)
        while self.store.jobs.end_placement(self.job.job_id, now) is not None:
            pass
        if move.ended:
            return move
        try:
            return self.store.moves.advance(move, "cancelled", at=now,
                                            detail=f"the job was stopped ({move.state})")
        except StaleState:  # the stop (or another costsched) cancelled it meanwhile
            return self.store.moves.get(move.id)

    def _stopped(self) -> bool:
        return self.store.jobs.state(self.job.job_id) == "stopped"

    def _transition(self, move: MoveRecord, job_state: str) -> MoveRecord:
        """The step of `move`'s state; `job_state`: the job's, as the step just read it
        (a planned move moves the job on from it: a stop since fails its write)."""
        if move.state == "planned":
            return self._planned(move, job_state)
        handler = {
            "checkpointing": self._checkpointing,
            "checkpoint_verified": self._launch_target, "target_launched": self._target_launched,
            "target_running": self._target_running, "source_terminated": self._finish,
        }[move.state]
        return handler(move)

    # --- states -----------------------------------------------------------------------

    def _planned(self, move: MoveRecord, job_state: str) -> MoveRecord:
        now = self.clock()
        self._job_state(JOB_STATE[move.kind], now, f"move {move.id} ({move.kind})",
                        current=job_state)
        if move.kind == "migration" and move.source_instance:
            self.launcher.request_stop(move.source_instance)
            return self.store.moves.advance(move, "checkpointing", at=now,
                                            detail="asked the source to checkpoint and stop")
        return self._verified(move, now)

    def _checkpointing(self, move: MoveRecord) -> MoveRecord:
        now = self.clock()
        source = self.launcher.status(move.source_instance)
        if source.state == "succeeded":  # finished before it could stop: nothing to move
            self.launcher.terminate(source.id)
            self._end_job("succeeded", now, "finished while checkpointing for a move")
            return self.store.moves.advance(move, "cancelled", at=now,
                                            detail="the job finished on the source")
        if source.state in ("pending", "running"):
            if now - move.updated_at < STOP_TIMEOUT:
                return move  # still writing its checkpoint
            self.launcher.terminate(source.id)  # did not stop in time: end it
        elif source.state != "stopped":  # gone (preempted, failed): no longer billed
            self.store.jobs.end_placement(self.job.job_id, now, instance=source.id)
        return self._verified(move, now, source)

    def _verified(self, move: MoveRecord, now: datetime,
                  source: Instance | None = None) -> MoveRecord:
        version = self.newest_checkpoint(self.job.checkpoint_uri)
        where = f"checkpoint version {version}" if version else "no checkpoint: from the start"
        verified = self.store.moves.advance(move, "checkpoint_verified", at=now, detail=where,
                                            checkpoint_version=version)
        if source is not None and self._source_stopped is not None:
            self._source_stopped(self.store, source, version, now)
        return verified

    def _launch_target(self, move: MoveRecord) -> MoveRecord:
        now = self.clock()
        candidate = move.candidate
        if candidate is None:
            self._end_job("failed", now, "no offering could be launched")
            return self.store.moves.advance(move, "failed", at=now,
                                            detail="every candidate offering failed")
        offering = offering_of(candidate)
        try:
            adopted = [i for i in self._ours() if i.attempt == move.attempt]
        except CloudError as exc:  # nothing was asked for: the next offering is tried
            return self._cannot_launch(move, offering, exc, now, look=False)
        job = self.job
        try:
            if not adopted and self.carry is not None:
                job = self.carry(self.job, offering)
        except CarryError as exc:  # the job stays where its checkpoints are: next candidate
            return self.store.moves.advance(move, "checkpoint_verified", at=now,
                                            detail=f"cannot launch: {exc}",
                                            tried=move.tried + 1)
        try:
            instance = adopted[0] if adopted else self.launcher.launch(LaunchSpec(
                job_id=self.job.job_id, job_name=self.job.name, command=self.job.command,
                offering=offering, checkpoint_uri=job.checkpoint_uri,
                attempt=move.attempt, envs=self.job.envs, code_uri=job.code_uri,
                code_sha256=self.job.code_sha256, code_size=self.job.code_size,
                setup=self.job.setup, task=self.job.task,
                secret_names=self.job.secret_names,
                max_usd_per_hour=self.job.max_usd_per_hour,
                reservation=str(candidate.get("reservation", "")), zones=self.job.zones))
        except QuotaError as exc:
            # The account's quota, not the cloud's capacity: recorded against the quota (the
            # next decision knows it), and the candidates under the same quota skipped.
            said = quota_refused(self.store.quotas, exc, now)
            following = [offering_of(c) for c in move.candidates]
            # A migration's last candidate is where it runs: tried whatever its quota.
            keep = len(following) - 1 if move.kind == "migration" else None
            tried = next_fitting(following, move.tried, exc, keep=keep)
            said = f"{_where(offering)}: {said}"
            if tried >= len(following):  # nothing left: the job's failure names the quota
                self._end_job("failed", now, f"no offering could be launched; {said}")
                return self.store.moves.advance(move, "failed", at=now, tried=tried,
                                                detail=f"cannot launch: {said}")
            return self.store.moves.advance(move, "checkpoint_verified", at=now,
                                            detail=f"cannot launch: {said}", tried=tried)
        except CapacityError as exc:
            self.store.availability.record(offering, "capacity", at=now, detail=exc.reason,
                                           source=self._observed_as)
            return self.store.moves.advance(move, "checkpoint_verified", at=now,
                                            detail=f"cannot launch: {exc}", tried=move.tried + 1)
        except CloudError as exc:
            return self._cannot_launch(move, offering, exc, now)
        except (InvalidInput, OSError) as exc:
            # The job itself cannot be started (its command, its environment): no other
            # offering would do better. Nothing runs or is billed; the job fails, saying why.
            for stray in self._ours():
                if stray.attempt == move.attempt:
                    self.launcher.terminate(stray.id)
            self._end_job("failed", now, f"cannot start the job: {exc}")
            return self.store.moves.advance(move, "failed", at=now,
                                            detail=f"cannot start the job: {exc}")
        return self._launched(move, offering, instance, now)

    def _launched(self, move: MoveRecord, offering: Offering, instance: Instance,
                  now: datetime) -> MoveRecord:
        """The move's target `instance` (launched, or adopted) placed: billed from now, or
        from when it runs where the cloud bills from then (a flex-start VM waits for
        capacity first: `_target_launched`); a migration's source stays placed (and billed)
        until it ends."""
        if self._stopped():  # stopped while the launch call ran: end what it started
            self.launcher.terminate(instance.id)
            return self.wind_down(move)
        reason = "launch" if move.kind == "launch" else move.kind
        # The candidate's price: one instance's, a gang's too (`costsched.costs`: a charge
        # counts its N nodes).
        self.store.jobs.place(self.job.job_id, offering.key, gpu_model=offering.gpu_model,
                              gpu_count=offering.gpu_count, at=now,
                              usd_per_hour=float(move.candidate["usd_per_hour"]),
                              reason=reason, instance=instance.id,
                              keep_open=bool(move.source_instance),
                              waiting=offering.market in BILLED_FROM_RUNNING)
        return self.store.moves.advance(move, "target_launched", at=now,
                                        detail=f"instance {instance.id}",
                                        target_instance=instance.id)

    def _cannot_launch(self, move: MoveRecord, offering: Offering, exc: CloudError,
                       now: datetime, look: bool = True) -> MoveRecord:
        """A launch the cloud failed for another reason than capacity (`exc`). What the
        move's launches may have made is looked for by their attempt tags first (unless
        `look` is False: the look itself failed): this attempt's is adopted, an earlier
        candidate's ended. When the cloud cannot be looked at and the create may have
        been carried out, the move waits (its next step asks again, with the same attempt:
        a job never runs twice). Else the offerings the same error refuses are skipped (a
        permission: every one of the cloud's), and with none left the job fails, saying
        why and what to do."""
        made: list[Instance] = []
        if look:
            try:
                made = self._made_by(move)
            except CloudError as again:
                if exc.sent:
                    self._waits(move, f"cannot launch: {exc}; cannot tell whether it "
                                f"started an instance ({again.cause}): asked again at the "
                                "next pass")
                    return move
        for found in made:
            if found.attempt == move.attempt:
                return self._launched(move, offering, found, now)
            self.launcher.terminate(found.id)  # an earlier candidate's, seen late
        following = [offering_of(c) for c in move.candidates]
        tried = next((i for i in range(move.tried + 1, len(following))
                      if not exc.refuses(offering, following[i])), len(following))
        said = f"cannot launch: {exc}"
        if tried >= len(following):
            self._end_job("failed", now, f"no offering could be launched; {exc}")
            return self.store.moves.advance(move, "failed", at=now, tried=tried, detail=said)
        return self.store.moves.advance(move, "checkpoint_verified", at=now, detail=said,
                                        tried=tried)

    def _made_by(self, move: MoveRecord) -> list[Instance]:
        """The live instances the move's launches were tagged with (any candidate's)."""
        return [i for i in self._ours()
                if getattr(parse_attempt(i.attempt), "move_id", None) == move.id]

    def _ours(self) -> list[Instance]:
        """The live instances of the job this store launched (`costsched.store.scope.ours`):
        another store using the same account numbers its jobs and moves alike, and what it
        launched is never adopted or ended here."""
        return owned(self.store.moves, self.job.job_id,
                     self.launcher.instances(self.job.job_id))

    def _waits(self, move: MoveRecord, line: str) -> None:
        """Say in the job's log why its move waits (once while it says the same)."""
        said = self.store.jobs.last_details([move.job_id], WAIT_NOTE).get(move.job_id)
        if said != line:
            self.store.jobs.note(move.job_id, WAIT_NOTE, line, at=self.clock())

    def _not_moved(self, move: MoveRecord, exc: CloudError) -> MoveRecord:
        """A migration whose source could not be asked to stop: the job stays where it
        runs, and the move is cancelled, saying why."""
        now = self.clock()
        self._job_state("running", now, f"move {move.id} ({move.kind}) not made: {exc}")
        return self.store.moves.advance(move, "cancelled", at=now,
                                        detail=f"cannot ask the source to stop: {exc}")

    def _target_launched(self, move: MoveRecord) -> MoveRecord:
        now = self.clock()
        target = self.launcher.status(move.target_instance)
        if target.state == "pending":
            return move
        # Its command ran: it runs, or it exited by itself (0 or not, with its exit code: a
        # command that fails fails on every offering, and the watch closes it as failed or
        # restarts it). One failed with no exit code never ran (its agent never started).
        if target.state in ("running", "succeeded") or (
                target.state == "failed" and target.exit_code is not None):
            offering = offering_of(move.candidate)
            if offering.market in BILLED_FROM_RUNNING:  # charged from when it began running
                started = min(max(target.started_at or now, move.updated_at), now)
                self.store.jobs.runs(self.job.job_id, target.id, started)
            self.store.availability.record(offering, "launched", at=now,
                                           detail=f"instance {target.id}",
                                           source=self._observed_as)
            return self.store.moves.advance(move, "target_running", at=now,
                                            detail=f"instance {target.id} {target.state}")
        # Died before it ran: end it, and try the next candidate from the same checkpoint.
        if target.state == "preempted" and move.candidate is not None:
            self.store.availability.record(offering_of(move.candidate), "preempted", at=now,
                                           detail=f"instance {target.id} before it ran",
                                           source=self._observed_as)
        self.launcher.terminate(target.id)
        self.store.jobs.end_placement(self.job.job_id, now, instance=target.id)
        return self.store.moves.advance(move, "checkpoint_verified", at=now,
                                        detail=f"instance {target.id} {_why(target)}",
                                        tried=move.tried + 1, target_instance="")

    def _target_running(self, move: MoveRecord) -> MoveRecord:
        now = self.clock()
        if move.tried:  # an earlier candidate's launch that answered late ends now
            for stray in self._made_by(move):
                if stray.id != move.target_instance:
                    self.launcher.terminate(stray.id)
        if move.source_instance and move.source_instance != move.target_instance:
            self.launcher.terminate(move.source_instance)
            self.store.jobs.end_placement(self.job.job_id, now, instance=move.source_instance)
        return self.store.moves.advance(move, "source_terminated", at=now,
                                        detail="source ended" if move.source_instance
                                        else "no source")

    def _finish(self, move: MoveRecord) -> MoveRecord:
        now = self.clock()
        self._job_state("running", now, f"move {move.id} ({move.kind}) done")
        done = self.store.moves.advance(move, "done", at=now)
        if self._stopped():  # stopped while it finished: nothing of it outlives the stop
            return self.wind_down(done)
        return done

    # --- job state ----------------------------------------------------------------------

    def _job_state(self, state: str, at: datetime, detail: str,
                   current: str | None = None) -> None:
        """The job moved on to `state` from `current` (read here when not given; a write
        from a state since changed fails: `StaleState`), unless it is there or ended."""
        if current is None:
            current = self.store.jobs.state(self.job.job_id)
        if current != state and current not in FINAL_STATES:
            self.store.jobs.transition(self.job.job_id, state, at=at, expect=current,
                                       detail=detail)

    def _end_job(self, state: str, at: datetime, detail: str) -> None:
        while self.store.jobs.end_placement(self.job.job_id, at) is not None:
            pass  # every placement of the job ends with it
        self._job_state(state, at, detail)


def run_many(store: PriceStore, moves: Sequence[tuple[Mover, MoveRecord]], *,
             held: Callable[[list[int]], set[int]] | None = None
             ) -> list[MoveRecord | StaleState]:
    """`Mover.run` of many moves (each with its job's mover; the caller holds the jobs'
    leases): round by round, each move one step a round, through the same transitions,
    until each ends or waits on an instance. The steps' writes are written together
    (`Batch`: a few statements a batch of steps), after what their launchers did, as
    each step writes them; a launch is tagged with an attempt committed before (the
    move's, or the candidate a failed launch moved it to, in an earlier round).
    `held(job ids)`, asked before a batch once RENEW_SECONDS passed since it was last
    asked (well within the leases' time): the jobs whose lease is still the caller's
    (renewed); the moves of the others are left as they are.
    For each move, in order, as it was left, or the StaleState its step raised (another
    writer moved it first)."""
    out: list[MoveRecord | StaleState] = [move for _, move in moves]
    going = [i for i, (_, move) in enumerate(moves) if not move.ended]
    retries: dict[int, int] = {}  # the steps left out of a batch's writes, by move
    stale: set[int] = set()  # the moves to read again (their step was left out)
    renewed = time.monotonic()
    while going:
        stepped: list[int] = []
        at = 0
        while at < len(going):
            if held is not None and time.monotonic() - renewed >= RENEW_SECONDS:
                kept = held(sorted({moves[i][1].job_id for i in going[at:]}))
                going = going[:at] + [i for i in going[at:] if moves[i][1].job_id in kept]
                renewed = time.monotonic()
            chunk = going[at:at + BATCH_STEPS]
            if not chunk:
                break
            batch = Batch(store.engine, [out[i] for i in chunk],  # type: ignore[misc]
                          stale={moves[i][1].id for i in chunk if i in stale})
            before: dict[int, MoveRecord] = {}
            try:
                for i in chunk:
                    at += 1
                    move = before[i] = batch.moves.get(moves[i][1].id)
                    stale.discard(i)
                    batch.job = move.job_id
                    try:
                        after = moves[i][0].bound(batch).step(move)
                    except StaleState as exc:
                        out[i] = exc
                    else:
                        out[i] = after
                        if not after.ended and \
                                (after.state, after.tried) != (move.state, move.tried):
                            stepped.append(i)
                    if batch.full():
                        break
            finally:  # what the steps wrote (before a failure too) is written
                dropped = batch.commit()
            for i, move in before.items():
                if move.job_id in dropped:  # its step is taken again, from the store
                    out[i] = move
                    stale.add(i)
                    retries[i] = retries.get(i, 0) + 1
                    if retries[i] <= RETRIES and i not in stepped:
                        stepped.append(i)
                    elif retries[i] > RETRIES and i in stepped:
                        stepped.remove(i)
        going = sorted(stepped)
    return out


def offering_of(candidate: dict) -> Offering:
    """The Offering of a stored candidate (its key, GPU model and count)."""
    cloud, region, zone, instance_type, market, os_name = candidate["key"]
    return Offering(cloud, region, zone, instance_type, market, candidate["gpu_model"],
                    int(candidate["gpu_count"]), os=os_name)


def candidate(offering: Offering, usd_per_hour: float, reservation: str = "") -> dict:
    """A candidate as stored in a move (with the capacity reservation booked capacity is
    launched into). `usd_per_hour`: one instance's price, as every offering is quoted and
    the placement keeps it, a gang's too (its N nodes are counted where it is charged,
    `costsched.costs`)."""
    out = {"key": list(offering.key), "gpu_model": offering.gpu_model,
           "gpu_count": offering.gpu_count, "usd_per_hour": float(usd_per_hour)}
    if reservation:
        out["reservation"] = reservation
    return out


def _where(offering: Offering) -> str:
    return offering_label(offering.cloud, offering.region, offering.zone,
                          offering.instance_type, offering.market)


def _why(instance: Instance) -> str:
    return instance.state + (f": {instance.detail}" if instance.detail else "")

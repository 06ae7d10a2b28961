"""A stop wins over a move in every state of the move machine: the job ends cancelled with
no live instance and no open placement, whether the stop comes between two steps, during
a step (its launcher call, or just before the step's write), with the job's lease free
(the stop cancels the move itself) or held by the costsched stepping the move (the move's
next step winds it down). In-memory launcher; the store on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from costsched.migration.machine import Mover
from costsched.service.jobs.stopping import stop_job
from costsched.store import PriceStore
from costsched.store.moves import MoveRecord
from tests.costsched.migration.test_edges import (
    T0,
    FakeLauncher,
    cands,
    launched_on,
    mover,
    new_job,
)

MIGRATION = ("planned", "checkpointing", "checkpoint_verified", "target_launched",
             "target_running", "source_terminated")
LAUNCH = ("planned", "checkpoint_verified", "target_launched", "target_running",
          "source_terminated")
CASES = [("migration", s) for s in MIGRATION] + [("launch", s) for s in LAUNCH]
# The launcher call each state's step of a migration makes first (None: the step calls
# none); a launch calls it from checkpoint_verified (its launch) on.
FIRST_CALL = {"planned": "request_stop", "checkpointing": "status",
              "checkpoint_verified": "launch", "target_launched": "status",
              "target_running": "terminate", "source_terminated": None}
OTHER = "elsewhere:1:other"  # another costsched's lease holder name


@pytest.fixture()
def store(migrated_store: PriceStore) -> PriceStore:
    return migrated_store


def move_in(store: PriceStore, launcher: FakeLauncher, kind: str, state: str
            ) -> tuple[int, MoveRecord, Mover]:
    """A job with a move of `kind` stepped until it is in `state`."""
    job = new_job(store)
    if kind == "migration":
        source = launched_on(store, launcher, job)
        move = store.moves.create(job, "migration", cands("us-east-1b"), at=T0,
                                  source_instance=source)
    else:
        move = store.moves.create(job, "launch", cands("us-east-1a"), at=T0)
    m = mover(store, launcher, job)
    while move.state != state:
        move = m.step(move)
        assert not move.ended, move
    return job, move, m


def assert_stopped(store: PriceStore, launcher: FakeLauncher, job: int,
                   ends: tuple[str, ...] = ("cancelled",)) -> None:
    assert store.jobs.get(job).state == "stopped"
    assert [i.id for i in launcher.instances(job) if i.live] == []
    assert store.jobs.placements(job)["end_at"].notna().all()
    assert all(m.ended for m in store.moves.of_job(job))
    assert store.moves.of_job(job)[-1].state in ends


def stop(store: PriceStore, launcher: FakeLauncher, job: int) -> None:
    stop_job(store, launcher, job, datetime.now(timezone.utc), wait_seconds=0)


@pytest.mark.parametrize(("kind", "state"), CASES)
def test_a_stop_between_two_steps_ends_everything(store: PriceStore, kind: str,
                                                  state: str) -> None:
    launcher = FakeLauncher()
    job, move, m = move_in(store, launcher, kind, state)
    stop(store, launcher, job)
    assert_stopped(store, launcher, job)
    # A costsched that read the move before the stop steps it again: nothing starts.
    launches = len([c for c in launcher.calls if c[0] == "launch"])
    assert m.run(move).state == "cancelled"
    assert len([c for c in launcher.calls if c[0] == "launch"]) == launches
    assert_stopped(store, launcher, job)


@pytest.mark.parametrize("lease_free", [True, False], ids=["lease-free", "lease-held"])
@pytest.mark.parametrize(("kind", "state"), CASES)
def test_a_stop_during_a_step_ends_everything(store: PriceStore, kind: str, state: str,
                                              lease_free: bool) -> None:
    launcher = FakeLauncher()
    job, move, m = move_in(store, launcher, kind, state)
    if not lease_free:  # the costsched stepping the move holds the job's lease
        assert store.leases.acquire(f"steps:{job}", OTHER, 300, datetime.now(timezone.utc))
    stopped = []

    def stop_once() -> None:
        if not stopped:
            stopped.append(True)
            stop(store, launcher, job)

    call = (FIRST_CALL[state] if kind == "migration"
            or state in ("checkpoint_verified", "target_launched") else None)
    if call is not None:  # the stop lands while the step's launcher call runs
        original = getattr(launcher, call)

        def during(*args: object, **kwargs: object) -> object:
            result = original(*args, **kwargs)
            stop_once()
            return result

        setattr(launcher, call, during)
    else:  # the stop lands just before the step's write
        original_advance = store.moves.advance

        def advance(*args: object, **kwargs: object) -> MoveRecord:
            stop_once()
            return original_advance(*args, **kwargs)

        store.moves.advance = advance  # type: ignore[method-assign]
    after = m.run(move)
    assert stopped
    # A stop that lands as the move's last write finds it done: it ended all the same.
    ends = ("cancelled", "done") if state == "source_terminated" else ("cancelled",)
    assert after.state in ends
    assert_stopped(store, launcher, job, ends)
    assert launcher.most_live <= 2


def test_a_launch_left_unrecorded_by_a_crash_is_ended_by_the_next_step(
        store: PriceStore) -> None:
    """costsched asked for the target, then died; the user stopped the job meanwhile (the
    dead holder's lease kept the stop from cancelling the move): the next pass finds the
    instance by its attempt tag and ends it."""
    launcher = FakeLauncher()
    job, move, m = move_in(store, launcher, "migration", "checkpoint_verified")
    from costsched.migration.launcher import LaunchSpec
    from tests.costsched.migration.test_edges import offering

    launcher.launch(LaunchSpec(job, "j", "cmd", offering("us-east-1b"), "/tmp/x",
                               move.attempt))
    assert store.leases.acquire(f"steps:{job}", OTHER, 300, datetime.now(timezone.utc))
    stop(store, launcher, job)
    assert not store.moves.get(move.id).ended  # left to whoever steps it next
    assert m.run(store.moves.get(move.id)).state == "cancelled"
    assert_stopped(store, launcher, job)


def test_stop_from_every_live_job_state_says_no_internal_state(store: PriceStore) -> None:
    """The job's state changed between the read and the stop's write: still stopped."""
    launcher = FakeLauncher()
    job, move, _ = move_in(store, launcher, "migration", "checkpointing")
    assert store.jobs.get(job).state == "migrating"
    original = store.jobs.get
    reads = []

    def stale_get(job_id: int):  # noqa: ANN202 - a JobRecord read before a move finished
        record = original(job_id)
        if not reads:
            reads.append(record)
            store.jobs.transition(job_id, "running", at=T0, expect="migrating",
                                  detail="the move finished meanwhile")
        return record

    store.jobs.get = stale_get  # type: ignore[method-assign]
    stop(store, launcher, job)
    store.jobs.get = original  # type: ignore[method-assign]
    assert reads[0].state == "migrating"
    assert_stopped(store, launcher, job)


@pytest.mark.parametrize("kind", ["migration", "launch"])
def test_a_stop_just_after_the_step_read_the_job_s_state_ends_everything(
        store: PriceStore, kind: str) -> None:
    """The step of a planned move reads the job's state once (not stopped) and moves the
    job on from it; a stop that lands just after that read wins all the same."""
    launcher = FakeLauncher()
    job, move, m = move_in(store, launcher, kind, "planned")
    original = store.jobs.state
    reads = []

    def state_then_stop(job_id: int) -> str:
        read = original(job_id)
        reads.append(read)
        if len(reads) == 1:
            stop(store, launcher, job)
        return read

    store.jobs.state = state_then_stop  # type: ignore[method-assign]
    after = m.step(move)
    store.jobs.state = original  # type: ignore[method-assign]
    assert reads[0] != "stopped"
    assert m.run(after).state == "cancelled"
    assert_stopped(store, launcher, job)


def test_a_planned_move_s_step_reads_the_job_s_state_once(store: PriceStore) -> None:
    launcher = FakeLauncher()
    job, move, m = move_in(store, launcher, "launch", "planned")
    original = store.jobs.state
    reads = []
    store.jobs.state = lambda job_id: reads.append(job_id) or original(job_id)  # type: ignore[method-assign]
    after = m.step(move)
    store.jobs.state = original  # type: ignore[method-assign]
    assert after.state == "checkpoint_verified" and store.jobs.get(job).state != "pending"
    assert len(reads) == 1

"""Two stores on one cloud account (two SQLite files, as two team members' default stores)
or one local instances folder: both count jobs and moves from 1, yet each launches, adopts,
stops and sweeps only its own instances (`costsched.store.scope`). EC2 is moto's, in
process; the local launcher runs its instances' agents as real processes."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from sqlalchemy import update

from costsched.migration.launcher import Launcher
from costsched.migration.machine import JobLaunch, Mover, candidate
from costsched.model import Offering
from costsched.service.jobs import sweep as sweeping
from costsched.service.jobs.stopping import stop_job
from costsched.store import PriceStore
from costsched.store.moves import MoveRecord
from costsched.store.schema import moves
from tests.launchers.test_aws import aws, launcher  # noqa: F401 - fixtures

EAST = Offering("aws", "us-east-1", "us-east-1b", "p3.2xlarge", "spot", "V100", 1, 8, 61.0)
PLACES = {("aws", "us-east-1")}


@pytest.fixture()
def stores(tmp_path: Path) -> Iterator[tuple[PriceStore, PriceStore]]:
    """Two stores made apart (each its own id), as two users' default stores."""
    a, b = PriceStore(str(tmp_path / "a.sqlite")), PriceStore(str(tmp_path / "b.sqlite"))
    yield a, b
    a.dispose()
    b.dispose()


@pytest.fixture(params=["aws", "local"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Launcher]:
    """One launcher both stores use: moto's EC2 account, or one local instances folder."""
    if request.param == "aws":
        yield request.getfixturevalue("launcher")
        return
    from launchers.local import LocalLauncher

    local = LocalLauncher(tmp_path / "instances", grace_seconds=1, poll_seconds=0.1)
    try:
        yield local
    finally:
        for instance in local.instances():
            if instance.live:
                local.terminate(instance.id)


def mover(store: PriceStore, backend: Launcher, job: int) -> Mover:
    checkpoints = (f"{backend.base_dir}/ckpt-{job}"  # type: ignore[attr-defined]
                   if backend.name == "local" else "s3://b/c")
    return Mover(store, backend, JobLaunch(job, "train", "sleep 60", checkpoints, {}),
                 lambda uri: None)


def launched(store: PriceStore, backend: Launcher) -> tuple[int, MoveRecord]:
    """The store's job 1 launched (its move stepped until its instance is placed)."""
    now = datetime.now(timezone.utc).replace(microsecond=0)
    job = store.jobs.create("train", {"launcher": backend.name}, 100.0, at=now)
    move = store.moves.create(job, "launch", [candidate(EAST, 0.9)], at=now)
    while move.state != "target_launched":
        move = mover(store, backend, job).step(move)
    assert job == 1 and move.target_instance
    return job, move


def live(backend: Launcher) -> set[str]:
    return {i.id for i in backend.instances(1) if i.live}


def test_each_store_launches_its_own_job_1_and_a_stop_ends_only_its_own(
        stores: tuple[PriceStore, PriceStore], backend: Launcher) -> None:
    a, b = stores
    assert a.moves.scope != b.moves.scope
    assert re.fullmatch(r"[0-9a-f]{10}", a.moves.scope)
    _, in_a = launched(a, backend)
    _, in_b = launched(b, backend)
    assert in_a.attempt == f"{a.moves.scope}-j1-m1-0" != in_b.attempt
    # Two instances: the second store's create was not answered with the first's.
    assert in_a.target_instance != in_b.target_instance
    assert live(backend) == {in_a.target_instance, in_b.target_instance}

    stop_job(a, backend, 1, datetime.now(timezone.utc), wait_seconds=0)
    assert live(backend) == {in_b.target_instance}
    assert a.moves.get(in_a.id).state == "cancelled"
    # The other store's move goes on, its instance its own.
    assert mover(b, backend, 1).step(b.moves.get(in_b.id)).target_instance == \
        in_b.target_instance
    assert live(backend) == {in_b.target_instance}


def test_a_move_wound_down_ends_only_its_stores_instances(
        stores: tuple[PriceStore, PriceStore], backend: Launcher) -> None:
    a, b = stores
    _, in_a = launched(a, backend)
    _, in_b = launched(b, backend)
    # Stopped while the lease is held by the costsched stepping the move: its next step
    # winds it down (every live instance of job 1 this store launched).
    a.jobs.transition(1, "stopped", at=datetime.now(timezone.utc), detail="stopped")
    down = mover(a, backend, 1).step(in_a)
    assert down.state == "cancelled"
    assert live(backend) == {in_b.target_instance}


def test_a_stores_sweep_leaves_the_other_stores_lost_create_alone(
        stores: tuple[PriceStore, PriceStore], backend: Launcher) -> None:
    """Both stores' job 1 move 1 failed over with its create carried out (same offering,
    same time, same old-style numbers): each store's sweep ends its own only."""
    a, b = stores
    made = {}
    for store in (a, b):
        job, move = launched(store, backend)
        made[store] = move.target_instance
        # The create's answer was lost: the move ended without placing it.
        now = datetime.now(timezone.utc)
        store.jobs.end_placement(job, now)
        store.moves.advance(move, "failed", at=now, tried=1, target_instance="")
    later = datetime.now(timezone.utc) + timedelta(seconds=sweeping.GRACE_SECONDS + 60)
    [event] = sweeping.sweep(b, backend, PLACES, at=later)
    assert made[b] in str(event)
    assert live(backend) == {made[a]}
    [event] = sweeping.sweep(a, backend, PLACES, at=later)
    assert made[a] in str(event)
    assert live(backend) == set()


def test_a_move_stored_before_scopes_finds_its_lost_create_by_its_old_tag(
        stores: tuple[PriceStore, PriceStore], backend: Launcher) -> None:
    """A move under way when its store was upgraded keeps its tag: the create it sent
    before (its answer lost) is adopted, not launched again; another store's launch of
    its own job 1 is left alone."""
    a, b = stores
    _, theirs = launched(b, backend)
    now = datetime.now(timezone.utc)
    job = a.jobs.create("train", {"launcher": backend.name}, 100.0, at=now)
    move = a.moves.create(job, "launch", [candidate(EAST, 0.9)], at=now)
    with a.engine.begin() as conn:  # as revision 0016 leaves a move stored before it
        conn.execute(update(moves).where(moves.c.id == move.id).values(scope=""))
    step = mover(a, backend, job)
    move = step.step(a.moves.get(move.id))  # planned -> checkpoint_verified
    assert move.attempt == "j1-m1-0"
    from costsched.migration.launcher import LaunchSpec

    sent = backend.launch(LaunchSpec(job_id=job, job_name="train", command="sleep 60",
                                     offering=EAST, attempt=move.attempt,
                                     checkpoint_uri=step.job.checkpoint_uri))
    after = step.step(move)
    assert (after.state, after.target_instance) == ("target_launched", sent.id)
    assert live(backend) == {sent.id, theirs.target_instance}
    # Stopping it ends the old-tagged instance, and the other store's stays.
    stop_job(a, backend, job, datetime.now(timezone.utc), wait_seconds=0)
    assert live(backend) == {theirs.target_instance}

"""The failure edges of the job-move state machine, with an in-memory launcher whose
instances do what each test says: capacity errors move on to the next offering, a target
that dies before it runs is ended and the next one tried, a migration that cannot land
keeps the job on its source's offering, a job that finishes while checkpointing is not
moved, and a launch nothing can serve fails the job."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from costsched.migration.launcher import CapacityError, Instance, Launcher, LaunchSpec
from costsched.migration.machine import JobLaunch, Mover, candidate
from costsched.model import Offering
from costsched.store import PriceStore

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")


def offering(zone: str) -> Offering:
    return Offering("aws", "us-east-1", zone, "p3.2xlarge", "spot", "V100", 1)


class FakeLauncher(Launcher):
    """Instances whose next states are scripted per zone; records every call."""

    name = "fake"

    def __init__(self, full: set[str] = frozenset(), dies: set[str] = frozenset()) -> None:
        self.full, self.dies = set(full), set(dies)  # zones without capacity / that die
        self.states: dict[str, Instance] = {}
        self.calls: list[tuple[str, str]] = []
        self.most_live = 0

    def can_launch(self, offering: Offering) -> bool:
        return True

    def launch(self, spec: LaunchSpec) -> Instance:
        zone = spec.offering.zone
        self.calls.append(("launch", zone))
        if zone in self.full:
            raise CapacityError(spec.offering, "InsufficientInstanceCapacity")
        instance = Instance(f"i-{len(self.states)}", spec.job_id, spec.attempt,
                            spec.offering.key, "preempted" if zone in self.dies else "running")
        self.states[instance.id] = instance
        self.most_live = max(self.most_live, sum(i.live for i in self.states.values()))
        return instance

    def set(self, instance_id: str, state: str) -> None:
        old = self.states[instance_id]
        self.states[instance_id] = Instance(old.id, old.job_id, old.attempt, old.offering_key,
                                            state)

    def status(self, instance_id: str) -> Instance:
        return self.states[instance_id]

    def request_stop(self, instance_id: str) -> None:
        self.calls.append(("stop", instance_id))
        self.set(instance_id, "stopped")

    def terminate(self, instance_id: str) -> None:
        self.calls.append(("terminate", instance_id))
        self.set(instance_id, "terminated")

    def instances(self, job_id: int | None = None) -> list[Instance]:
        return [i for i in self.states.values() if job_id in (None, i.job_id)]


@pytest.fixture()
def store(migrated_store: PriceStore) -> PriceStore:
    """SQLite and PostgreSQL: the move states must fit the job log's columns on both."""
    return migrated_store


def mover(store: PriceStore, launcher: FakeLauncher, job_id: int) -> Mover:
    job = JobLaunch(job_id, "j", "python train.py", "/tmp/unused", {})
    return Mover(store, launcher, job, lambda uri: 3, lambda: T0 + timedelta(hours=1))


def new_job(store: PriceStore) -> int:
    return store.jobs.create("j", {}, 1000.0, at=T0)


def cands(*zones: str) -> list[dict]:
    return [candidate(offering(z), 1.0) for z in zones]


def launched_on(store: PriceStore, launcher: FakeLauncher, job_id: int) -> str:
    """Launch the job on zone a, as its first placement."""
    move = store.moves.create(job_id, "launch", cands("us-east-1a"), at=T0)
    done = mover(store, launcher, job_id).run(move)
    assert done.state == "done"
    return done.target_instance


def test_capacity_errors_move_on_to_the_next_offering(store: PriceStore) -> None:
    launcher = FakeLauncher(full={"us-east-1a", "us-east-1b"})
    job = new_job(store)
    move = store.moves.create(job, "launch", cands(*ZONES), at=T0)
    done = mover(store, launcher, job).run(move)
    assert done.state == "done" and done.tried == 2
    assert [c for c in launcher.calls if c[0] == "launch"] == [
        ("launch", z) for z in ZONES]
    assert store.jobs.placements(job)["zone"].tolist() == ["us-east-1c"]
    assert store.jobs.get(job).state == "running"
    details = store.jobs.events(job)["detail"].tolist()
    assert sum("InsufficientInstanceCapacity" in d for d in details) == 2
    # Each failure is an availability observation, and so is the launch that ran.
    seen = store.availability.since()
    assert seen[["zone", "event"]].values.tolist() == [
        ["us-east-1a", "capacity"], ["us-east-1b", "capacity"], ["us-east-1c", "launched"]]


def test_a_launch_nothing_can_serve_fails_the_job(store: PriceStore) -> None:
    launcher = FakeLauncher(full=set(ZONES))
    job = new_job(store)
    move = store.moves.create(job, "launch", cands(*ZONES), at=T0)
    assert mover(store, launcher, job).run(move).state == "failed"
    assert store.jobs.get(job).state == "failed"


def test_a_target_that_dies_before_it_runs_is_ended_and_the_next_tried(
        store: PriceStore) -> None:
    launcher = FakeLauncher(dies={"us-east-1b"})
    job = new_job(store)
    source = launched_on(store, launcher, job)
    move = store.moves.create(job, "migration", cands("us-east-1b", "us-east-1c"), at=T0,
                              source_instance=source)
    done = mover(store, launcher, job).run(move)
    assert done.state == "done"
    dead = [i for i in launcher.states.values() if i.offering_key[2] == "us-east-1b"][0]
    assert ("terminate", dead.id) in launcher.calls
    assert ("terminate", source) in launcher.calls
    # The source ends only after the target runs; at most two instances lived at once.
    order = [c for c in launcher.calls if c[0] in ("launch", "terminate")]
    assert order.index(("terminate", source)) > order.index(("launch", "us-east-1c"))
    assert launcher.most_live <= 2
    assert store.jobs.placements(job)["zone"].tolist()[-1] == "us-east-1c"


def test_a_migration_that_cannot_land_keeps_the_job_on_its_offering(
        store: PriceStore) -> None:
    launcher = FakeLauncher()
    job = new_job(store)
    source = launched_on(store, launcher, job)
    launcher.full = {"us-east-1b", "us-east-1c"}
    # As the service builds it: the choice, the others, the source's own offering last.
    move = store.moves.create(job, "migration", cands("us-east-1b", "us-east-1c",
                                                      "us-east-1a"),
                              at=T0, source_instance=source)
    done = mover(store, launcher, job).run(move)
    assert done.state == "done" and done.tried == 2
    assert store.jobs.placements(job)["zone"].tolist() == ["us-east-1a", "us-east-1a"]
    assert done.checkpoint_version == 3  # relaunched from the verified checkpoint


def test_a_job_that_finishes_while_checkpointing_is_not_moved(store: PriceStore) -> None:
    launcher = FakeLauncher()
    job = new_job(store)
    source = launched_on(store, launcher, job)
    move = store.moves.create(job, "migration", cands("us-east-1b"), at=T0,
                              source_instance=source)
    m = mover(store, launcher, job)
    move = m.step(move)  # asks the source to stop
    assert move.state == "checkpointing"
    launcher.set(source, "succeeded")  # it was done before it could stop
    move = m.step(move)
    assert move.state == "cancelled"
    assert store.jobs.get(job).state == "succeeded"
    assert ("launch", "us-east-1b") not in launcher.calls


def test_a_source_preempted_while_checkpointing_moves_from_the_newest_checkpoint(
        store: PriceStore) -> None:
    launcher = FakeLauncher()
    job = new_job(store)
    source = launched_on(store, launcher, job)
    move = store.moves.create(job, "migration", cands("us-east-1b"), at=T0,
                              source_instance=source)
    m = mover(store, launcher, job)
    move = m.step(move)
    launcher.set(source, "preempted")
    move = m.run(move)
    assert move.state == "done" and move.checkpoint_version == 3
    assert store.jobs.placements(job)["zone"].tolist()[-1] == "us-east-1b"


def test_an_instance_asked_for_before_a_crash_is_adopted_not_doubled(
        store: PriceStore) -> None:
    launcher = FakeLauncher()
    job = new_job(store)
    move = store.moves.create(job, "launch", cands("us-east-1a"), at=T0)
    m = mover(store, launcher, job)
    move = m.step(move)  # checkpoint_verified
    # The launch happened, then costsched died before it stored the target.
    launcher.launch(LaunchSpec(job, "j", "cmd", offering("us-east-1a"), "/tmp/x",
                               move.attempt))
    done = m.run(move)
    assert done.state == "done"
    assert [c for c in launcher.calls if c[0] == "launch"] == [("launch", "us-east-1a")]

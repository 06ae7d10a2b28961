"""A placement on a market billed from when its instance runs (flex-start) waits, charged
nothing, until the move sees its instance running; it is then charged from when the cloud
says it began running (never before its launch, never after it was seen). Through one move
and through batches of moves (the placement opened in an earlier batch, or in the same)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pandas as pd

from costsched.migration.launcher import Instance, LaunchSpec
from costsched.migration.machine import JobLaunch, Mover, candidate, run_many
from costsched.model import Offering
from costsched.store import PriceStore
from tests.costsched.migration.test_edges import T0, FakeLauncher

FLEX = Offering("gcp", "us-central1", "us-central1-a", "a3-highgpu-8g", "flex_start", "H100", 8)
H = timedelta(hours=1)


class Waiting(FakeLauncher):
    """Instances that wait for capacity until `run` starts them at a time the cloud says
    (those launched after, at once from then)."""

    started: object = None

    def launch(self, spec: LaunchSpec) -> Instance:
        made = super().launch(spec)
        self.states[made.id] = replace(made, state="pending" if self.started is None
                                       else "running", started_at=self.started)
        return self.states[made.id]

    def run(self, started: object) -> None:
        self.started = started
        for instance_id, instance in list(self.states.items()):
            self.states[instance_id] = replace(instance, state="running",
                                               started_at=started)


def mover(store: PriceStore, launcher: FakeLauncher, job_id: int, at: object) -> Mover:
    job = JobLaunch(job_id, "j", "python train.py", "/tmp/unused", {})
    return Mover(store, launcher, job, lambda uri: None, lambda: at)


def placed(store: PriceStore, job_id: int) -> list[tuple]:
    frame = store.jobs.placements(job_id)
    return list(zip(frame["start_at"], frame["waiting"], strict=True))


def test_a_flex_start_placement_is_charged_from_when_it_ran(store: PriceStore) -> None:
    launcher = Waiting()
    job = store.jobs.create("j", {}, 1000.0, at=T0)
    move = store.moves.create(job, "launch", [candidate(FLEX, 47.0)], at=T0)
    waiting = mover(store, launcher, job, T0).run(move)
    assert waiting.state == "target_launched"
    assert placed(store, job) == [(pd.Timestamp(T0), True)]
    launcher.run(T0 + 1.5 * H)  # Compute Engine says 1:30; seen at 1:40
    done = mover(store, launcher, job, T0 + 1.5 * H + timedelta(minutes=10)).run(waiting)
    assert done.state == "done"
    assert placed(store, job) == [(pd.Timestamp(T0 + 1.5 * H), False)]


def test_a_start_the_cloud_puts_before_the_launch_or_after_the_look_is_bounded(
        store: PriceStore) -> None:
    launcher = Waiting()
    jobs = [store.jobs.create(f"j{i}", {}, 1000.0, at=T0) for i in range(2)]
    for job in jobs:
        move = store.moves.create(job, "launch", [candidate(FLEX, 47.0)], at=T0)
        mover(store, launcher, job, T0 + H).run(move)
    launcher.run(T0)  # a clock behind costsched's: before the launch
    mover(store, launcher, jobs[0], T0 + 2 * H).run(store.moves.of_job(jobs[0])[-1])
    assert placed(store, jobs[0]) == [(pd.Timestamp(T0 + H), False)]
    launcher.run(T0 + 5 * H)  # ahead of costsched's: after it looked
    mover(store, launcher, jobs[1], T0 + 2 * H).run(store.moves.of_job(jobs[1])[-1])
    assert placed(store, jobs[1]) == [(pd.Timestamp(T0 + 2 * H), False)]


def test_a_batch_charges_from_running_what_it_or_an_earlier_batch_placed(
        store: PriceStore) -> None:
    launcher = Waiting()
    jobs = [store.jobs.create(f"j{i}", {}, 1000.0, at=T0) for i in range(3)]
    moves = [store.moves.create(j, "launch", [candidate(FLEX, 47.0)], at=T0) for j in jobs]
    # The first two are placed (waiting) by a batch; the third's launch waits for the next.
    first = run_many(store, [(mover(store, launcher, j, T0), m)
                             for j, m in zip(jobs[:2], moves[:2], strict=True)])
    assert [m.state for m in first] == ["target_launched"] * 2
    launcher.run(T0 + H)
    again = run_many(store, [(mover(store, launcher, j, T0 + 2 * H), m) for j, m in
                             zip(jobs, [*first, moves[2]], strict=True)])
    assert [m.state for m in again] == ["done"] * 3
    assert placed(store, jobs[0]) == placed(store, jobs[1]) == [
        (pd.Timestamp(T0 + H), False)]  # stored waiting: started by an update
    # Launched and seen running in the same batch, after the cloud's start: from the launch.
    assert placed(store, jobs[2]) == [(pd.Timestamp(T0 + 2 * H), False)]
    events = store.jobs.events(jobs[0])["detail"].tolist()
    assert events.count(f"placement 1: its instance runs: charged from "
                        f"{(T0 + H).isoformat().replace('+00:00', 'Z')}") == 1

"""A preempted instance is charged until it was lost, not until the watch saw it gone: the
local launcher's preempt says when it took the instance, and the placement ends then (its
hours and dollars to that time, the offering's preemption recorded then); a launcher that
does not say keeps the pass's time, and a time it says is kept within the placement's start
and the pass. Real agents, a real SQLite store."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone

import pytest

from costsched.costs import job_cost
from costsched.service import jobs as service
from launchers.base import Instance
from launchers.local import LocalLauncher
from tests.costsched.service.test_jobs import world, write_spec  # noqa: F401 - the fixture

LATER = timedelta(seconds=60)  # the user's look at `status`, a minute after the preemption


def lost_placement(store, job_id: int):  # noqa: ANN001, ANN201
    placements = store.jobs.placements(job_id)
    return placements.iloc[0], placements


def test_a_preempted_placement_ends_and_is_charged_at_the_preemption(world) -> None:  # noqa: F811
    store, launcher, tmp = world
    [job] = service.launch(store, write_spec(tmp, run="exec sleep 600"), launcher=launcher,
                           wait_seconds=20, checkpoint_root=str(tmp / "checkpoints"))
    instance = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    launcher.preempt(instance)
    taken = launcher.status(instance).lost_at
    assert taken is not None

    said = service.reconcile(store, launcher, at=taken + LATER)
    assert any("preempted; recovery" in line for line in said if line.job_id == job.id)
    first, placements = lost_placement(store, job.id)
    assert first["instance"] == instance and len(placements) == 2  # recovered
    end = first["end_at"].to_pydatetime()
    assert abs((end - taken).total_seconds()) < 1  # not the pass, a minute later
    seen = store.availability.since(event="preempted")
    assert [abs((t.to_pydatetime() - taken).total_seconds()) < 1 for t in seen["at"]] == [True]

    cost = job_cost(store, job.id, now=taken + LATER, checkpoint_gb=1.0)
    charged = cost.charged[0]
    hours = (end - first["start_at"].to_pydatetime()).total_seconds() / 3600
    assert charged.placement.instance == instance
    assert charged.hours == pytest.approx(hours) and charged.hours < LATER.total_seconds() / 3600
    assert charged.usd == pytest.approx(hours * float(first["usd_per_hour"]))


class Saying(LocalLauncher):
    """The local launcher, its preempted instances saying `lost` (None: nothing) as when
    they were lost: a cloud that does not say, or says a time out of bounds."""

    lost: timedelta | None = None  # from the placement's start

    def status(self, instance_id: str) -> Instance:
        return self._said(super().status(instance_id))

    def statuses(self, instance_ids: Sequence[str]) -> dict[str, Instance]:
        return {k: self._said(v) for k, v in super().statuses(instance_ids).items()}

    def _said(self, instance: Instance) -> Instance:
        if instance.state != "preempted":
            return instance
        lost = None if self.lost is None else self.started + self.lost
        return dataclasses.replace(instance, lost_at=lost)


@pytest.mark.parametrize(("lost", "ends"), [
    (None, "pass"),  # not said: the pass that saw it gone, as before
    (-timedelta(hours=1), "start"),  # before the placement began: never before its start
    (timedelta(hours=1), "pass"),  # after the pass: never after it
])
def test_a_time_not_said_or_out_of_bounds_ends_it_within_the_placement(
        world, lost: timedelta | None, ends: str) -> None:  # noqa: F811
    store, _, tmp = world
    launcher = Saying(tmp / "instances", grace_seconds=5)
    [job] = service.launch(store, write_spec(tmp, run="exec sleep 600"), launcher=launcher,
                           wait_seconds=20, checkpoint_root=str(tmp / "checkpoints"))
    placed = store.jobs.placements(job.id).iloc[-1]
    launcher.started, launcher.lost = placed["start_at"].to_pydatetime(), lost
    launcher.preempt(str(placed["instance"]))
    at = datetime.now(timezone.utc).replace(microsecond=0) + LATER

    service.reconcile(store, launcher, at=at)
    first, _ = lost_placement(store, job.id)
    expected = at if ends == "pass" else first["start_at"].to_pydatetime()
    assert first["end_at"].to_pydatetime() == expected
    [when] = store.availability.since(event="preempted")["at"]
    assert when.to_pydatetime() == expected
    for instance in launcher.instances():
        launcher.terminate(instance.id)


def test_a_status_that_does_not_reconcile_charges_a_preempted_instance_until_it_was_lost(
        world) -> None:  # noqa: F811
    """Without a reconcile (the daemon off, `status --no-reconcile`), the instance shows as
    preempted and its placement is still open: it is charged until it was lost, so the
    figure neither grows while nobody reconciles nor falls once the recovery closes it."""
    store, launcher, tmp = world
    [job] = service.launch(store, write_spec(tmp, run="exec sleep 600"), launcher=launcher,
                           wait_seconds=20, checkpoint_root=str(tmp / "checkpoints"))
    instance = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    launcher.preempt(instance)
    taken = launcher.status(instance).lost_at

    def charged(later: timedelta, reconcile: bool = False) -> tuple[float, str]:
        [seen] = service.status(store, launcher, job.id, at=taken + later,
                                reconcile_first=reconcile)
        return seen.cost.charged[0].usd, seen.instance_state

    first, state = charged(LATER)
    assert state == "preempted"
    assert charged(LATER * 10) == (first, "preempted")  # not growing
    service.reconcile(store, launcher, at=taken + LATER * 20)
    after, _ = charged(LATER * 30)
    assert after == pytest.approx(first)  # and not falling once recovered

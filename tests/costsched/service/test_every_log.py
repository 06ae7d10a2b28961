"""`logs --all` says how the job came to each instance and how it left it: launched,
preempted and recovered, moved, stopped and started again, and how it ended."""

from __future__ import annotations

from datetime import timedelta
from functools import partial

from costsched.service import jobs as service
from costsched.store import PriceStore
from tests.costsched.service.test_gang_logs import T0
from tests.costsched.test_costs import EAST_A


class OneLog:
    name = "local"

    def logs(self, instance: str, tail: int = 200) -> str:
        return f"output on {instance}\n"


def _place(store: PriceStore, job: int, hours: float, reason: str, instance: str) -> None:
    """The job placed on `instance` `hours` after T0, by `reason`."""
    store.jobs.place(job, EAST_A, gpu_model="V100", gpu_count=1,
                     at=T0 + timedelta(hours=hours), usd_per_hour=1.0, reason=reason,
                     instance=instance)


def test_each_instance_says_how_the_job_came_and_left(store: PriceStore) -> None:
    job = store.jobs.create("trainer", {"spec": {"name": "trainer"}}, 10, at=T0)
    store.jobs.transition(job, "running", at=T0)

    place = partial(_place, store, job)

    def moved(hours: float, kind: str, source: str, target: str, detail: str = "") -> None:
        at = T0 + timedelta(hours=hours)
        move = store.moves.create(job, kind, [], at=at, source_instance=source,
                                  detail=detail)
        for state in ("checkpoint_verified", "target_launched", "target_running",
                      "source_terminated", "done"):
            if state == "target_running":
                place(hours + 0.25, kind, target)
            move = store.moves.advance(move, state, at=at + timedelta(minutes=15),
                                       target_instance=target)

    place(0, "launch", "i-1")
    store.jobs.end_placement(job, T0 + timedelta(hours=1))
    moved(1, "recovery", "i-1", "i-2", detail="instance i-1 preempted")
    moved(2.25, "migration", "i-2", "i-3")
    store.jobs.end_placement(job, T0 + timedelta(hours=3))
    place(5, "start", "i-4")
    assert service.every_log(store, OneLog(), job) == (
        "--- instance i-1 (launched 2026-03-01 00:00Z, preempted 2026-03-01 01:00Z: "
        "recovered on the next instance)\noutput on i-1\n"
        "--- instance i-2 (recovered here 2026-03-01 01:15Z, moved away 2026-03-01 02:30Z)\n"
        "output on i-2\n"
        "--- instance i-3 (moved here 2026-03-01 02:30Z, stopped 2026-03-01 03:00Z)\n"
        "output on i-3\n"
        "--- instance i-4 (started again 2026-03-01 05:00Z, running)\noutput on i-4\n")
    store.jobs.end_placement(job, T0 + timedelta(hours=6))
    store.jobs.transition(job, "succeeded", at=T0 + timedelta(hours=6))
    assert service.every_log(store, OneLog(), job).endswith(
        "--- instance i-4 (started again 2026-03-01 05:00Z, succeeded 2026-03-01 06:00Z)\n"
        "output on i-4\n")


def test_an_instance_a_stop_ended_reads_stopped_whatever_move_the_stop_cancelled(
        store: PriceStore) -> None:
    """A migration (or a recovery) that a stop cancelled moved nothing: the instances it
    involved read as the stop left them, never 'moved away' or 'recovered'."""
    job = store.jobs.create("trainer", {"spec": {"name": "trainer"}}, 10, at=T0)
    store.jobs.transition(job, "running", at=T0)

    place = partial(_place, store, job)

    def cancelled(hours: float, kind: str, source: str, detail: str = "") -> None:
        at = T0 + timedelta(hours=hours)
        move = store.moves.create(job, kind, [], at=at, source_instance=source,
                                  detail=detail)
        store.moves.advance(move, "cancelled", at=at + timedelta(minutes=2),
                            detail="the job was stopped (planned)")

    place(0, "launch", "i-1")
    cancelled(1, "migration", "i-1")
    store.jobs.end_placement(job, T0 + timedelta(hours=1, minutes=2))
    store.jobs.transition(job, "stopped", at=T0 + timedelta(hours=1, minutes=2))
    assert service.every_log(store, OneLog(), job).startswith(
        "--- instance i-1 (launched 2026-03-01 00:00Z, stopped 2026-03-01 01:02Z)\n")
    store.jobs.transition(job, "running", at=T0 + timedelta(hours=2))
    place(2, "start", "i-2")
    store.jobs.end_placement(job, T0 + timedelta(hours=3))
    cancelled(3, "recovery", "i-2", detail="instance i-2 preempted")
    store.jobs.transition(job, "stopped", at=T0 + timedelta(hours=3, minutes=2))
    assert service.every_log(store, OneLog(), job) == (
        "--- instance i-1 (launched 2026-03-01 00:00Z, stopped 2026-03-01 01:02Z)\n"
        "output on i-1\n"
        "--- instance i-2 (started again 2026-03-01 02:00Z, preempted 2026-03-01 03:00Z: "
        "not recovered, the job was stopped)\noutput on i-2\n")


def test_a_migration_that_moved_nothing_leaves_its_source_running(store: PriceStore) -> None:
    """A migration cancelled for a reason of its own (its source could not be asked to
    stop) leaves the job where it ran: the source reads running, then as the job ended."""
    job = store.jobs.create("trainer", {"spec": {"name": "trainer"}}, 10, at=T0)
    store.jobs.transition(job, "running", at=T0)
    store.jobs.place(job, EAST_A, gpu_model="V100", gpu_count=1, at=T0, usd_per_hour=1.0,
                     reason="launch", instance="i-1")
    move = store.moves.create(job, "migration", [], at=T0, source_instance="i-1")
    store.moves.advance(move, "cancelled", at=T0 + timedelta(minutes=1),
                        detail="cannot ask the source to stop: throttled")
    assert service.every_log(store, OneLog(), job) == (
        "--- instance i-1 (launched 2026-03-01 00:00Z, running)\noutput on i-1\n")


def test_an_instance_before_a_start_says_why_it_ended(store: PriceStore) -> None:
    """Before a start: stopped at a budget's cap says so, and an instance whose job exited
    0 short of its steps reads 'ended-short' (why in words), never 'stopped'; the last of a job
    that ended short reads 'ended-short', as every view shows it."""
    spec = {"spec": {"name": "trainer", "steps": 10}}
    job = store.jobs.create("trainer", spec, 10, at=T0)
    store.jobs.transition(job, "running", at=T0)
    place = partial(_place, store, job)
    place(0, "launch", "i-1")
    store.jobs.end_placement(job, T0 + timedelta(hours=1))
    store.jobs.transition(job, "stopped", at=T0 + timedelta(hours=1),
                          detail="stopped at its own budget: $1.00 spent + $0.10 for the "
                                 "next watch interval would pass the budget of $1.05")
    store.jobs.transition(job, "pending", at=T0 + timedelta(hours=2))
    store.jobs.transition(job, "running", at=T0 + timedelta(hours=2))
    place(2, "start", "i-2")
    store.jobs.record_step(job, 4, at=T0 + timedelta(hours=2, minutes=30))
    store.jobs.end_placement(job, T0 + timedelta(hours=3))
    store.jobs.transition(job, "succeeded", at=T0 + timedelta(hours=3))
    said = service.every_log(store, OneLog(), job)
    assert said.endswith(
        "--- instance i-2 (started again 2026-03-01 02:00Z, ended-short 2026-03-01 03:00Z)\n"
        "output on i-2\n"), said
    store.jobs.transition(job, "pending", at=T0 + timedelta(hours=4),
                          detail="started again by the user for the rest of its steps")
    store.jobs.transition(job, "running", at=T0 + timedelta(hours=4))
    place(4, "start", "i-3")
    assert service.every_log(store, OneLog(), job).startswith(
        "--- instance i-1 (launched 2026-03-01 00:00Z, stopped 2026-03-01 01:00Z at the "
        "cap of its own budget)\noutput on i-1\n"
        "--- instance i-2 (started again 2026-03-01 02:00Z, ended-short 2026-03-01 03:00Z "
        "(exited 0 before its declared steps))\n")


def test_an_instance_whose_run_failed_reads_failed_before_its_start(store: PriceStore) -> None:
    """A job that failed (its command exited non-zero) and was started again: the instance
    it failed on reads 'failed ... (exit code 1 ...)', as `status` says it, never
    'stopped'."""
    job = store.jobs.create("trainer", {"spec": {"name": "trainer"}}, 10, at=T0)
    store.jobs.transition(job, "running", at=T0)
    place = partial(_place, store, job)
    place(0, "launch", "i-1")
    store.jobs.end_placement(job, T0 + timedelta(hours=1))
    store.jobs.transition(job, "failed", at=T0 + timedelta(hours=1),
                          detail="exit code 1 (NameError: name 'lr' is not defined)")
    store.jobs.transition(job, "pending", at=T0 + timedelta(hours=2),
                          detail="started again by the user")
    store.jobs.transition(job, "running", at=T0 + timedelta(hours=2))
    place(2, "start", "i-2")
    assert service.every_log(store, OneLog(), job).startswith(
        "--- instance i-1 (launched 2026-03-01 00:00Z, failed 2026-03-01 01:00Z: exit code 1 "
        "(NameError: name 'lr' is not defined))\noutput on i-1\n"
        "--- instance i-2 (started again 2026-03-01 02:00Z, running)\n")

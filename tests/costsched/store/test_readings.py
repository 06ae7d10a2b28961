"""Step readings on SQLite and PostgreSQL: each reading lands on the job's newest open
placement (a move's target while its source is still open), its first kept, its last
replaced; a new placement starts its own."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from costsched.store import PriceStore

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
EAST = ("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux")
WEST = ("aws", "us-west-2", "us-west-2b", "p3.2xlarge", "spot", "linux")


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def test_readings_follow_the_newest_open_placement(any_store: PriceStore) -> None:
    jobs = any_store.jobs
    job = jobs.create("train", {}, 1000.0, at=at(0))
    other = jobs.create("other", {}, 1000.0, at=at(0))
    jobs.place(job, EAST, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=1.0,
               reason="launch", instance="i-1")
    jobs.record_step(job, 10, at=at(300))  # after a 5-minute setup
    jobs.record_steps({job: 70, other: 5}, at=at(360))  # `other` has no placement
    jobs.place(job, WEST, gpu_model="V100", gpu_count=1, at=at(400), usd_per_hour=1.0,
               reason="migration", instance="i-2", keep_open=True)  # source still open
    jobs.record_steps({job: 80}, at=at(500))
    jobs.record_step(job, 90, at=at(510))
    read = jobs.readings([job, other])
    assert read[["first_step", "last_step"]].values.tolist() == [[10.0, 70.0], [80.0, 90.0]]
    assert [(r.first_at, r.last_at) for r in read.itertuples()] == [
        (at(300), at(360)), (at(500), at(510))]
    assert jobs.get(job).steps_done == 90 and jobs.get(other).steps_done == 5


def test_a_step_read_again_unchanged_keeps_the_time_it_was_first_read_at(
        any_store: PriceStore) -> None:
    # A job writes its step every 6 s; costsched looks every 2 s: its speed is the steps
    # over the time to the step's first sighting, not to the last look at it.
    jobs = any_store.jobs
    job = jobs.create("train", {}, 1000.0, at=at(0))
    jobs.place(job, EAST, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=1.0,
               reason="launch", instance="i-1")
    for seconds, step in [(10, 20), (12, 20), (16, 40), (18, 40), (20, 40)]:
        jobs.record_steps({job: step}, at=at(seconds))
    read = jobs.readings([job]).iloc[0]
    assert (read.first_step, read.last_step) == (20.0, 40.0)
    assert (read.first_at, read.last_at) == (at(10), at(16))
    jobs.record_step(job, 60, at=at(22))
    assert jobs.readings([job]).iloc[0].last_at == at(22)


def test_a_step_read_off_an_instance_found_gone_does_not_move_its_reading_on(
        any_store: PriceStore) -> None:
    """Preempted at 100 s (step 41), seen gone at 111 s: the reading stays at the last look
    while it ran (step 32 at 96 s), so the eleven seconds of wait are no training; a
    placement never read before still gets its one reading."""
    jobs = any_store.jobs
    job = jobs.create("train", {}, 1000.0, at=at(0))
    jobs.place(job, EAST, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=1.0,
               reason="launch", instance="i-1")
    jobs.record_step(job, 4, at=at(80))
    jobs.record_step(job, 32, at=at(96))
    jobs.record_step(job, 41, at=at(111), extend=False)
    [read] = jobs.readings([job]).itertuples()
    assert (read.first_step, read.last_step, read.first_at, read.last_at) == (
        4.0, 32.0, at(80), at(96))
    assert jobs.get(job).steps_done == 41  # its progress is what it reported
    other = jobs.create("short", {}, 1000.0, at=at(0))
    jobs.place(other, WEST, gpu_model="V100", gpu_count=1, at=at(0), usd_per_hour=1.0,
               reason="launch", instance="i-2")
    jobs.record_steps({other: 5}, at=at(8), extend=False)
    [read] = jobs.readings([other]).itertuples()
    assert (read.first_step, read.last_step, read.last_at) == (5.0, 5.0, at(8))

"""What `launch` and `start` say of a job they leave without a running instance: a job that
failed on the instance it was launched on (an image that could not be pulled) `failed`, its
state; one that no offering could take `not launched`."""

from __future__ import annotations

from datetime import datetime, timezone

from costsched.service.jobs.launches import not_launched
from costsched.store import PriceStore

T = datetime(2026, 1, 5, tzinfo=timezone.utc)
PULL = "image no-such-image:1: pull failed: manifest for no-such-image:1 not found"


def _failed(store: PriceStore, name: str, instance: str, why: str) -> int:
    job = store.jobs.create(name, {"spec": {"name": name, "steps": 10}}, 10, at=T)
    move = store.moves.create(job, "launch", [], at=T)
    if instance:  # launched there
        store.moves.advance(move, "target_launched", at=T, target_instance=instance)
        store.jobs.transition(job, "running", at=T)
    store.jobs.transition(job, "failed", at=T, detail=why)
    return job


def test_a_job_that_failed_on_its_instance_is_said_failed_not_unlaunched(
        store: PriceStore) -> None:
    ran = _failed(store, "in-a-container", "local-1", PULL)
    never = _failed(store, "spot-v100", "", "no offering could be launched")
    said = {left.job_id: left.said() for left in not_launched(store, [ran, never])}
    assert said == {
        ran: f"job {ran} (in-a-container) failed: {PULL}",
        never: f"job {never} (spot-v100) not launched: no offering could be launched"}

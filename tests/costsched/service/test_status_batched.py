"""`status` and `reconcile` over a few hundred jobs in every state read the store in a fixed
number of queries and ask the launcher once, and say of each job what it says of that job
alone: the preempted are recovered, the finished and failed closed, checkpoint news logged
once, and moving jobs left to their move."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import Path

import pytest
from sqlalchemy import event

from costsched.migration.launcher import Instance, Launcher, LaunchSpec
from costsched.migration.machine import candidate, offering_of
from costsched.model import Offering
from costsched.service import jobs as service
from costsched.service.prices import import_prices
from costsched.store import PriceStore

ROOT = Path(__file__).resolve().parents[3]
NOW = datetime(2026, 1, 2, 12, tzinfo=timezone.utc)
START = NOW - timedelta(hours=6)
ZONES = ("us-east-1a", "us-east-1b", "us-east-1c")
# What each job of a team is doing, by its number modulo len(KINDS).
KINDS = ("reports", "quiet", "checkpoint-error", "preempted", "succeeded", "failed",
         "moving", "finished", "failed-before")


class Instances(Launcher):
    """Instances in memory; counts the calls it gets, one-at-a-time asks and batches apart."""

    name = "memory"

    def __init__(self) -> None:
        self.states: dict[str, Instance] = {}
        self.asked_one = 0
        self.asked_many = 0

    def can_launch(self, offering: Offering) -> bool:
        return True

    def launch(self, spec: LaunchSpec) -> Instance:
        instance = Instance(f"m-{spec.job_id}-{spec.attempt}", spec.job_id, spec.attempt,
                            spec.offering.key, "running")
        self.states[instance.id] = instance
        return instance

    def status(self, instance_id: str) -> Instance:
        self.asked_one += 1
        return self.states[instance_id]

    def statuses(self, instance_ids: Sequence[str]) -> dict[str, Instance]:
        self.asked_many += 1
        return {i: self.states[i] for i in instance_ids if i in self.states}

    def request_stop(self, instance_id: str) -> None:
        self._set(instance_id, "stopped")

    def terminate(self, instance_id: str) -> None:
        self._set(instance_id, "stopped")

    def instances(self, job_id: int | None = None) -> list[Instance]:
        return [i for i in self.states.values() if job_id in (None, i.job_id)]

    def _set(self, instance_id: str, state: str) -> None:
        old = self.states[instance_id]
        self.states[instance_id] = Instance(old.id, old.job_id, old.attempt, old.offering_key,
                                            state)


def team(path: Path, jobs: int, kinds: Sequence[str] = KINDS) -> tuple[PriceStore, Instances]:
    """`jobs` jobs placed on three spot zones, each doing kinds[n % len(kinds)]."""
    store = PriceStore(f"sqlite:///{path / 'jobs.sqlite'}")
    import_prices(store, [ROOT / "examples" / "demo" / "prices-before.csv"], partial=False)
    launcher = Instances()
    for n in range(jobs):
        kind = kinds[n % len(kinds)]
        spec = {"name": f"team-{n}", "run": "python train.py", "throughputs": {"V100": 0.025},
                "steps": 4000, "checkpoint": {"location": str(path / "ckpt"), "size_gb": 0.1},
                "constraints": {"regions": ["us-east-1"], "markets": ["spot"]}}
        job_id = store.jobs.create(spec["name"], {"spec": spec, "source": "test",
                                                  "launcher": launcher.name},
                                   4000, at=START, policy="dynamic-aware",
                                   checkpoint_location=str(path / "ckpt" / f"job-{n}"))
        key = ("aws", "us-east-1", ZONES[n % 3], "p3.2xlarge", "spot", "linux")
        instance = f"m-{job_id}"
        store.jobs.transition(job_id, "running", at=START)
        store.jobs.place(job_id, key, gpu_model="V100", gpu_count=1, at=START,
                         usd_per_hour=0.92, reason="launch", instance=instance)
        if kind != "quiet":  # a quiet job never reported a step: its progress is estimated
            store.jobs.record_progress(job_id, 100.0 + n, at=START + timedelta(hours=1))
        state, step, error, exit_code = "running", None, "", None
        if kind == "reports":
            step = 200 + n  # news: stored by the next status or reconcile
        elif kind == "checkpoint-error":
            error = "permission denied"
        elif kind in ("preempted", "succeeded"):
            state = kind
        elif kind == "failed":
            state, exit_code = "failed", 3
        elif kind == "moving":
            there = offering_of({"key": ["aws", "us-east-1", ZONES[(n + 1) % 3], "p3.2xlarge",
                                         "spot", "linux"], "gpu_model": "V100", "gpu_count": 1})
            store.moves.create(job_id, "migration", [candidate(there, 0.9)],
                               at=START + timedelta(hours=2), source_instance=instance)
        elif kind in ("finished", "failed-before"):
            end = START + timedelta(hours=3)
            store.jobs.end_placement(job_id, end, instance=instance)
            state = "succeeded" if kind == "finished" else "failed"
            store.jobs.transition(job_id, state, at=end, detail="exit code 2: out of memory")
        launcher.states[instance] = Instance(instance, job_id, "a0", key, state,
                                             exit_code=exit_code, step=step,
                                             checkpoint_error=error)
    return store, launcher


def _kind(store: PriceStore, job_id: int) -> str:
    return KINDS[int(store.jobs.get(job_id).name.split("-")[1]) % len(KINDS)]


def _same(together: service.JobStatus, alone: service.JobStatus) -> None:
    # (The record is as read before the step its instance reported was stored.)
    assert (alone.record.id, alone.record.state) == (together.record.id, together.record.state)
    assert (alone.placement is None) == (together.placement is None)
    if alone.placement is not None:
        assert alone.placement.to_dict() == together.placement.to_dict()
    assert alone.instance_state == together.instance_state
    assert (alone.steps_left, alone.reported) == (together.steps_left, together.reported)
    assert alone.cost.total_usd == pytest.approx(together.cost.total_usd, rel=1e-12)
    assert [m.id for m in alone.moves] == [m.id for m in together.moves]
    assert alone.failure == together.failure
    assert alone.checkpoint_error == together.checkpoint_error


def test_status_of_every_job_in_every_state_is_what_each_says_alone(tmp_path: Path) -> None:
    store, launcher = team(tmp_path, 180)  # 20 of each kind
    together = service.status(store, launcher, at=NOW, reconcile_first=False)
    assert launcher.asked_many == 1  # every open placement's instance in one call
    assert len(together) == 180
    assert {s.instance_state for s in together} == {"running", "preempted", "succeeded",
                                                   "failed", ""}
    for s in together[::10]:  # two of each kind, each alone
        [alone] = service.status(store, launcher, s.record.id, at=NOW,
                                 reconcile_first=False)
        _same(s, alone)
    for s in together:
        kind = _kind(store, s.record.id)
        assert s.reported == (kind != "quiet")
        assert (s.checkpoint_error != "") == (kind == "checkpoint-error")
        if kind == "failed-before":
            assert s.failure is not None and s.failure.detail == "exit code 2: out of memory"
    # The steps reported were stored, once, by the first status.
    reports = [s for s in together if _kind(store, s.record.id) == "reports"]
    assert all(store.jobs.get(s.record.id).steps_done == 4000 - s.steps_left for s in reports)


def test_reconcile_acts_on_the_jobs_that_need_it_and_status_then_agrees(
        tmp_path: Path) -> None:
    store, launcher = team(tmp_path, 90)  # 10 of each kind
    lines = service.reconcile(store, launcher, at=NOW)
    assert launcher.asked_many == 1
    by_kind: dict[str, list[int]] = {}
    for record in store.jobs.records():
        by_kind.setdefault(_kind(store, record.id), []).append(record.id)
    for job_id in by_kind["preempted"]:
        [recovery] = store.moves.of_job(job_id)
        assert recovery.kind == "recovery" and recovery.state == "done"
        assert store.jobs.get(job_id).state == "running"
    assert {store.jobs.get(j).state for j in by_kind["succeeded"]} == {"succeeded"}
    assert {store.jobs.get(j).state for j in by_kind["failed"]} == {"failed"}
    for job_id in by_kind["checkpoint-error"]:
        noted = store.jobs.events(job_id)
        assert list(noted[noted["kind"] == "checkpoint"]["detail"]) == [
            "not published: permission denied"]
    for job_id in by_kind["reports"] + by_kind["quiet"]:
        assert store.moves.of_job(job_id) == [] and store.jobs.get(job_id).state == "running"
    for job_id in by_kind["moving"]:  # carried on (this launcher starts them at once)
        assert [m.state for m in store.moves.of_job(job_id)] == ["done"]
    # A line for each preempted, succeeded, failed, checkpoint news and move carried on;
    # and one for each job that reported a step far from its spec's speed.
    flagged = [line for line in lines if "its plan used" in line]
    assert len(lines) - len(flagged) == 10 * 5
    assert not [line for line in service.reconcile(store, launcher, at=NOW)
                if "its plan used" in line]  # said once
    assert all(f"job {j}: checkpoints not published" in "\n".join(lines)
               for j in by_kind["checkpoint-error"])
    # A second pass has nothing to say: the news was logged once.
    assert [line for line in service.reconcile(store, launcher, at=NOW)
            if "checkpoints" in line] == []
    together = service.status(store, launcher, at=NOW, reconcile_first=False)
    for s in together[::10]:
        [alone] = service.status(store, launcher, s.record.id, at=NOW,
                                 reconcile_first=False)
        _same(s, alone)


def _statements(store: PriceStore, run) -> int:  # noqa: ANN001 - a callable
    seen = []
    listener = lambda *args: seen.append(args[2])  # noqa: E731 - the statement
    event.listen(store.jobs.engine, "before_cursor_execute", listener)
    try:
        run()
    finally:
        event.remove(store.jobs.engine, "before_cursor_execute", listener)
    return len(seen)


# Reconciling steps each unfinished move, job by job: those jobs are not in the second case.
@pytest.mark.parametrize(("reconcile_first", "kinds"), [
    (False, ("reports", "quiet", "finished", "failed-before", "moving")),
    (True, ("reports", "quiet", "finished", "failed-before"))])
def test_status_reads_the_store_in_as_many_queries_for_fifty_jobs_as_for_ten(
        tmp_path: Path, reconcile_first: bool, kinds: tuple[str, ...]) -> None:
    counts = []
    for jobs in (10, 50):
        (tmp_path / str(jobs)).mkdir()
        store, launcher = team(tmp_path / str(jobs), jobs, kinds)
        counts.append(_statements(store, partial(
            service.status, store, launcher, at=NOW, reconcile_first=reconcile_first)))
        store.dispose()
    assert counts[0] == counts[1]

"""A pass starts its moves together (leases taken at once, moves created in one
transaction, their steps written in batches) and leaves the store as moving each job one
at a time would: the same moves, placements, job states and events, job by job."""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
from datetime import timedelta
from pathlib import Path

import pytest

from costsched.migration.launcher import Instance, Launcher, LaunchSpec
from costsched.model import Offering
from costsched.service import jobs as service
from costsched.service.jobs import move as move_module
from costsched.service.prices import import_prices
from costsched.store import PriceStore, batch
from tests.costsched.service.test_migrate_many import NOW, ZONES, spec

ROOT = Path(__file__).resolve().parents[3]
JOBS = 15  # a third of them on each zone: those on the dearer ones move (12 of 15)


class FileInstances(Launcher):
    """Instances kept in a JSON file (written at every change, so that they outlive a
    process killed mid-pass), running until told otherwise; it counts the launches of
    each attempt tag."""

    name = "memory"

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock = threading.Lock()
        kept = json.loads(path.read_text()) if path.exists() else {}
        self.rows: dict[str, list] = kept.get("instances", {})
        self.launches: dict[str, int] = kept.get("launches", {})

    def _save(self) -> None:
        self.path.write_text(json.dumps({"instances": self.rows, "launches": self.launches}))

    def add(self, instance_id: str, job_id: int, key: tuple, state: str = "running") -> None:
        with self.lock:
            self.rows[instance_id] = [instance_id, job_id, "a0", list(key), state]
            self._save()

    def _get(self, instance_id: str) -> Instance:
        row = self.rows[instance_id]
        return Instance(row[0], int(row[1]), row[2], tuple(row[3]), row[4])

    def can_launch(self, offering: Offering) -> bool:
        return True

    def launch(self, spec: LaunchSpec) -> Instance:
        with self.lock:
            instance_id = f"m-{spec.job_id}-{spec.attempt}"
            self.launches[spec.attempt] = self.launches.get(spec.attempt, 0) + 1
            self.rows[instance_id] = [instance_id, spec.job_id, spec.attempt,
                                      list(spec.offering.key), "running"]
            self._save()
            return self._get(instance_id)

    def _set(self, instance_id: str, state: str) -> None:
        with self.lock:
            self.rows[instance_id][4] = state
            self._save()

    def status(self, instance_id: str) -> Instance:
        with self.lock:
            return self._get(instance_id)

    def request_stop(self, instance_id: str) -> None:
        self._set(instance_id, "stopped")

    def terminate(self, instance_id: str) -> None:
        self._set(instance_id, "terminated")

    def instances(self, job_id: int | None = None) -> list[Instance]:
        with self.lock:
            return [self._get(i) for i, row in self.rows.items()
                    if job_id is None or int(row[1]) == job_id]


def running_jobs(store: PriceStore, launcher: FileInstances, where: Path, jobs: int = JOBS
                 ) -> list[int]:
    """`jobs` jobs running since six hours before NOW, one zone each in turn, with
    checkpoint stores of their own under `where`."""
    start = NOW - timedelta(hours=6)
    ids = []
    for n in range(jobs):
        job_id = store.jobs.create(f"batched-{n}", {"spec": spec(3 * (n % 4)),
                                                    "source": "test",
                                                    "launcher": launcher.name},
                                   4000, at=start, policy="dynamic-aware",
                                   checkpoint_location=str(where / f"job-{n}"))
        key = ("aws", "us-east-1", ZONES[n % 3], "p3.2xlarge", "spot", "linux")
        store.jobs.transition(job_id, "running", at=start)
        store.jobs.place(job_id, key, gpu_model="V100", gpu_count=1, at=start,
                         usd_per_hour=0.92, reason="launch", instance=f"m-{job_id}")
        store.jobs.record_progress(job_id, 100.0 * (n % 5), at=start + timedelta(hours=1))
        launcher.add(f"m-{job_id}", job_id, key)
        ids.append(job_id)
    return ids


def outcome(path: Path) -> dict[str, list]:
    """What the store holds of the jobs, their moves, placements and events (each job's
    in the order written; the events of different jobs interleave differently)."""
    db = sqlite3.connect(path)
    try:
        return {table: [list(r) for r in db.execute(query)] for table, query in {
            "jobs": "SELECT id, state, steps_done, updated_ts FROM jobs ORDER BY id",
            "moves": "SELECT id, job_id, kind, state, source_instance, candidates, tried, "
                     "target_instance, checkpoint_version, detail, created_ts, updated_ts "
                     "FROM moves ORDER BY id",
            "placements": "SELECT job_id, zone, start_ts, end_ts, usd_per_hour, reason, "
                          "instance FROM placements ORDER BY job_id, start_ts, instance",
            "events": "SELECT job_id, ts, kind, from_state, to_state, "
                      "detail FROM job_events ORDER BY job_id, id",
            "availability": "SELECT zone, event, detail, ts FROM availability ORDER BY detail",
        }.items()}
    finally:
        db.close()


def test_a_batched_pass_leaves_the_store_as_moving_each_job_alone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    built = tmp_path / "built.sqlite"
    store = PriceStore(f"sqlite:///{built}")
    import_prices(store, [ROOT / "examples" / "demo" / "prices-before.csv"], partial=False)
    running_jobs(store, FileInstances(tmp_path / "instances.json"), tmp_path / "ckpt")
    store.dispose()
    copies = {}
    for way in ("alone", "together"):
        shutil.copyfile(built, tmp_path / f"{way}.sqlite")
        shutil.copyfile(tmp_path / "instances.json", tmp_path / f"{way}.json")
        copies[way] = (PriceStore(f"sqlite:///{tmp_path / f'{way}.sqlite'}"),
                       FileInstances(tmp_path / f"{way}.json"))
    alone_store, alone_launcher = copies["alone"]
    advice = [service.migrate(alone_store, alone_launcher, job_id, at=NOW)[0]
              for job_id in alone_store.jobs.ids(["running"])]
    # Batches of a few steps, groups of a few jobs (5, 5 and 2 of the 12 moves): every
    # path of the batching is taken.
    monkeypatch.setattr(batch, "BATCH_STEPS", 4)
    monkeypatch.setattr(move_module, "MOVE_GROUP", 5)
    together = service.migrate(*copies["together"], at=NOW)
    moved = [a.job_id for a in advice if a.started is not None]
    assert 0 < len(moved) < JOBS
    assert [a.job_id for a in together if a.started is not None] == moved
    assert [(a.decision, a.reason) for a in together] == [(a.decision, a.reason)
                                                          for a in advice]
    assert all(a.started.state == "done" for a in together if a.started is not None)
    alone, batched = outcome(tmp_path / "alone.sqlite"), outcome(tmp_path / "together.sqlite")
    assert alone["moves"] and alone["availability"]
    assert batched == alone
    assert copies["together"][1].rows == alone_launcher.rows
    assert set(copies["together"][1].launches.values()) == {1}


def test_a_job_held_by_another_costsched_is_left_out_of_the_batch(tmp_path: Path) -> None:
    store = PriceStore(f"sqlite:///{tmp_path / 'jobs.sqlite'}")
    import_prices(store, [ROOT / "examples" / "demo" / "prices-before.csv"], partial=False)
    launcher = FileInstances(tmp_path / "instances.json")
    running_jobs(store, launcher, tmp_path / "ckpt", jobs=9)
    planned = service.migrate(store, launcher, dry_run=True, at=NOW)
    movers = [a.job_id for a in planned if a.decision.moves]
    held = movers[1]
    assert store.leases.acquire(f"steps:{held}", "other-host:1:abc", 300,
                                NOW.replace(year=2100))
    done = {a.job_id: a for a in service.migrate(store, launcher, at=NOW)}
    assert done[held].started is None
    assert "another costsched is acting on the job" in done[held].reason
    assert store.moves.of_job(held) == []
    assert all(done[j].started is not None for j in movers if j != held)
    # Its lease is still the other's; those the pass took are given back.
    assert [(x.name, x.holder) for x in store.leases.held()] == [
        (f"steps:{held}", "other-host:1:abc")]


def test_a_stop_recorded_while_a_batch_calls_a_launcher_wins(tmp_path: Path) -> None:
    """The user stops one job while the pass's batch asks its source to stop: that job's
    step is left out of the batch's writes, and taken again: it winds the move down; the
    others' moves, in the same batch, finish."""
    store = PriceStore(f"sqlite:///{tmp_path / 'jobs.sqlite'}")
    import_prices(store, [ROOT / "examples" / "demo" / "prices-before.csv"], partial=False)
    launcher = FileInstances(tmp_path / "instances.json")
    running_jobs(store, launcher, tmp_path / "ckpt", jobs=9)
    movers = [a.job_id for a in service.migrate(store, launcher, dry_run=True, at=NOW)
              if a.decision.moves]
    stopped = movers[1]
    asked = launcher.request_stop

    def stop_meanwhile(instance_id: str) -> None:
        if instance_id == f"m-{stopped}":  # another costsched records the user's stop
            PriceStore(store.url).jobs.transition(stopped, "stopped", at=NOW,
                                                  detail="stopped by the user")
        asked(instance_id)

    launcher.request_stop = stop_meanwhile  # type: ignore[method-assign]
    done = {a.job_id: a for a in service.migrate(store, launcher, at=NOW)}
    assert [m.state for m in store.moves.of_job(stopped)] == ["cancelled"]
    assert done[stopped].started is not None and done[stopped].started.state == "cancelled"
    assert store.jobs.get(stopped).state == "stopped"
    assert not [i for i in launcher.instances(stopped) if i.live]
    assert store.jobs.placements(stopped)["end_at"].notna().all()
    for job_id in movers:
        if job_id != stopped:
            assert [m.state for m in store.moves.of_job(job_id)] == ["done"]
            assert store.jobs.get(job_id).state == "running"
    # The stopped job's log: its move planned, the stop, the move wound down; no step of
    # the batch it was left out of.
    log = store.jobs.events(stopped)
    assert list(log["to_state"].dropna())[-2:] == ["stopped", "cancelled"]
    assert "migrating" not in list(log["to_state"].dropna())


def test_a_move_whose_lease_was_lost_mid_pass_is_left_to_its_new_holder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pass renews its jobs' leases as its moves go; a job whose lease another
    costsched took meanwhile (it had expired) is not stepped further by this pass."""
    from costsched.migration import machine

    store = PriceStore(f"sqlite:///{tmp_path / 'jobs.sqlite'}")
    import_prices(store, [ROOT / "examples" / "demo" / "prices-before.csv"], partial=False)
    launcher = FileInstances(tmp_path / "instances.json")
    running_jobs(store, launcher, tmp_path / "ckpt", jobs=9)
    movers = [a.job_id for a in service.migrate(store, launcher, dry_run=True, at=NOW)
              if a.decision.moves]
    lost = movers[0]
    renew = store.leases.renew_many

    def taken_by_another(names: list[str], holder: str, ttl: float, at) -> set[str]:  # noqa: ANN001
        return renew([n for n in names if n != f"steps:{lost}"], holder, ttl, at)

    monkeypatch.setattr(machine, "RENEW_SECONDS", 0.0)  # renewed before every batch
    monkeypatch.setattr(store.leases, "renew_many", taken_by_another)
    service.migrate(store, launcher, at=NOW)
    assert [m.state for m in store.moves.of_job(lost)] == ["planned"]  # left as it was
    assert not [i for i in launcher.instances(lost) if i.attempt != "a0"]  # nothing launched
    assert all([m.state for m in store.moves.of_job(j)] == ["done"] for j in movers[1:])

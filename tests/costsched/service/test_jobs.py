"""A job's life on the local launcher, end to end: plan, launch examples/train.py, migrate it
twice while it trains (prices changed in the store), preempt it once without notice, and it
finishes with the result of an uninterrupted run; each placement costs the stored prices
integrated over it. Real subprocesses, a real SQLite store, a real checkpoint store."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from costsched import clouds
from costsched.model import InvalidInput
from costsched.service import jobs as service
from costsched.service.jobs.decider import JobNow, place
from costsched.store import PriceStore
from launchers.checkpoints import open_store
from launchers.local import LocalLauncher
from tests import real_jobs
from tests.real_jobs import (  # noqa: F401 - other tests name them here
    PACED,
    SETTLE,
    STEPS,
    TRAIN,
    TRAIN_ARGS,
    ZONES,
    offer,
    set_prices,
    wait_for,
    write_spec,
)

world = real_jobs.world  # a store with prices, a local launcher (tests.real_jobs)


def uninterrupted(tmp_path: Path) -> bytes:
    ckpt = tmp_path / "reference"
    subprocess.run([sys.executable, str(TRAIN), *TRAIN_ARGS.split(), "--step-seconds", "0",
                    "--checkpoint-dir", str(ckpt)], check=True, capture_output=True)
    return np.load(ckpt / "checkpoint.npz")["w"].tobytes()


class LiveCounter(threading.Thread):
    """Records the most instances of a job alive at once, polling the launcher."""

    def __init__(self, launcher: LocalLauncher, job_id: int) -> None:
        super().__init__(daemon=True)
        self.launcher, self.job_id, self.most, self.stopped = launcher, job_id, 0, False

    def run(self) -> None:
        while not self.stopped:
            live = [i for i in self.launcher.instances(self.job_id) if i.live]
            self.most = max(self.most, len(live))
            time.sleep(0.02)


def zone_of(store: PriceStore, job_id: int) -> str:
    placements = store.jobs.placements(job_id)
    return str(placements[placements["end_at"].isna()]["zone"].iloc[-1])


@pytest.mark.results
def test_launch_migrate_twice_preempt_and_finish_as_if_uninterrupted(world) -> None:
    store, launcher, tmp = world
    expected = uninterrupted(tmp)
    # The job holds after each step, checkpointed, while this file exists: it is moved and
    # taken away while it trains, never after it ended, however slowly the machine runs it.
    # Held, the job's pace no longer places the moves: once let go, it runs the rest of its
    # steps at 2 ms each (the step's sleep alone: the weights are the same).
    hold = tmp / "hold"
    hold.touch()
    run = f"{sys.executable} {TRAIN} {TRAIN_ARGS} --step-seconds 0.002 --hold-while {hold}"
    [job] = service.launch(store, write_spec(tmp, run=run), launcher=launcher,
                           wait_seconds=SETTLE, checkpoint_root=str(tmp / "checkpoints"))
    counter = LiveCounter(launcher, job.id)
    counter.start()
    assert store.jobs.get(job.id).state == "running"
    assert zone_of(store, job.id) == "us-east-1a"  # the cheapest at launch
    [now] = service.status(store, launcher, job.id)
    assert now.instance_state == "running" and now.decision is None  # not decided yet
    checkpoints = open_store(store.jobs.get(job.id).checkpoint_location)
    wait_for(checkpoints.newest_verified)  # it trains and publishes checkpoints

    # Zone a gets dear, b cheap: the policy moves the job there.
    set_prices(store, {"us-east-1a": 3.0, "us-east-1b": 0.5}, datetime.now(timezone.utc))
    [advice] = service.migrate(store, launcher, job.id)
    assert advice.decision.moves and advice.started is not None
    assert advice.move_usd < advice.stay_usd
    service.settle(store, launcher, SETTLE)
    assert zone_of(store, job.id) == "us-east-1b"
    wait_for(lambda: checkpoints.newest_verified().version > advice.started.checkpoint_version
             if advice.started.checkpoint_version else True)

    # A second move the same day is refused unless forced; forced, the job goes to c.
    set_prices(store, {"us-east-1b": 3.0, "us-east-1c": 0.4}, datetime.now(timezone.utc))
    [refused] = service.migrate(store, launcher, job.id)
    assert refused.started is None and "less than a day ago" in refused.reason
    [now] = service.status(store, launcher, job.id)  # shows the decision kept, not a new one
    assert (now.next, now.decision.decided_by) == (refused.reason, "costsched migrate")
    [second] = service.migrate(store, launcher, job.id, force=True)
    assert second.started is not None
    service.settle(store, launcher, SETTLE)
    assert zone_of(store, job.id) == "us-east-1c"

    # Taken away without notice: recovered from the newest verified checkpoint.
    instance = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    time.sleep(0.5)
    launcher.preempt(instance)
    wait_for(lambda: launcher.status(instance).state == "preempted")
    lines = service.reconcile(store, launcher)
    assert any("preempted; recovery" in line for line in lines)
    hold.unlink()  # the recovered instance runs to the end

    def finished() -> bool:
        service.reconcile(store, launcher)
        return store.jobs.get(job.id).final

    wait_for(finished, seconds=SETTLE, poll=0.3)
    counter.stopped = True
    record = store.jobs.get(job.id)
    assert record.state == "succeeded", store.jobs.events(job.id)[["kind", "detail"]]
    assert counter.most <= 2

    # The same weights as the run that was never stopped, moved or preempted.
    final = checkpoints.newest_verified()
    got = checkpoints.fetch(final, tmp / "final")
    assert np.load(got / "checkpoint.npz")["w"].tobytes() == expected

    # Four placements: launch, two migrations, a recovery; each charged from the stored
    # prices over its own interval.
    status = service.status(store, launcher, job.id)[0]
    placed = status.cost.placements
    assert list(placed["reason"]) == ["launch", "migration", "migration", "recovery"]
    history = store.history()
    for p in placed.itertuples():
        prices = history[history["zone"] == p.zone].sort_values("effective_at")
        assert p.usd == pytest.approx(integrate(prices, p.start_at, p.end_at), rel=1e-9)
    assert status.cost.total_usd == pytest.approx(placed["usd"].sum())

    # The preemption is an availability observation, the local launcher's: kept, but the
    # decision model's rates count neither it nor the spot hours of a simulated instance
    # (a cloud's are counted: tests/costsched/service/test_local_observations.py).
    seen = store.availability.since()
    assert (seen["event"] == "preempted").sum() == 1
    assert set(seen["source"]) == {"local"}
    assert service.measured_rates(store, datetime.now(timezone.utc)) is None


def integrate(prices: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp) -> float:
    """USD of one instance-hour price history over [start, end], step by step."""
    times = list(prices["effective_at"]) + [pd.Timestamp.max.tz_localize("UTC")]
    usd = 0.0
    for (t0, price), t1 in zip(zip(prices["effective_at"], prices["usd_per_hour"],
                                   strict=True), times[1:], strict=True):
        lo, hi = max(t0, start), min(t1, end)
        if hi > lo:
            usd += price * (hi - lo).total_seconds() / 3600
    return usd


def test_bad_launches_are_one_line_and_store_nothing_running(world) -> None:
    store, launcher, tmp = world
    with pytest.raises(InvalidInput, match="offering 'aws:us-east-1z:p9.huge:spot'"):
        service.launch(store, write_spec(tmp), launcher=launcher,
                       offering="aws:us-east-1z:p9.huge:spot",
                       checkpoint_root=str(tmp / "checkpoints"))
    # Credentials are neither stored nor sent: refused before anything is written.
    secret = write_spec(tmp, "t1")
    spec = yaml.safe_load(secret.read_text())
    secret.write_text(yaml.safe_dump({**spec, "envs": {"AWS_SECRET_ACCESS_KEY": "s3cr3t"}}))
    with pytest.raises(InvalidInput, match="field envs.AWS_SECRET_ACCESS_KEY"):
        service.launch(store, secret, launcher=launcher, checkpoint_root=str(tmp / "c"))
    assert store.jobs.find("t1") == []
    # A checkpoint directory that cannot be made (under a file: refused even to root),
    # refused before the job is stored.
    blocker = tmp / "a-file"
    blocker.write_text("not a directory")
    with pytest.raises(InvalidInput, match="launch.checkpoint_root .*a-file"):
        service.launch(store, write_spec(tmp, "t2"), launcher=launcher,
                       checkpoint_root=str(blocker / "sub"))
    assert store.jobs.find("t2") == []
    [job] = service.launch(store, write_spec(tmp, "t3"), launcher=launcher, wait_seconds=10,
                           checkpoint_root=str(tmp / "checkpoints"))
    with pytest.raises(InvalidInput, match="job name 't3': job .* is running"):
        service.launch(store, write_spec(tmp, "t3"), launcher=launcher,
                       checkpoint_root=str(tmp / "checkpoints"))
    stopped = service.stop(store, launcher, job.id)
    assert stopped.state == "stopped"
    assert not [i for i in launcher.instances(job.id) if i.live]


def test_a_command_that_does_not_exist_fails_the_job_in_one_line(world) -> None:
    store, launcher, tmp = world
    [job] = service.launch(store, write_spec(tmp, "nope", run="no-such-command --x"),
                           launcher=launcher, checkpoint_root=str(tmp / "checkpoints"))

    def ended() -> bool:
        service.reconcile(store, launcher)
        return store.jobs.get(job.id).final

    wait_for(ended, seconds=SETTLE)
    record = store.jobs.get(job.id)
    assert record.state == "failed"
    events = store.jobs.events(job.id)
    assert "exit code 127" in events["detail"].iloc[-1]


def test_an_offering_that_just_had_no_capacity_is_tried_last(world) -> None:
    store, launcher, tmp = world
    from costsched.jobspec import resolve
    from costsched.model import Offering
    from costsched.taskfile import load
    from costsched.throughput import ThroughputTable

    now = datetime.now(timezone.utc)
    resolved = resolve(load(write_spec(tmp))[0], ThroughputTable(), now)
    def placed(at: datetime) -> list[str]:
        job = JobNow(resolved, at, "dynamic-aware", "us-east-1", None, resolved.job.steps)
        return [c["key"][2] for c in place(store, job, launcher, at)]

    assert placed(now) == list(ZONES)  # cheapest first
    full = Offering("aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "V100", 1)
    store.availability.record(full, "capacity", at=now - timedelta(minutes=5))
    assert placed(now) == ["us-east-1b", "us-east-1c", "us-east-1a"]
    assert placed(now + service.CAPACITY_COOLDOWN) == list(ZONES)


def test_reconcilers_racing_on_a_move_take_each_step_once(world) -> None:
    """Four costsched processes' worth of reconcilers (threads with stores of their own)
    carry on one migration, then one recovery: each instance is launched and billed once."""
    store, launcher, tmp = world
    [job] = service.launch(store, write_spec(tmp), launcher=launcher, wait_seconds=SETTLE,
                           checkpoint_root=str(tmp / "checkpoints"))
    wait_for(open_store(store.jobs.get(job.id).checkpoint_location).newest_verified)
    stores = [PriceStore(str(tmp / "store.sqlite")) for _ in range(4)]
    errors: list[BaseException] = []

    def race() -> None:
        """Each store reconciles at once, at least once, until no move is left."""
        def reconcile(own: PriceStore) -> None:
            try:
                deadline = time.monotonic() + 30
                service.reconcile(own, launcher)
                while own.moves.unfinished() and time.monotonic() < deadline:
                    service.reconcile(own, launcher)
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        threads = [threading.Thread(target=reconcile, args=(s,)) for s in stores]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    set_prices(store, {"us-east-1a": 3.0, "us-east-1b": 0.5}, datetime.now(timezone.utc))
    [advice] = service.migrate(store, launcher, job.id)
    assert advice.started is not None and advice.started.state == "checkpointing"
    race()
    assert zone_of(store, job.id) == "us-east-1b"

    instance = str(store.jobs.placements(job.id)["instance"].iloc[-1])
    launcher.preempt(instance)
    wait_for(lambda: launcher.status(instance).state == "preempted")
    race()  # each sees the preemption; one recovers the job, and all carry it on
    for own in stores:
        own.dispose()
    assert errors == []
    assert [m.kind for m in store.moves.of_job(job.id)] == ["launch", "migration", "recovery"]
    placed = store.jobs.placements(job.id)
    assert list(placed["reason"]) == ["launch", "migration", "recovery"]
    assert placed["instance"].is_unique
    assert len(launcher.instances(job.id)) == 3  # none launched twice
    assert store.leases.held() == []


def test_a_job_that_leaves_its_checkpoint_interval_to_costsched_is_told_it(world) -> None:
    from costsched.optimize import checkpoint_interval

    store, launcher, tmp = world
    out = tmp / "interval.txt"
    path = write_spec(tmp, "auto", run=f"echo $COSTSCHED_CHECKPOINT_MINUTES > {out}")
    spec = yaml.safe_load(path.read_text())
    spec["checkpoint"]["interval_minutes"] = "auto"
    path.write_text(yaml.safe_dump(spec))
    [job] = service.launch(store, path, launcher=launcher,
                           checkpoint_root=str(tmp / "checkpoints"))

    def ended() -> bool:
        service.reconcile(store, launcher)
        return store.jobs.get(job.id).final

    wait_for(ended, seconds=SETTLE)
    expected = checkpoint_interval.interval_minutes(
        1.0, clouds.default_preemption("aws").per_hour)  # the spec's 1 GB, AWS only
    assert out.read_text().strip() == f"{expected:g}"

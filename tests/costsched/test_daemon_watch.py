"""The daemon's watcher: a job preempted while the daemon runs is recovered by the watcher
(it looks every watch interval), with no `status` run and no scheduled task due;
`daemon --once` looks once.
The local launcher running examples/train.py, a real SQLite store."""

from __future__ import annotations

from pathlib import Path

import pytest

from costsched.config import Config
from costsched.daemon import Daemon
from tests.costsched.service.test_jobs import wait_for
from tests.costsched.test_daemon import running_job  # noqa: F401


def open_instance(store, job_id: int) -> str:  # noqa: ANN001
    placements = store.jobs.placements(job_id)
    open_ = placements[placements["end_at"].isna()]["instance"]
    return "" if open_.empty else str(open_.iloc[-1])


def test_a_preempted_job_is_recovered_by_the_watcher(running_job) -> None:  # noqa: F811
    store, launcher, job_id = running_job
    config = Config.model_validate({"daemon": {"watch_seconds": 1}})
    daemon = Daemon(store, config, launchers=lambda name: launcher)
    assert daemon.watch_seconds == 1
    daemon.start()
    try:
        first = open_instance(store, job_id)
        launcher.preempt(first)

        def recovered() -> bool:
            record = store.jobs.get(job_id)
            return record.state == "running" and open_instance(store, job_id) not in ("", first)

        wait_for(recovered, seconds=300, poll=0.1)  # a bound on a hang, not on speed
    finally:
        daemon.stop()
    moves = store.moves.of_job(job_id)
    assert [m.kind for m in moves] == ["launch", "recovery"] and moves[-1].state == "done"
    assert launcher.status(open_instance(store, job_id)).state == "running"
    assert store.leases.held() == []


def test_one_look_recovers_a_preempted_job(running_job) -> None:  # noqa: F811
    """What `daemon --once` does before its due tasks (none is run here)."""
    store, launcher, job_id = running_job
    first = open_instance(store, job_id)
    launcher.preempt(first)
    wait_for(lambda: launcher.status(first).state == "preempted")
    lines = Daemon(store, Config(), launchers=lambda name: launcher).watch()
    assert any("preempted; recovery" in line for line in lines)
    assert store.jobs.get(job_id).state == "running"
    assert open_instance(store, job_id) not in ("", first)
    assert store.task_runs.last("collect") is None  # no scheduled task ran


@pytest.mark.parametrize("value", [0, -1, "soon", float("inf")])
def test_watch_seconds_must_be_a_positive_finite_number(value: object) -> None:
    with pytest.raises(ValueError, match="watch_seconds"):
        Config.model_validate({"daemon": {"watch_seconds": value}})


def test_the_default_watch_interval_is_30_seconds(tmp_path: Path) -> None:
    assert Config().daemon.watch_seconds == 30

"""The supervisor's passes over a store where it has no value for one job's secret (the
job was started from a shell that gave it, after the supervisor started): that job waits,
`recovering`, said once in the supervisor's log; the other jobs are recovered at each pass;
once a supervisor that holds the value watches, the job is recovered. In process: the
supervisor's passes over an in-memory launcher."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from costsched import launch_secrets
from costsched.config import Config
from costsched.daemon.supervisor import Supervisor
from costsched.service import jobs as service
from costsched.service.jobs.runs import _open_placement
from costsched.store import PriceStore
from costsched.store.leases import holder_name
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_jobs import set_prices
from tests.costsched.service.test_start_secrets import VALUE, _spec, launch_two

WATCH = Config.model_validate({"daemon": {"autostart": True, "watch_seconds": 30}})


def test_the_supervisor_says_once_that_a_recovery_waits_for_a_secret_and_goes_on(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    launcher, sec, plain = launch_two(store, tmp_path, monkeypatch)  # no value held
    supervising = Supervisor(store, WATCH, holder=holder_name(), launchers=lambda _: launcher)

    def preempt(job: int) -> None:
        launcher.set(str(_open_placement(store, job)["instance"]), "preempted")

    caplog.set_level(logging.INFO, logger="costsched.daemon")
    preempt(sec)
    for _ in range(2):  # two passes: each recovers `plain`, preempted before it
        preempt(plain)
        supervising.watch()
        assert store.jobs.get(plain).state == "running"
    said = [r.getMessage() for r in caplog.records if "waits for secret" in r.getMessage()]
    assert len(said) == 1 and "level=warning" in said[0] and VALUE not in said[0]
    assert (f'detail="job {sec}: recovery waits for secret KM_TOKEN (the supervisor\'s '
            "environment lacks it): `costsched daemon stop`, then `costsched daemon start` in "
            'a shell that sets KM_TOKEN, gives it"') in said[0]
    assert not [r for r in caplog.records if "level=error" in r.getMessage()]
    assert store.jobs.get(sec).state == "recovering"
    assert sum(m.kind == "recovery" for m in store.moves.of_job(plain)) == 2

    monkeypatch.setenv("KM_TOKEN", VALUE)  # a supervisor started from a shell that sets it
    supervising.watch()
    assert store.jobs.get(sec).state == "running"
    assert _open_placement(store, sec) is not None
    assert [m.kind for m in store.moves.of_job(sec)] == ["launch", "recovery"]


def test_the_supervisor_says_once_and_before_a_preemption_that_a_recovery_would_wait(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """A job started from a shell that gave its secret, watched by a supervisor started
    earlier without it: `status` says so under the running job before any preemption."""
    monkeypatch.delenv("KM_TOKEN", raising=False)
    set_prices(store, {"us-east-1a": 1.0}, datetime.now(timezone.utc) - timedelta(hours=1))
    launcher = FakeLauncher()
    [sec] = service.launch(store, _spec(tmp_path, "sec", ["KM_TOKEN"]), launcher=launcher,
                           checkpoint_root=str(tmp_path / "ckpt"), secrets={"KM_TOKEN": VALUE})
    monkeypatch.setattr(launch_secrets, "_GIVEN", {})
    supervising = Supervisor(store, WATCH, holder=holder_name(), launchers=lambda _: launcher)
    caplog.set_level(logging.INFO, logger="costsched.daemon")
    for _ in range(2):
        supervising.watch()
    said = [r.getMessage() for r in caplog.records if "would wait" in r.getMessage()]
    line = ("a recovery would wait for secret KM_TOKEN (the supervisor's environment lacks "
            "it): `costsched daemon stop`, then `costsched daemon start` in a shell that sets "
            "KM_TOKEN, gives it")
    assert len(said) == 1 and f'detail="job {sec.id}: {line}"' in said[0]
    [shown] = service.status(store, launcher, reconcile_first=False)
    assert shown.record.state == "running" and shown.waits == line
    service.status(store, launcher)  # a shell's look (no daemon) neither says nor unsays it
    assert service.status(store, launcher, reconcile_first=False)[0].waits == line
    monkeypatch.setenv("KM_TOKEN", VALUE)  # a supervisor that holds it: the line is gone
    supervising.watch()
    assert service.status(store, launcher, reconcile_first=False)[0].waits == ""

"""Recovery armed for every job but one whose secret the watching daemon lacks: `daemon
start` names that job, the secret and the fix (and exits 1: done in part), `status`'s
"Recovery armed" line says "except job N" instead of "(ok)", and a recovery that only
waits for the secret is not counted until it happens. In process: a supervisor's passes
over an in-memory launcher; `daemon start` with the supervisor it would start stood in
for."""

from __future__ import annotations

import json
import socket
from datetime import datetime, timezone
from pathlib import Path

import pytest

from costsched.config import Config
from costsched.daemon import autostart
from costsched.daemon.supervision import Watching, recovery
from costsched.daemon.supervisor import Supervisor
from costsched.service import jobs as service
from costsched.service.jobs.runs import _open_placement
from costsched.store import PriceStore
from costsched.store.leases import holder_name
from tests.costsched.service.test_start_secrets import VALUE, launch_two

WATCH = Config.model_validate({"daemon": {"autostart": True, "watch_seconds": 30}})


def test_status_says_recovery_is_armed_except_for_the_job_the_daemon_cannot_recover(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    launcher, sec, plain = launch_two(store, tmp_path, monkeypatch)  # no value held
    supervising = Supervisor(store, WATCH, holder=holder_name(), launchers=lambda _: launcher)
    now = datetime.now(timezone.utc)
    store.daemons.register(supervising.holder, kind="service", tasks=(), watch_seconds=30,
                           log="", at=now)
    supervising.watch()  # says, before a preemption, that a recovery of `sec` would wait

    armed = recovery(store, WATCH, datetime.now(timezone.utc))
    line = armed.line(datetime.now(timezone.utc)) or ""
    assert line.startswith(f"Recovery armed, except job {sec}: waits for KM_TOKEN "
                           f"(`costsched status {sec}` says the fix): daemon pid "), line
    assert "(ok)" not in line and "last pass" in line
    doc = armed.document(datetime.now(timezone.utc))
    assert doc["armed"] is True
    assert doc["blocked"] == [{"job_id": sec, "name": "sec", "secrets": ["KM_TOKEN"]}]

    # Preempted: its recovery waits, and is no recovery yet (the other job's is).
    for job in (sec, plain):
        launcher.set(str(_open_placement(store, job)["instance"]), "preempted")
    supervising.watch()
    shown = {s.record.id: s for s in service.status(store, launcher, reconcile_first=False)}
    assert shown[sec].record.state == "recovering" and shown[sec].recoveries == 0
    assert shown[plain].record.state == "running" and shown[plain].recoveries == 1
    assert "except job" in (recovery(store, WATCH, now).line(now) or "")

    monkeypatch.setenv("KM_TOKEN", VALUE)  # a daemon that holds it: recovered, and ok again
    supervising.watch()
    [again] = service.status(store, launcher, sec, reconcile_first=False)
    assert again.record.state == "running" and again.recoveries == 1
    line = recovery(store, WATCH, datetime.now(timezone.utc)).line(
        datetime.now(timezone.utc)) or ""
    assert line.startswith("Recovery armed: daemon pid ") and line.endswith("(ok)"), line


def _standing_in(started: bool):  # noqa: ANN202
    """`autostart.ensure` as it answers when it started a supervisor (or found one)."""
    watcher = Watching(4321, socket.gethostname(), True, "auto", 30.0, "/tmp/x.daemon.log",
                       datetime.now(timezone.utc), None, "", "")
    return lambda *args, **kwargs: autostart.Arming(watcher, started=started)


def test_daemon_start_from_a_shell_without_a_jobs_secret_says_its_recovery_is_not_armed(
        cli, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    store = PriceStore(str(db_path))
    _, sec, _ = launch_two(store, tmp_path, monkeypatch)  # this shell lacks KM_TOKEN
    monkeypatch.setattr(autostart, "ensure", _standing_in(started=True))
    said = cli("daemon", "start")
    assert said.exit_code == 1, said.output
    lines = said.output.splitlines()
    assert lines[0] == ("Recovery armed: supervisor pid 4321 watches this store every 30 s; "
                        "log: /tmp/x.daemon.log")
    assert lines[1:] == [
        f"Recovery not armed for job {sec} (sec): this shell lacks KM_TOKEN, and so does the "
        "supervisor pid 4321 started from it, so a preemption of the job would wait; "
        "`costsched daemon stop`, then `costsched daemon start` in a shell that sets "
        "KM_TOKEN, arms it (the other jobs are watched)."]
    doc = json.loads(cli("daemon", "start", "--json").stdout)
    assert doc["armed"] is True
    assert [(n["job_id"], n["secrets"]) for n in doc["not_armed"]] == [(sec, ["KM_TOKEN"])]

    monkeypatch.setenv("KM_TOKEN", VALUE)  # from a shell that sets it: armed for every job
    said = cli("daemon", "start")
    assert said.exit_code == 0 and said.output.count("\n") == 1, said.output
    store.dispose()


def test_daemon_start_names_a_job_the_running_supervisor_said_it_cannot_recover(
        cli, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    store = PriceStore(str(db_path))
    launcher, sec, _ = launch_two(store, tmp_path, monkeypatch)
    Supervisor(store, WATCH, holder=holder_name(), launchers=lambda _: launcher).watch()
    monkeypatch.setenv("KM_TOKEN", VALUE)  # this shell has it: the supervisor does not
    monkeypatch.setattr(autostart, "ensure", _standing_in(started=False))
    said = cli("daemon", "start")
    assert said.exit_code == 1, said.output
    assert (f"Recovery not armed for job {sec} (sec): the supervisor pid 4321 that watches "
            "this store lacks KM_TOKEN, so a preemption of the job would wait; `costsched "
            "daemon stop`, then `costsched daemon start` in a shell that sets KM_TOKEN, arms "
            "it (the other jobs are watched).") in said.output
    assert VALUE not in said.output
    store.dispose()

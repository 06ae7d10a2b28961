"""`costsched daemon start | stop | status` and the recovery lines of `launch` and `status`:
each hint printed is run, and does what it says."""

from __future__ import annotations

import os
import re
import shlex
import time
from datetime import datetime, timezone

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.config import Config
from costsched.daemon import Daemon
from costsched.daemon.supervisor import SUPERVISOR_LEASE
from costsched.store.leases import process_gone
from tests.costsched.daemon.conftest import World, daemons_of


def invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def hint(text: str) -> list[str]:
    """The last command in backquotes of a line (the fix), as argv for the CLI (without
    `costsched`)."""
    found = re.findall(r"`(costsched [^`]+)`", text)
    assert found, text
    return shlex.split(found[-1])[1:]


def test_with_autostart_off_a_launch_starts_none_and_the_hint_arms_recovery(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COSTSCHED_DAEMON_AUTOSTART", "false")
    said = invoke("launch", str(world.sleeper("nap")), "--wait", "0")
    assert ("Recovery depends on your daemon (daemon.autostart is off), and none watches "
            "this store now; `costsched daemon start` starts one.") in said
    assert daemons_of(world.store.url) == [] and world.store.leases.held() == []

    # status names the fix (with the store it was given), and the fix works.
    shown = invoke("status", "--no-reconcile", "--db", str(world.db))
    [line] = [x for x in shown.splitlines() if x.startswith("Recovery not armed")]
    fix = hint(line)
    assert fix == ["daemon", "start", "--db", str(world.db)]
    armed = re.search(r"Recovery armed: supervisor pid (\d+) watches this store every 1 s; "
                      r"log: (\S+)", invoke(*fix))
    assert armed and daemons_of(world.store.url) == [int(armed[1])]
    pid = int(armed[1])
    again = invoke("status", "--no-reconcile")
    assert f"Recovery armed: supervisor pid {pid} watches this store every 1 s;" in again
    # Its scheduled tasks have not run: status says who runs them, not to start a daemon.
    assert "never run" not in again
    [line] = [x for x in again.splitlines() if x.startswith("Scheduled optimizer:")]
    assert line == ("Scheduled optimizer: the supervisor re-plans the running jobs on "
                    "schedule.replan (30 * * * *), no run yet; prices are collected by "
                    "`costsched collect`, or on their schedule by `costsched daemon "
                    "install`.")
    assert "[Install]" in invoke(*hint(line), "--print", "--kind", "systemd")
    # `daemon status` says who started it (once it has said itself): `daemon start` too.
    deadline = time.monotonic() + 60
    while f"pid {pid}: starting;" in (said := " ".join(invoke("daemon", "status").split())):
        assert time.monotonic() < deadline, said
        time.sleep(0.2)
    assert (f"supervisor pid {pid}: started in the background by a launch or `costsched "
            "daemon start` (ends when no job is left)") in said

    # `daemon stop` ends it, and says how to arm recovery again (which works too).
    stopped = invoke("daemon", "stop")
    assert f"Stopped supervisor pid {pid}." in stopped and process_gone(pid)
    [line] = [x for x in stopped.splitlines() if x.startswith("Recovery is not armed now")]
    rearmed = re.search(r"supervisor pid (\d+)", invoke(*hint(line)))
    assert rearmed and int(rearmed[1]) != pid  # (the fixture ends it)


def test_daemon_start_with_no_job_starts_nothing(world: World) -> None:
    said = invoke("daemon", "start")
    assert said.startswith("No job runs in this store: nothing to watch")
    assert world.store.leases.held() == []


def test_daemon_status_says_who_watches_since_when_its_last_pass_and_its_log(
        world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")  # no crontab, no systemctl: nothing installed
    import json

    empty = json.loads(invoke("daemon", "status", "--json"))
    assert empty["running"] is False and empty["daemons"] == [] and empty["fix"] is None
    assert empty["installed"] is None
    assert empty["log"] == str(world.db.with_name("store.supervisor.log"))
    assert "No daemon watches this store. A launch starts one when it starts a job." in \
        invoke("daemon", "status")

    daemon = Daemon(world.store, Config.model_validate({"daemon": {"watch_seconds": 30}}),
                    tasks=(), log="/var/log/mine.log")
    daemon.start()
    try:
        daemon.watch()  # one look, recorded
        doc = json.loads(invoke("daemon", "status", "--json"))
        text = invoke("daemon", "status")
    finally:
        daemon.stop()
    assert doc["running"] is True
    [row] = doc["daemons"]
    assert (row["pid"], row["kind"], row["watch_seconds"], row["log"]) == \
        (os.getpid(), "service", 30.0, "/var/log/mine.log")
    assert row["last_pass"]["status"] == "ok"
    assert row["last_pass"]["detail"] == "0 jobs watched"
    assert datetime.fromisoformat(row["started_at"].replace("Z", "+00:00")) <= \
        datetime.now(timezone.utc)
    assert re.search(rf"daemon pid {os.getpid()}: started by hand or by your service "
                     r"manager, since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(\d+ s ago\); "
                     r"watches every 30 s; last pass \d+ s ago \(ok\): 0 jobs watched; "
                     r"log: /var/log/mine.log", text), text
    assert json.loads(invoke("daemon", "status", "--json"))["running"] is False
    assert world.store.leases.holder_of(SUPERVISOR_LEASE, datetime.now(timezone.utc)) is None

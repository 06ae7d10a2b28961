"""The supervisor's rules, in process (no process is started): a launch starts one only
when no daemon watches the store and a job runs; one per store (its lease); it takes the
lease over from the launch that started it; it ends once no job is left, never while a
launch is storing one; the lines a launch prints."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest

from costsched import launch_secrets
from costsched.config import Config
from costsched.daemon import autostart, supervisor
from costsched.daemon.supervision import LAUNCHING, recovery, watching
from costsched.daemon.supervisor import SUPERVISOR_LEASE, Supervisor
from costsched.store import PriceStore
from costsched.store.leases import holder_name

ON = Config.model_validate({"daemon": {"autostart": True, "watch_seconds": 5}})
OFF = Config.model_validate({"daemon": {"autostart": False}})


def now() -> datetime:
    return datetime.now(timezone.utc)


def live_job(store: PriceStore, name: str = "train") -> int:
    return store.jobs.create(name, {"spec": {}, "launcher": "local"}, 100, at=now())


@pytest.fixture()
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """`autostart._spawn` recorded, the "supervisor" being this process (alive throughout)."""
    calls: list[dict] = []

    def spawn(url: str, log: Path, tag: str, take_over: str, extra: dict) -> SimpleNamespace:
        calls.append({"url": url, "log": log, "tag": tag, "take_over": take_over,
                      "extra": extra})
        return SimpleNamespace(pid=os.getpid())

    monkeypatch.setattr(autostart, "_spawn", spawn)
    return calls


def gone_pid() -> int:
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    return done.pid


def test_a_launch_starts_a_supervisor_only_when_a_job_runs_and_none_watches(
        store: PriceStore, spawned: list[dict]) -> None:
    idle = autostart.ensure(store, ON)
    assert idle.idle and idle.line() is None and spawned == []  # nothing to watch
    live_job(store)
    first = autostart.ensure(store, ON, env={"COSTSCHED_INSTANCES": "/x"})
    assert first.started and first.watcher.pid == os.getpid()
    assert len(spawned) == 1 and spawned[0]["extra"] == {"COSTSCHED_INSTANCES": "/x"}
    assert spawned[0]["take_over"].rpartition(":")[2].startswith(LAUNCHING)
    log = store.url.removeprefix("sqlite:///").replace("prices.sqlite", "prices.supervisor.log")
    assert first.line() == (f"Recovery armed: supervisor pid {os.getpid()} watches this "
                            f"store every 5 s; log: {log}")
    # The lease is the supervisor's now (host:pid:tag, the tag on its command line).
    holder = f"{socket.gethostname()}:{os.getpid()}:{spawned[0]['tag']}"
    assert store.leases.holder_of(SUPERVISOR_LEASE, now()) == holder

    again = autostart.ensure(store, ON)
    assert not again.started and len(spawned) == 1
    assert again.line().startswith(f"Recovery armed: supervisor pid {os.getpid()} (started "
                                   "earlier) watches this store every 5 s")

    # Once it has ended (its lease given up), a later launch starts another.
    store.leases.release(SUPERVISOR_LEASE, holder)
    assert autostart.ensure(store, ON).started and len(spawned) == 2


def test_launches_arming_at_once_start_one_supervisor(store: PriceStore,
                                                      spawned: list[dict]) -> None:
    """Eight launches (each its own connection to the store) ask at the same instant."""
    live_job(store)
    start = threading.Barrier(8)
    said: list[autostart.Arming] = []

    def launch() -> None:
        own = PriceStore(store.url)
        start.wait()
        said.append(autostart.ensure(own, ON))
        own.dispose()

    threads = [threading.Thread(target=launch) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(spawned) == 1 and sum(a.started for a in said) == 1
    assert {a.watcher.pid for a in said} == {os.getpid()}  # each names the one started
    holder = f"{socket.gethostname()}:{os.getpid()}:{spawned[0]['tag']}"
    assert store.leases.holder_of(SUPERVISOR_LEASE, now()) == holder


def test_with_autostart_off_a_launch_starts_none_but_daemon_start_does(
        store: PriceStore, spawned: list[dict]) -> None:
    live_job(store)
    off = autostart.ensure(store, OFF)
    assert off.off and spawned == [] and store.leases.held() == []
    assert off.line() == ("Recovery depends on your daemon (daemon.autostart is off), and "
                          "none watches this store now; `costsched daemon start` starts one.")
    assert autostart.ensure(store, OFF, explicit=True).started and len(spawned) == 1


def test_a_daemon_run_as_a_service_arms_recovery(store: PriceStore,
                                                  spawned: list[dict]) -> None:
    live_job(store)
    store.daemons.register(holder_name(), kind="service", tasks=("collect", "replan"),
                           watch_seconds=30, log="", at=now())
    armed = autostart.ensure(store, OFF)
    assert spawned == [] and armed.line() == (f"Recovery armed: daemon pid {os.getpid()} "
                                              "watches this store every 30 s")
    # A daemon that does not watch (watch_seconds 0) arms nothing.
    store.daemons.unregister(store.daemons.rows()[0].holder)
    store.daemons.register(holder_name(), kind="service", tasks=("collect",),
                           watch_seconds=0, log="", at=now())
    assert autostart.ensure(store, ON).started


def test_a_launch_racing_another_names_the_supervisor_the_other_starts(
        store: PriceStore, spawned: list[dict], monkeypatch: pytest.MonkeyPatch) -> None:
    live_job(store)
    placeholder = f"{socket.gethostname()}:{os.getpid()}:{LAUNCHING}other"
    assert store.leases.acquire(SUPERVISOR_LEASE, placeholder, 60, now())
    monkeypatch.setattr(autostart, "HAND_OVER_WAIT", 0.2)
    starting = autostart.ensure(store, ON)  # the other never hands it over
    assert spawned == [] and starting.watcher.pid is None
    assert starting.line().startswith("Recovery armed: supervisor (starting) watches")

    def hand_over() -> None:
        time.sleep(0.1)
        store.leases.hand_over(SUPERVISOR_LEASE, placeholder,
                               f"{socket.gethostname()}:{os.getpid()}:theirs")

    monkeypatch.setattr(autostart, "HAND_OVER_WAIT", 10.0)
    threading.Thread(target=hand_over).start()
    named = autostart.ensure(store, ON)
    assert spawned == [] and named.watcher.pid == os.getpid()


def test_a_supervisor_that_cannot_start_says_so_and_frees_the_lease(
        store: PriceStore, monkeypatch: pytest.MonkeyPatch) -> None:
    live_job(store)

    def broken(*_args: object) -> None:
        raise FileNotFoundError(2, "No such file or directory")

    monkeypatch.setattr(autostart, "_spawn", broken)
    failed = autostart.ensure(store, ON)
    assert failed.error and store.leases.held() == []
    assert failed.line() == (f"Recovery not armed: the supervisor could not be started "
                             f"({sys.executable}: No such file or directory); `costsched "
                             "daemon start` tries again.")


def test_the_supervisor_starts_in_a_session_of_its_own_with_what_it_needs(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict = {}

    class Popen:
        pid = 4242

        def __init__(self, argv: list[str], **options: object) -> None:
            seen.update(options, argv=argv)

        def wait(self) -> int:
            return 0

    monkeypatch.setattr(autostart.subprocess, "Popen", Popen)
    monkeypatch.setenv("COSTSCHED_CONFIG", "relative.toml")
    monkeypatch.chdir(tmp_path)
    launch_secrets.keep(99, {"HF_TOKEN": "hf-secret"})
    try:
        log = tmp_path / "s.daemon.log"
        autostart._spawn(store.url, log, "t1", "h:1:launching-x", {"COSTSCHED_INSTANCES": "/i"})
    finally:
        launch_secrets._GIVEN.pop(99)
    assert seen["start_new_session"] is True and seen["stdin"] == subprocess.DEVNULL
    assert seen["argv"][-8:] == ["daemon", "supervise", "--tag", "t1", "--take-over",
                                 "h:1:launching-x", "--log", str(log)]
    env = seen["env"]
    assert env["COSTSCHED_DB"] == store.url and env["COSTSCHED_INSTANCES"] == "/i"
    assert env["COSTSCHED_CONFIG"] == str(tmp_path / "relative.toml")
    assert env["HF_TOKEN"] == "hf-secret"  # a recovery starts the job with its secrets
    assert log.exists()


# --- the supervisor ----------------------------------------------------------------------


def test_one_supervisor_per_store_and_it_takes_the_lease_over_from_its_launch(
        store: PriceStore) -> None:
    placeholder = f"{socket.gethostname()}:{os.getpid()}:{LAUNCHING}x"
    assert store.leases.acquire(SUPERVISOR_LEASE, placeholder, 60, now())
    mine = Supervisor(store, ON, holder=holder_name(), take_over=placeholder)
    other = Supervisor(store, ON, holder=holder_name(), take_over="nobody")
    assert mine.claim() and store.leases.holder_of(SUPERVISOR_LEASE, now()) == mine.holder
    assert not other.claim()
    # A holder of this host whose process is gone does not keep the lease.
    dead = f"{socket.gethostname()}:{gone_pid()}:x"
    store.leases.release(SUPERVISOR_LEASE, mine.holder)
    assert store.leases.acquire(SUPERVISOR_LEASE, dead, 60, now())
    assert other.claim()


def test_a_supervisor_ends_once_no_job_is_left(store: PriceStore) -> None:
    job = live_job(store)
    s = Supervisor(store, ON, holder=holder_name(), idle_seconds=0)
    assert s.claim()
    s._end_when_idle()
    assert not s.stopping.is_set()  # a job runs
    store.jobs.transition(job, "stopped", at=now(), expect="pending")
    s._end_when_idle()
    assert s.stopping.is_set()
    assert store.leases.holder_of(SUPERVISOR_LEASE, now()) is None


def test_a_supervisor_waits_its_idle_seconds(store: PriceStore) -> None:
    s = Supervisor(store, ON, holder=holder_name(), idle_seconds=3600)
    assert s.claim()
    s._end_when_idle()
    s._end_when_idle()
    assert not s.stopping.is_set()
    assert Supervisor(store, Config(), holder="h").idle_seconds == 60  # the default


def test_a_job_stored_as_the_supervisor_lets_go_is_still_watched(
        store: PriceStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """The lease is given up before the last look: a launch that stored its job before it
    is watched by this supervisor (which takes the lease back)."""
    looks = iter([[], [7]])
    monkeypatch.setattr(supervisor, "live_jobs", lambda _store: next(looks))
    s = Supervisor(store, ON, holder=holder_name(), idle_seconds=0)
    assert s.claim()
    s._end_when_idle()
    assert not s.stopping.is_set()
    assert store.leases.holder_of(SUPERVISOR_LEASE, now()) == s.holder


def test_a_supervisor_whose_lease_was_taken_stops(store: PriceStore) -> None:
    s = Supervisor(store, ON, holder=holder_name())
    assert s.claim()
    store.leases.release(SUPERVISOR_LEASE, s.holder)
    assert store.leases.acquire(SUPERVISOR_LEASE, holder_name(), 60, now())
    s._beaten = 0.0  # its heartbeat is due
    s.tick()
    assert s.stopping.is_set()


# --- who watches --------------------------------------------------------------------------


def test_a_supervisor_row_counts_only_while_it_holds_the_lease(store: PriceStore) -> None:
    holder = holder_name()
    store.daemons.register(holder, kind="auto", tasks=("replan",), watch_seconds=30,
                           log="/l", at=now())
    assert watching(store, ON, now()) == []  # it has let go: on its way out
    assert store.leases.acquire(SUPERVISOR_LEASE, holder, 60, now())
    [w] = watching(store, ON, now())
    assert (w.kind, w.pid, w.log) == ("auto", os.getpid(), "/l")


def test_the_rows_of_daemons_that_are_gone_are_ignored_and_pruned(store: PriceStore) -> None:
    dead = f"{socket.gethostname()}:{gone_pid()}:x"
    store.daemons.register(dead, kind="service", tasks=(), watch_seconds=30, log="",
                           at=now())
    elsewhere = "another-host:12:x"
    store.daemons.register(elsewhere, kind="service", tasks=(), watch_seconds=30, log="",
                           at=now())
    assert [r.holder for r in store.daemons.running(now())] == [elsewhere]
    assert store.daemons.prune(now()) == 1
    [w] = watching(store, ON, now())
    assert w.who() == "daemon pid 12 on host another-host"


def test_status_says_whether_recovery_is_armed_and_the_fix(store: PriceStore) -> None:
    at = now()
    assert recovery(store, ON, at).line(at) is None  # no job, no daemon: nothing to say
    live_job(store)
    unarmed = recovery(store, ON, at, db="my store.sqlite")
    assert unarmed.fix() == "costsched daemon start --db 'my store.sqlite'"
    assert unarmed.line(at) == ("Recovery not armed: no daemon watches this store, so a "
                                "preempted job waits for the next `costsched status`; "
                                "`costsched daemon start --db 'my store.sqlite'` starts one.")
    assert "(daemon.autostart is off: recovery depends on your daemon service)" in \
        recovery(store, OFF, at).line(at)
    holder = holder_name()
    store.leases.acquire(SUPERVISOR_LEASE, holder, 60, at)
    store.daemons.register(holder, kind="auto", tasks=("replan",), watch_seconds=5,
                           log="/l", at=at)
    assert recovery(store, ON, at).line(at) == (
        f"Recovery armed: supervisor pid {os.getpid()} watches this store every 5 s; no pass "
        "yet; log: /l")
    store.daemons.passed(holder, "ok", "1 job watched", at)
    armed = recovery(store, ON, at)
    assert re.search(r"; last pass \d s ago \(ok\); ", armed.line(at)) and armed.fix() is None
    assert armed.document(at)["daemons"][0]["last_pass"]["detail"] == "1 job watched"
    # --json and the dashboard carry the line the text prints, and who runs the tasks.
    assert armed.document(at)["line"] == armed.line(at)
    assert armed.document(at)["unscheduled"].startswith(
        "Scheduled optimizer: the supervisor re-plans the running jobs on schedule.replan")
    assert unarmed.document(at)["unscheduled"] is None  # nothing runs them: never run


def a_launch_that_failed_over(store: PriceStore, ended_ago: float) -> int:
    """A job whose launch tried two offerings and failed `ended_ago` seconds ago: a create
    it sent may still show up, to be swept."""
    from datetime import timedelta

    at = now() - timedelta(seconds=ended_ago)
    job = store.jobs.create("lost", {"launcher": "aws"}, 100, at=at)
    key = ["aws", "us-east-1", "us-east-1a", "p3.2xlarge", "spot", "linux"]
    move = store.moves.create(job, "launch", [{"key": key, "gpu_model": "V100",
                                                "gpu_count": 1, "usd_per_hour": 0.9}] * 2,
                              at=at)
    store.moves.advance(move, "failed", at=at, tried=2)
    store.jobs.transition(job, "failed", at=at, expect="pending")
    return job


def test_a_supervisor_stays_until_a_launch_that_failed_over_is_swept(
        store: PriceStore, spawned: list[dict]) -> None:
    a_launch_that_failed_over(store, ended_ago=60)
    armed = autostart.ensure(store, ON)  # no job runs, but a sweep is owed
    assert armed.started and len(spawned) == 1
    # Said as what it is: no recovery is armed for a job, a failed launch is swept.
    assert armed.sweep_only and armed.line().startswith(
        "No job runs; supervisor pid ") and "Recovery armed" not in armed.line()
    assert "watches this store a while for an instance the failed launch may have left, " \
        "to end it" in armed.line()
    store.leases.release(SUPERVISOR_LEASE, store.leases.holder_of(SUPERVISOR_LEASE, now()))
    s = Supervisor(store, ON, holder=holder_name(), idle_seconds=0)
    assert s.claim()
    s._end_when_idle()
    assert not s.stopping.is_set()


def test_a_supervisor_ends_once_the_failed_over_launch_is_past_its_sweep(
        store: PriceStore, spawned: list[dict]) -> None:
    from costsched.service.jobs.sweep import GRACE_SECONDS, SWEEP_SECONDS

    a_launch_that_failed_over(store, ended_ago=GRACE_SECONDS + SWEEP_SECONDS + 60)
    assert autostart.ensure(store, ON).idle and spawned == []
    s = Supervisor(store, ON, holder=holder_name(), idle_seconds=0)
    assert s.claim()
    s._end_when_idle()
    assert s.stopping.is_set()


def test_a_supervisor_whose_store_file_is_deleted_exits(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A live job in a store whose file was deleted (a test's folder, a store given up)
    would keep its supervisor running for ever: it exits at its next look."""
    path = tmp_path / "gone.sqlite"
    store = PriceStore(str(path))
    live_job(store)
    monkeypatch.setattr(supervisor.Daemon, "tick", lambda self: None)  # its passes: elsewhere
    s = Supervisor(store, ON, holder=holder_name(), idle_seconds=0)
    assert s.claim()
    s.tick()
    assert not s.stopping.is_set()  # a live job: it watches
    path.unlink()
    s._looked = 0.0  # its next look
    s.tick()
    assert s.stopping.is_set()
    store.dispose()

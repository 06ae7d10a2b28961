"""The secrets' handoff from a launch to the supervisor watching the store: each end checks
the other's process, the supervisor keeps only what its running jobs name, and nothing of
a value is logged. In process: the listener and the launch's end in this test."""

from __future__ import annotations

import json
import logging
import os
import socket
import struct
import threading
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

import pytest

from costsched import launch_secrets
from costsched.config import Config
from costsched.daemon import handoff
from costsched.daemon.handoff import Listening, advert_path, give, peer_refusal
from costsched.daemon.supervision import Watching
from costsched.daemon.supervisor import Supervisor
from costsched.service import jobs as service
from costsched.store import PriceStore
from costsched.store.leases import holder_name
from tests.costsched.migration.test_edges import FakeLauncher
from tests.costsched.service.test_start_secrets import VALUE, launch_two, said_ahead

pytestmark = pytest.mark.skipif(handoff.PEERCRED is None, reason="SO_PEERCRED: Linux only")
AT = datetime(2026, 11, 29, 13, 0, tzinfo=timezone.utc)
WATCH = Config.model_validate({"daemon": {"autostart": True, "watch_seconds": 30}})


def me(log: Path, pid: int | None = None, kind: str = "auto") -> Watching:
    """This process, as a launch finds the supervisor watching the store."""
    return Watching(os.getpid() if pid is None else pid, "here", True, kind, 30.0, str(log),
                    AT, None, "", "")


@pytest.fixture()
def listening(tmp_path: Path) -> Iterator[tuple[Path, list[dict]]]:
    """A listener in this process, logging to tmp/d.log, keeping what it is given."""
    taken: list[dict] = []

    def take(given: dict[int, dict[str, str]]) -> list[int]:
        taken.append(given)
        return sorted(given)

    log = tmp_path / "d.log"
    opened = Listening.open(str(log), take)
    assert opened is not None
    yield log, taken
    opened.close()


def test_the_supervisor_answers_only_a_process_of_its_own_user() -> None:
    mine = struct.pack("3i", 4321, os.getuid(), os.getgid())
    other = struct.pack("3i", 4321, os.getuid() + 1, os.getgid())
    assert peer_refusal(mine) is None
    assert peer_refusal(other) == (f"process 4321 runs as user id {os.getuid() + 1}, not the "
                                   f"supervisor's ({os.getuid()})")
    assert peer_refusal(mine, uid=os.getuid() + 1) is not None


def test_a_launch_gives_only_to_the_supervisor_holding_the_lease() -> None:
    listener = struct.pack("3i", 4321, os.getuid(), os.getgid())
    assert handoff.listener_refusal(listener, 4321) is None
    assert handoff.listener_refusal(listener, 99) is not None  # another process listens
    other = struct.pack("3i", 4321, os.getuid() + 1, os.getgid())
    assert handoff.listener_refusal(other, 4321) is not None


def test_a_launch_gives_the_supervisor_its_jobs_secrets(
        listening: tuple[Path, list[dict]], store: PriceStore,
        caplog: pytest.LogCaptureFixture) -> None:
    log, taken = listening
    folder = Path(json.loads(advert_path(str(log), os.getpid()).read_text())["socket"]).parent
    assert folder.stat().st_mode & 0o777 == 0o700
    assert (folder / "socket").stat().st_mode & 0o777 == 0o600
    assert advert_path(str(log), os.getpid()).stat().st_mode & 0o777 == 0o600
    caplog.set_level(logging.INFO, logger="costsched.daemon")
    held = give(store, me(log), {7: {"KM_TOKEN": VALUE}, 9: {"HF_TOKEN": VALUE + "x"}})
    assert held == [7, 9] and taken == [{7: {"KM_TOKEN": VALUE}, 9: {"HF_TOKEN": VALUE + "x"}}]
    [line] = [r.getMessage() for r in caplog.records if "secrets_given" in r.getMessage()]
    assert "jobs=7,9 names=HF_TOKEN,KM_TOKEN" in line and VALUE not in caplog.text


def test_a_supervisor_still_starting_is_waited_for(tmp_path: Path,
                                                   store: PriceStore) -> None:
    """A launch right after the one that started the supervisor: its lease is handed
    over, its row and socket not there yet; the launch waits for it to listen."""
    log = tmp_path / "d.log"
    taken: list[dict] = []
    opened: list[Listening | None] = []
    late = threading.Timer(0.3, lambda: opened.append(Listening.open(
        str(log), lambda given: taken.append(given) or sorted(given))))
    late.start()
    try:
        assert give(store, me(log, kind="starting"), {7: {"KM_TOKEN": VALUE}}) == [7]
    finally:
        late.join()
        for listening in opened:
            if listening is not None:
                listening.close()
    assert taken == [{7: {"KM_TOKEN": VALUE}}]


def test_nothing_is_given_to_a_listener_that_is_not_the_supervisor(
        listening: tuple[Path, list[dict]], store: PriceStore) -> None:
    log, taken = listening
    # The advert names this process; the lease, another: the listener is not the one.
    # (Never a matching advert: the launch looks until its wait is over, 1 s here, not
    # ADVERT_WAIT's 20 s.)
    advert_path(str(log), os.getpid()).rename(advert_path(str(log), 1))
    assert give(store, me(log, pid=1), {7: {"KM_TOKEN": VALUE}}, wait=1.0) == []
    assert taken == []


def test_nothing_is_given_where_no_supervisor_listens(
        tmp_path: Path, store: PriceStore, monkeypatch: pytest.MonkeyPatch) -> None:
    log = tmp_path / "d.log"
    # Registered (it would have advertised first) and no advert: an older supervisor,
    # not waited for.
    store.daemons.register(holder_name(), kind="auto", tasks=("replan",), watch_seconds=30,
                           log=str(log), at=AT)

    def waited(_: float) -> None:
        raise AssertionError("waited for a supervisor that does not listen")

    monkeypatch.setattr(handoff.time, "sleep", waited)
    assert give(store, me(log), {7: {"KM_TOKEN": VALUE}}) == []
    for kind in ("installed", "service"):  # a daemon that never listens for them
        assert give(store, me(log, kind=kind), {7: {"KM_TOKEN": VALUE}}) == []
    away = Watching(os.getpid(), "gpu-box", False, "auto", 30.0, str(log), AT, None, "", "")
    assert give(store, away, {7: {"KM_TOKEN": VALUE}}) == []


def test_a_message_that_is_not_secrets_is_refused_in_words_of_its_own(
        listening: tuple[Path, list[dict]], caplog: pytest.LogCaptureFixture) -> None:
    log, taken = listening
    where = json.loads(advert_path(str(log), os.getpid()).read_text())["socket"]
    caplog.set_level(logging.INFO, logger="costsched.daemon")
    for message in (f'{{"secrets": {{"x": "{VALUE}"}}}}\n', f"{VALUE}\n"):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(where)
            sock.sendall(message.encode())
            assert sock.recv(100) == b""  # no answer: refused
    assert taken == [] and "event=handoff_failed" in caplog.text and VALUE not in caplog.text


def test_the_supervisor_keeps_only_its_running_jobs_named_secrets(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    launcher, sec, plain = launch_two(store, tmp_path, monkeypatch)  # it holds no value
    supervising = Supervisor(store, WATCH, holder=holder_name(), launchers=lambda _: launcher)
    held = supervising.take_secrets({sec: {"KM_TOKEN": VALUE, "OTHER": VALUE},
                                     plain: {"KM_TOKEN": VALUE}, 999: {"KM_TOKEN": VALUE}})
    assert held == [sec]
    assert launch_secrets.held_for(sec) == {"KM_TOKEN": VALUE}
    assert launch_secrets.held_for(plain) == {} and launch_secrets.held_for(999) == {}
    service.stop(store, launcher, sec)
    supervising._end_when_idle()
    assert launch_secrets.held_for(sec) == {}  # an ended job's value is held no longer


def test_a_supervisor_given_the_secret_unsays_that_a_recovery_would_wait_for_it(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Unsaid before the launch (or start) that gave it has its answer: the table it
    draws next does not say the job would wait for what was just given."""
    launcher, sec, plain = launch_two(store, tmp_path, monkeypatch)
    said_ahead(store, launcher, sec)
    supervising = Supervisor(store, WATCH, holder=holder_name(), launchers=lambda _: launcher)
    assert supervising.take_secrets({sec: {"KM_TOKEN": VALUE}}) == [sec]
    assert {s.record.id: s.waits for s in service.status(store, launcher)} == {sec: "",
                                                                               plain: ""}


def test_a_supervisor_listens_while_it_serves_and_cleans_up(
        store: PriceStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launch_secrets, "_GIVEN", {})
    launcher = FakeLauncher()
    log = tmp_path / "d.log"
    supervising = Supervisor(store, WATCH, holder=holder_name(), launchers=lambda _: launcher,
                             log=str(log))
    supervising.start()
    try:
        advert = advert_path(str(log), os.getpid())
        folder = Path(json.loads(advert.read_text())["socket"]).parent
        assert folder.is_dir()
    finally:
        supervising.stop()
    assert not advert.exists() and not folder.exists()

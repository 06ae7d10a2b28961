"""The supervisor's log is named after it: <store stem>.supervisor.log beside a SQLite
store, supervisor-<host>-<database>-<tag>.log for a server's. A log of the name it had
before (<stem>.daemon.log) is still the one shown until a supervisor or an installed daemon
starts (a launch's supervisor, `daemon install`), which renames it and logs under the new
name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from costsched.config import Config
from costsched.daemon import autostart
from costsched.daemon.logs import log_path, shown_log, started_log
from costsched.store import PriceStore
from tests.costsched.daemon.conftest import World
from tests.costsched.daemon.test_install import Fakes, fakes, invoke, unit_file
from tests.costsched.daemon.test_supervisor import ON, live_job, spawned

__all__ = ["fakes", "spawned"]  # (the fixtures, used by name)
SERVER = "postgresql://team@db.example.com/costsched"


def test_the_log_beside_a_sqlite_store_is_named_after_the_supervisor(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'prices.sqlite'}"
    assert log_path(url, Config()) == tmp_path / "prices.supervisor.log"
    assert shown_log(url, Config()) == tmp_path / "prices.supervisor.log"


def test_a_server_store_s_log_is_named_after_the_supervisor() -> None:
    name = log_path(SERVER, Config(), make_folder=False).name
    assert name.startswith("supervisor-db.example.com-costsched-") and name.endswith(".log")


@pytest.mark.parametrize("url", [SERVER, "sqlite:///{tmp}/prices.sqlite"])
def test_an_old_log_is_shown_until_a_supervisor_starts_then_renamed(
        url: str, tmp_path: Path) -> None:
    url = url.format(tmp=tmp_path)
    new = log_path(url, Config())
    old = new.with_name(new.name.replace("supervisor", "daemon", 1))
    old.write_text("event=started\n")
    assert shown_log(url, Config()) == old  # nothing started since: the log that has lines
    assert started_log(url, Config()) == new
    assert not old.exists() and new.read_text() == "event=started\n"
    assert shown_log(url, Config()) == new


def test_an_old_log_beside_a_newer_one_is_left_alone(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'prices.sqlite'}"
    old, new = tmp_path / "prices.daemon.log", tmp_path / "prices.supervisor.log"
    old.write_text("before\n")
    new.write_text("now\n")
    assert shown_log(url, Config()) == new and started_log(url, Config()) == new
    assert old.read_text() == "before\n" and new.read_text() == "now\n"


def test_daemon_status_shows_the_old_log_and_an_install_renames_it(
        world: World, fakes: Fakes) -> None:
    old, new = world.db.with_name("store.daemon.log"), world.db.with_name("store.supervisor.log")
    old.write_text("event=started\n")
    assert json.loads(invoke("daemon", "status", "--json"))["log"] == str(old)
    said = invoke("daemon", "install")
    assert f"log: {new}" in said and f"--log {new}\n" in unit_file(world).read_text()
    assert not old.exists() and new.read_text() == "event=started\n"
    assert json.loads(invoke("daemon", "status", "--json"))["log"] == str(new)


def test_a_launch_that_starts_a_supervisor_renames_the_old_log_to_the_one_it_logs_to(
        store: PriceStore, spawned: list[dict]) -> None:
    folder = Path(store.url.removeprefix("sqlite:///")).parent
    old, new = folder / "prices.daemon.log", folder / "prices.supervisor.log"
    old.write_text("event=started\n")
    assert shown_log(store.url, ON) == old
    live_job(store)
    armed = autostart.ensure(store, ON)
    assert armed.started and spawned[0]["log"] == new
    assert not old.exists() and new.read_text() == "event=started\n"
    assert armed.line().endswith(f"log: {new}")

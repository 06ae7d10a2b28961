"""`costsched daemon install` where what it would write cannot run: nothing is written, the
error says plainly what keeps no daemon here and what watches the jobs meanwhile, and every
command it or `daemon status` names carries the flags it needs and works as printed."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from tests.costsched.daemon.conftest import World
from tests.costsched.daemon.test_install import Fakes, fakes, invoke, unit_file

__all__ = ["fakes"]  # (the fixture, used by name)
COMMAND = re.compile(r"`(costsched [^`]+)`")


def _no_crontab(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH with the fake systemctl alone: no crontab command on this machine."""
    (world.tmp / "fakebin" / "crontab").unlink()
    monkeypatch.setenv("PATH", str(world.tmp / "fakebin"))


def _refused(*argv: str) -> str:
    """The one error line of a command that exits 1."""
    done = CliRunner().invoke(app, list(argv))
    assert done.exit_code == 1, done.output
    [line] = [x for x in done.stderr.splitlines() if x.startswith("error: ")]
    return line


def _runs(command: str) -> str:
    """Run a command a line names, as printed; what it says (it must succeed)."""
    return invoke(*shlex.split(command)[1:])


def test_with_neither_systemd_nor_cron_nothing_is_written_and_the_supervisor_is_named(
        world: World, fakes: Fakes, monkeypatch: pytest.MonkeyPatch) -> None:
    unit = unit_file(world)
    monkeypatch.setenv("FAKE_SYSTEMCTL_EXIT", "1")
    _no_crontab(world, monkeypatch)
    db = ("--db", str(world.db))
    for kind in ((), ("--kind", "systemd"), ("--kind", "cron")):
        line = _refused("daemon", "install", *kind, *db)
        assert line.startswith("error: nothing on this machine keeps a daemon running across "
                               "reboots: systemctl --user: no answer: no systemd user manager "
                               "answers here"), line
        assert "crontab: not found on PATH" in line, line
        assert line.endswith(
            "meanwhile, until the machine restarts, the supervisor a launch starts watches "
            f"this store's running jobs (`costsched daemon start --db {world.db}` starts one "
            "now)"), line
        for each in ("systemd", "cron"):  # what installs it once it can run
            assert f"`costsched daemon install --kind {each} --db {world.db}`" in line, line
        assert not unit.exists()
    status = " ".join(invoke("daemon", "status", *db).split())
    assert "Installed: no; nothing on this machine keeps a daemon running across reboots" \
        in status, status
    assert "`costsched daemon install --db" not in status  # (it would fail here)
    started = _runs(f"costsched daemon start --db {world.db}")
    assert "No job runs in this store" in started


def test_systemd_asked_where_none_answers_writes_no_unit_and_names_cron(
        world: World, fakes: Fakes, monkeypatch: pytest.MonkeyPatch) -> None:
    unit = unit_file(world)
    monkeypatch.setenv("FAKE_SYSTEMCTL_EXIT", "1")
    line = _refused("daemon", "install", "--kind", "systemd", "--db", str(world.db))
    assert line.startswith("error: systemctl --user: no answer: no systemd user manager "
                           "answers here, so nothing would run a unit"), line
    assert not unit.exists()
    [*_, other] = COMMAND.findall(line)
    assert other == f"costsched daemon install --kind cron --db {world.db}", line
    assert "Added to your crontab" in _runs(other)
    assert "@reboot " in fakes.crontab.read_text()


def test_cron_asked_where_there_is_none_names_systemd(
        world: World, fakes: Fakes, monkeypatch: pytest.MonkeyPatch) -> None:
    unit = unit_file(world)
    _no_crontab(world, monkeypatch)
    line = _refused("daemon", "install", "--kind", "cron")
    assert line.startswith("error: crontab: not found on PATH, so nothing would read crontab "
                           "lines"), line
    [*_, other] = COMMAND.findall(line)
    assert other == "costsched daemon install --kind systemd", line
    assert f"Wrote {unit}" in _runs(other)


def test_status_of_a_unit_no_manager_runs_names_the_kind_and_store_to_install_again(
        world: World, fakes: Fakes, monkeypatch: pytest.MonkeyPatch) -> None:
    """A unit written while a user manager answered, which none does now: `daemon status`
    names the install that enables it with its kind and store (cron being detected here,
    a bare `install --now` would not), and its removal."""
    unit = unit_file(world)
    invoke("daemon", "install")  # written, not enabled
    monkeypatch.setenv("FAKE_SYSTEMCTL_EXIT", "1")
    status = " ".join(invoke("daemon", "status", "--db", str(world.db)).split())
    again, remove = COMMAND.findall(status.split("written, not enabled: ")[1])[:2]
    assert again == f"costsched daemon install --kind systemd --now --db {world.db}", status
    assert remove == f"costsched daemon uninstall --db {world.db}", status
    monkeypatch.delenv("FAKE_SYSTEMCTL_EXIT")  # a login session: the manager answers
    assert f"Started: {unit.name} runs now" in _runs(again)
    assert fakes.calls()[-1] == f"systemctl --user enable --now {unit.name}"


def test_a_unit_that_fails_to_enable_is_said_to_be_left_and_how_to_remove_it(
        world: World, fakes: Fakes, monkeypatch: pytest.MonkeyPatch) -> None:
    unit = unit_file(world)
    script = Path(world.tmp / "fakebin" / "systemctl")
    script.write_text(script.read_text().replace(
        'case "$2" in', 'case "$2" in\n  enable) echo "Unit is masked." >&2; exit 1;;'))
    line = _refused("daemon", "install", "--now")
    assert line == (f"error: systemctl --user enable --now {unit.name}: Unit is masked.; the "
                    "unit is left in place, not running (`costsched daemon uninstall` "
                    "removes it)"), line
    assert unit.exists()
    _runs("costsched daemon uninstall")
    assert not unit.exists()


def _files(root: Path) -> set[Path]:
    """The files and folders under `root`, but the fakes' record of their calls and the
    user cache (what a command keeps to start faster: the configuration it read)."""
    cache = root / "user-dirs" / "xdg_cache_home"
    return {p for p in root.rglob("*") if p.name != "calls.txt" and
            p not in (cache.parent, cache) and cache not in p.parents}


def test_a_refused_install_and_a_print_make_nothing_not_even_a_store(
        world: World, fakes: Fakes, monkeypatch: pytest.MonkeyPatch) -> None:
    """Refused where nothing keeps a daemon, or only shown (--print): no store made for a
    --db that names none yet (nor for the default one), no log or its folder, no unit."""
    monkeypatch.setenv("FAKE_SYSTEMCTL_EXIT", "1")
    _no_crontab(world, monkeypatch)
    new = world.tmp / "project" / "own.sqlite"  # (its folder does not exist either)
    before = _files(world.tmp)
    line = _refused("daemon", "install", "--db", str(new), "--new-store")
    # The commands it names install it as it was asked: the store still new.
    for each in ("systemd", "cron"):
        assert f"`costsched daemon install --kind {each} --db {new} --new-store`" in line, line
    assert "meanwhile" not in line  # (no job to watch in a store still to be made)
    monkeypatch.delenv("COSTSCHED_DB")
    _refused("daemon", "install")  # the default store, in the user data directory
    assert _files(world.tmp) == before
    said = invoke("daemon", "install", "--print", "--db", str(new), "--new-store")
    assert f"for {new}" in said and "Not written as this machine is" in said, said
    invoke("daemon", "install", "--print")
    assert _files(world.tmp) == before


def test_an_install_for_a_db_that_names_no_store_is_refused_unless_told(
        world: World, fakes: Fakes) -> None:
    """Where a daemon can be kept: a --db that names no store yet is refused in one line,
    --print too, with nothing made (no store, log or unit); --new-store makes it."""
    new = world.tmp / "project" / "own.sqlite"
    before = _files(world.tmp)
    for shown in ((), ("--print",)):
        done = CliRunner().invoke(app, ["daemon", "install", *shown, "--db", str(new)])
        assert done.exit_code == 2, done.output
        assert done.stderr.splitlines() == [
            f"error: --db {new}: no such store ({new}); add --new-store to make it (unasked, "
            "only the default store is made)"]
    assert _files(world.tmp) == before
    said = " ".join(invoke("daemon", "install", "--db", str(new), "--new-store").split())
    assert new.exists() and said.startswith(f"creating the store {new} Wrote "), said
    assert f"log: {new.with_name('own.supervisor.log')})" in said, said

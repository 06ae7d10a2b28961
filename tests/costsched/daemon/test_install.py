"""`costsched daemon install | uninstall`: a systemd user unit where a systemd user manager
answers, else crontab lines that keep the user's other lines; fake `systemctl` and
`crontab` on PATH record what they are asked. The crontab's command is run as cron would
run it: one installed daemon per store, the keep-alive exits while it runs."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.store.leases import process_gone
from tests.costsched.daemon.conftest import World, daemons_of
from tests.costsched.service.test_jobs import wait_for

SYSTEMCTL = """#!/bin/sh
echo "systemctl $*" >> "$FAKE_CALLS"
[ "${FAKE_SYSTEMCTL_EXIT:-0}" = 0 ] || exit "$FAKE_SYSTEMCTL_EXIT"
case "$2" in
  is-enabled) echo "${FAKE_IS_ENABLED:-enabled}"; [ "${FAKE_IS_ENABLED:-enabled}" = enabled ];;
  is-active) echo "${FAKE_IS_ACTIVE:-active}"; [ "${FAKE_IS_ACTIVE:-active}" = active ];;
esac
"""
CRONTAB = """#!/bin/sh
echo "crontab $*" >> "$FAKE_CALLS"
if [ "$1" = "-l" ]; then
  if [ -f "$FAKE_CRONTAB" ]; then cat "$FAKE_CRONTAB"; exit 0; fi
  echo "no crontab for tester" >&2; exit 1
fi
if [ "$1" = "-" ]; then cat > "$FAKE_CRONTAB"; exit 0; fi
exit 2
"""
THEIRS = "MAILTO=me@example.com\n0 3 * * * /usr/local/bin/backup --all  # nightly\n"


class Fakes:
    def __init__(self, root: Path) -> None:
        self.calls_file, self.crontab = root / "calls.txt", root / "crontab.txt"

    def calls(self) -> list[str]:
        return self.calls_file.read_text().splitlines() if self.calls_file.exists() else []


@pytest.fixture()
def fakes(world: World, monkeypatch: pytest.MonkeyPatch) -> Fakes:
    bin_dir = world.tmp / "fakebin"
    bin_dir.mkdir()
    for name, text in (("systemctl", SYSTEMCTL), ("crontab", CRONTAB)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    found = Fakes(world.tmp)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setenv("FAKE_CALLS", str(found.calls_file))
    monkeypatch.setenv("FAKE_CRONTAB", str(found.crontab))
    return found


def invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def unit_file(world: World) -> Path:
    [unit] = re.findall(r"costsched-daemon-[0-9a-f]{8}\.service",
                        invoke("daemon", "install", "--print"))[:1]
    return world.tmp / "user-dirs" / "xdg_config_home" / "systemd" / "user" / unit


def test_install_print_shows_the_systemd_unit_and_the_line_that_enables_it(
        world: World, fakes: Fakes) -> None:
    said = invoke("daemon", "install", "--print")
    unit = unit_file(world)
    log = world.db.with_name("store.supervisor.log")
    assert said.startswith(f"Would write {unit}:\n")
    assert f"Environment=COSTSCHED_DB=sqlite:///{world.db}\n" in said
    assert f"Environment=COSTSCHED_INSTANCES={world.tmp / 'instances'}\n" in said
    assert re.search(rf"\nExecStart=\S+ daemon --installed --log {log}\n", said)
    assert "Restart=on-failure" in said and "WantedBy=default.target" in said
    assert said.rstrip().endswith(f"Then start it now and at every login: systemctl --user "
                                  f"daemon-reload && systemctl --user enable --now {unit.name}")
    assert not unit.exists()  # only shown
    assert set(fakes.calls()) == {"systemctl --user show-environment"}


def test_install_now_enables_the_unit_and_uninstall_removes_it(world: World,
                                                                fakes: Fakes) -> None:
    unit = unit_file(world)
    shown = invoke("daemon", "install", "--print")
    said = invoke("daemon", "install", "--now")
    assert unit.read_text() in shown  # what --print showed is what is written
    assert f"Wrote {unit}" in said and f"Started: {unit.name} runs now" in said
    assert fakes.calls()[-2:] == ["systemctl --user daemon-reload",
                                  f"systemctl --user enable --now {unit.name}"]
    installed = json.loads(invoke("daemon", "status", "--json"))["installed"]
    assert installed == {"kind": "systemd", "unit": unit.name, "path": str(unit),
                         "enabled": True, "running": True, "note": ""}
    assert f"Installed: systemd user unit {unit.name} ({unit}): enabled, running." in \
        invoke("daemon", "status").replace("\n", "")

    assert "Would run systemctl --user disable --now" in invoke("daemon", "uninstall",
                                                                "--print")
    assert unit.exists()
    invoke("daemon", "uninstall")
    assert not unit.exists()
    assert fakes.calls()[-2:] == [f"systemctl --user disable --now {unit.name}",
                                  "systemctl --user daemon-reload"]
    assert json.loads(invoke("daemon", "status", "--json"))["installed"] is None


def test_without_systemd_install_adds_crontab_lines_and_keeps_the_users_own(
        world: World, fakes: Fakes, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_SYSTEMCTL_EXIT", "1")  # "System has not been booted with systemd"
    fakes.crontab.write_text(THEIRS)
    shown = invoke("daemon", "install", "--print")
    assert shown.startswith("Would add to your crontab (its other lines kept):\n")
    [reboot] = [x for x in shown.splitlines() if x.startswith("@reboot ")]
    [alive] = [x for x in shown.splitlines() if x.startswith("*/10 * * * * ")]
    assert reboot.removeprefix("@reboot ") == alive.removeprefix("*/10 * * * * ")
    assert fakes.crontab.read_text() == THEIRS and "crontab -l" not in fakes.calls()

    invoke("daemon", "install")
    installed = fakes.crontab.read_text()
    assert installed.startswith(THEIRS) and reboot in installed and alive in installed
    invoke("daemon", "install")  # again: the block replaced, not added
    assert fakes.crontab.read_text() == installed
    assert json.loads(invoke("daemon", "status", "--json"))["installed"]["kind"] == "cron"
    invoke("daemon", "uninstall")
    assert fakes.crontab.read_text() == THEIRS


def test_install_now_without_systemd_starts_what_the_crontab_runs(
        world: World, fakes: Fakes, monkeypatch: pytest.MonkeyPatch) -> None:
    from costsched.daemon import install

    monkeypatch.setenv("FAKE_SYSTEMCTL_EXIT", "1")
    started: list[tuple[list[str], dict]] = []
    real = subprocess.Popen

    def popen(argv: list[str], **options: object) -> object:
        if "--installed" not in argv:  # systemctl, crontab: the fakes
            return real(argv, **options)
        assert options["start_new_session"] is True
        started.append((argv, dict(options["env"])))
        return real(["true"])

    monkeypatch.setattr(install.subprocess, "Popen", popen)
    said = invoke("daemon", "install", "--now")
    assert re.search(r"Started: installed daemon pid \d+\.", said)
    [(argv, env)] = started
    [line] = [x for x in fakes.crontab.read_text().splitlines() if x.startswith("@reboot ")]
    assert " ".join(shlex.quote(a) for a in argv) in line
    assert f"COSTSCHED_DB={shlex.quote(env['COSTSCHED_DB'])}" in line


def test_one_installed_daemon_runs_per_store_on_a_machine(world: World) -> None:
    """The keep-alive line, while the daemon runs, finds it running and does not start."""
    from costsched.config import Config
    from costsched.daemon.supervisor import Installed

    first, keep_alive = Installed(world.store, Config()), Installed(world.store, Config())
    assert first.claim() and not keep_alive.claim()
    first.stop()  # gives its lease up
    assert keep_alive.claim()
    keep_alive.stop()


def test_the_crontab_command_starts_one_installed_daemon(
        world: World, fakes: Fakes, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run as cron runs it (sh, a bare environment): the daemon starts, for this store; the
    keep-alive finds it running and exits; `daemon status` and `daemon stop` know it (real
    processes: that is the point)."""
    monkeypatch.setenv("FAKE_SYSTEMCTL_EXIT", "1")
    config = world.tmp / "config.toml"  # no scheduled collection reads a cloud here
    config.write_text('[schedule]\ncollect = "0 0 1 1 *"\ncatalog = "0 0 1 1 *"\n')
    monkeypatch.setenv("COSTSCHED_CONFIG", str(config))
    [line] = [x for x in invoke("daemon", "install", "--print").splitlines()
              if x.startswith("@reboot ")]
    command = line.removeprefix("@reboot ").replace("\\%", "%")
    assert f"COSTSCHED_CONFIG={shlex.quote(str(config))}" in command
    cron_env = {"PATH": "/usr/bin:/bin", "HOME": str(world.tmp), "SHELL": "/bin/sh"}
    first = subprocess.Popen(["/bin/sh", "-c", command], env=cron_env)
    try:
        wait_for(lambda: [r.kind for r in world.store.daemons.rows()] == ["installed"],
                 seconds=60)
        [row] = world.store.daemons.rows()
        keep_alive = subprocess.run(["/bin/sh", "-c", command], env=cron_env, timeout=120)
        assert keep_alive.returncode == 0
        assert [r.holder for r in world.store.daemons.rows()] == [row.holder]
        assert daemons_of(world.store.url) == [row.pid]
        assert re.search(rf"installed daemon pid {row.pid}: installed \(`costsched daemon "
                         r"install`\), since", invoke("daemon", "status"))
        assert f"Stopped installed daemon pid {row.pid}." in invoke("daemon", "stop")
        assert process_gone(row.pid)
    finally:
        first.wait(timeout=60)
    assert "event=started" in world.db.with_name("store.supervisor.log").read_text()


def test_a_store_url_with_a_password_is_never_written(monkeypatch: pytest.MonkeyPatch) -> None:
    from costsched.config import load
    from costsched.daemon import install
    from costsched.daemon.logs import log_path
    from costsched.model import InvalidInput

    url = "postgresql://team:hunter22@db.example.com/costsched"
    log = log_path(url, load().config)
    assert "hunter22" not in str(log) and log.name.startswith("supervisor-db.example.com-costsched")
    with pytest.raises(InvalidInput, match="holds a password") as refused:
        install.plan(url, load(), log, "cron")
    assert "hunter22" not in str(refused.value)


def test_a_unit_no_user_manager_will_run_is_said_and_its_removal_too(
        world: World, fakes: Fakes, monkeypatch: pytest.MonkeyPatch) -> None:
    """--kind systemd where `systemctl --user` does not answer: no unit is written, and
    the command says (exit 1) that nothing would run it, with what would. A unit written
    while a manager answered: `daemon status` says nothing runs it; uninstall says what its
    failed `systemctl --user disable` leaves, in words, not a bare complaint."""
    unit = unit_file(world)
    monkeypatch.setenv("FAKE_SYSTEMCTL_EXIT", "1")
    done = CliRunner().invoke(app, ["daemon", "install", "--kind", "systemd"])
    assert done.exit_code == 1 and not unit.exists()
    [line] = [x for x in done.stderr.splitlines() if x.startswith("error:")]
    assert line.startswith("error: systemctl --user: no answer: no systemd user manager "
                           "answers here, so nothing would run a unit")
    assert line.endswith("`costsched daemon install --kind cron` keeps one from cron "
                         "instead")
    monkeypatch.delenv("FAKE_SYSTEMCTL_EXIT")
    invoke("daemon", "install")  # written while a manager answered, not enabled
    monkeypatch.setenv("FAKE_SYSTEMCTL_EXIT", "1")
    # `daemon status` says so too, not "installed" as a working unit reads.
    status = invoke("daemon", "status").replace("\n", "")
    assert (f"Installed: systemd user unit {unit.name} ({unit}): written, not enabled: no "
            "systemd user manager answers, so nothing runs it") in status, status
    installed = json.loads(invoke("daemon", "status", "--json"))["installed"]
    assert installed["enabled"] is False and installed["running"] is False
    said = invoke("daemon", "uninstall")
    assert said.replace("\n", "") == (
        f"Removed {unit}; `systemctl --user disable --now {unit.name}` failed (exit 1): a "
        "daemon it started runs until `costsched daemon stop`.")
    assert not unit.exists()


def test_a_misspelt_kind_is_refused_with_the_one_meant(world: World) -> None:
    done = CliRunner().invoke(app, ["daemon", "install", "--kind", "sytemd"])
    assert done.exit_code == 2
    [line] = done.stderr.strip().splitlines()
    assert line == ("error: --kind 'sytemd': expected one of systemd, cron; did you mean "
                    "'systemd'?"), line


@pytest.mark.parametrize(("enabled", "active", "says"), [
    ("disabled", "inactive", "written, not enabled: `costsched daemon install --kind systemd "
     "--now` enables and starts it."),
    ("enabled", "failed", "enabled, not running now (`systemctl --user status "),
])
def test_status_says_whether_the_unit_is_enabled_and_running(
        world: World, fakes: Fakes, monkeypatch: pytest.MonkeyPatch, enabled: str,
        active: str, says: str) -> None:
    unit = unit_file(world)
    invoke("daemon", "install")  # written, not enabled (no --now)
    monkeypatch.setenv("FAKE_IS_ENABLED", enabled)
    monkeypatch.setenv("FAKE_IS_ACTIVE", active)
    status = invoke("daemon", "status").replace("\n", "")
    assert f"Installed: systemd user unit {unit.name} ({unit}): {says}" in status, status


def test_crontab_lines_no_cron_daemon_reads_are_said_at_install_and_in_status(
        world: World, fakes: Fakes, monkeypatch: pytest.MonkeyPatch) -> None:
    from costsched.daemon import install

    monkeypatch.setenv("FAKE_SYSTEMCTL_EXIT", "1")
    monkeypatch.setattr(install, "cron_runs", lambda: False)
    said = invoke("daemon", "install").replace("\n", "")
    assert "But no cron daemon (cron or crond) runs on this machine now, so nothing runs " \
           "these lines until one does" in said, said
    status = invoke("daemon", "status").replace("\n", "")
    assert ("Installed: crontab lines (`crontab -l` shows them): written, not run: no cron "
            "daemon (cron or crond) runs on this machine, so nothing runs the lines until "
            "one does.") in status, status
    monkeypatch.setattr(install, "cron_runs", lambda: True)
    assert "Installed: crontab lines (`crontab -l` shows them)." in invoke("daemon", "status")
    assert "no cron daemon" not in invoke("daemon", "install")

"""A launch or start of a job with secrets while a daemon started before watches the
store: a supervisor is given the values (costsched.daemon.handoff), and the command says
so; a daemon it cannot give them to recovers the job with the values of its own
environment, so the command says that, naming the daemon, and how to make it take the
ones given."""

from __future__ import annotations

from datetime import datetime, timezone
from types import SimpleNamespace

import pytest

from costsched.cli import jobs as cli_jobs
from costsched.daemon import autostart, handoff
from costsched.daemon.supervision import Watching
from costsched.redact import redact

AT = datetime(2026, 11, 29, 13, 0, tzinfo=timezone.utc)
WATCHER = Watching(4321, "here", True, "auto", 30.0, "/tmp/d.log", AT, None, "", "")
SECRET_JOB = SimpleNamespace(id=1, spec={"spec": {"task": {"secrets": ["WANDB_KEY"]}}})
TWO_SECRETS = SimpleNamespace(id=2, spec={"spec": {"task": {"secrets": ["HF_TOKEN",
                                                                       "WANDB_KEY"]}}})
PLAIN_JOB = SimpleNamespace(id=3, spec={"spec": {"task": {}}})
NOT_GIVEN = ("The supervisor (pid 4321) was started before this launch and could not be "
             "given WANDB_KEY, so a recovery or move of the job takes it from its "
             "environment, not from this command (`costsched daemon stop`, then `costsched "
             "daemon start` in a shell that sets it, makes it take yours)")
GIVEN = ("The supervisor (pid 4321) was given WANDB_KEY for the recoveries and moves of the "
         "job: held in its memory, never stored")


def arm(monkeypatch: pytest.MonkeyPatch, records: list, *, started: bool = False,
        reached: bool = False, watcher: Watching = WATCHER, command: str = "launch") -> str:
    """What `_arm` says with `watcher` watching; `reached`: it is given the secrets."""
    monkeypatch.setattr(autostart, "ensure", lambda *a, **k: autostart.Arming(
        watcher, started=started))
    monkeypatch.setattr(handoff, "give", lambda store, w, secrets: list(secrets) if reached
                        else [])
    line = cli_jobs._arm(object(), object(), records, command=command)
    assert redact(line) == line  # nothing in it reads as a value to mask
    return line


@pytest.mark.parametrize("started, records, reached, said", [
    (False, [SECRET_JOB], False, NOT_GIVEN),  # started before, not reached: its own values
    (False, [SECRET_JOB], True, GIVEN),  # started before and given them
    (True, [SECRET_JOB], False, None),  # started by this command: it holds the values given
    (False, [PLAIN_JOB], False, None),  # no secret: nothing to say
])
def test_a_supervisor_started_before_is_given_the_secrets_or_said_to_lack_them(
        monkeypatch: pytest.MonkeyPatch, started: bool, records: list, reached: bool,
        said: str | None) -> None:
    line = arm(monkeypatch, records, started=started, reached=reached)
    first, *rest = line.splitlines()
    assert first.startswith("Recovery armed: supervisor pid 4321")
    assert rest == ([said] if said else [])


def test_the_line_for_several_secrets_and_jobs_says_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    line = arm(monkeypatch, [SECRET_JOB, TWO_SECRETS, PLAIN_JOB])
    assert line.splitlines()[1] == (
        "The supervisor (pid 4321) was started before this launch and could not be given "
        "HF_TOKEN and WANDB_KEY, so a recovery or move of the jobs takes them from its "
        "environment, not from this command (`costsched daemon stop`, then `costsched daemon "
        "start` in a shell that sets them, makes it take yours)")


def test_a_daemon_of_another_kind_or_host_is_named_with_its_own_fix(
        monkeypatch: pytest.MonkeyPatch) -> None:
    installed = Watching(45, "gpu-box", False, "installed", 30.0, "", AT, None, "", "")
    line = arm(monkeypatch, [SECRET_JOB], watcher=installed, command="`costsched start`")
    assert line.splitlines()[1] == (
        "The installed daemon (pid 45 on host gpu-box) was started before this `costsched "
        "start` and could not be given WANDB_KEY, so a recovery or move of the job takes it "
        "from its environment, not from this command (restarting that daemon with WANDB_KEY "
        "set in its environment makes it take yours)")


def test_the_recovery_line_prints_its_lines_as_lines(capsys: pytest.CaptureFixture) -> None:
    cli_jobs._print_armed("Recovery armed: here\nIt was started before", json_out=False)
    out = capsys.readouterr().out
    assert out.splitlines() == ["Recovery armed: here", "It was started before"]
    assert "\\x0a" not in out

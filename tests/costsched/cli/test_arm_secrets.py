"""A launch or start of a job with secrets while a supervisor started before watches the
store: that supervisor recovers the job with the values of its own environment, so the
command says so, and how to make it take the ones given."""

from __future__ import annotations

from datetime import datetime, timezone
from types import SimpleNamespace

import pytest

from costsched.cli import jobs as cli_jobs
from costsched.daemon import autostart
from costsched.daemon.supervision import Watching
from costsched.redact import redact

AT = datetime(2026, 11, 29, 13, 0, tzinfo=timezone.utc)
WATCHER = Watching(4321, "here", True, "auto", 30.0, "/tmp/d.log", AT, None, "", "")
SECRET_JOB = SimpleNamespace(spec={"spec": {"task": {"secrets": ["WANDB_KEY"]}}})
PLAIN_JOB = SimpleNamespace(spec={"spec": {"task": {}}})


@pytest.mark.parametrize("started, records, said", [
    (False, [SECRET_JOB], True),  # started before: its environment's values
    (True, [SECRET_JOB], False),  # started by this command: it holds the values given
    (False, [PLAIN_JOB], False),  # no secret: nothing to say
])
def test_a_supervisor_started_before_is_said_to_take_its_own_values(
        monkeypatch: pytest.MonkeyPatch, started: bool, records: list, said: bool) -> None:
    monkeypatch.setattr(autostart, "ensure", lambda *a, **k: autostart.Arming(
        WATCHER, started=started))
    line = cli_jobs._arm(object(), object(), records)
    assert line.startswith("Recovery armed: supervisor pid 4321")
    extra = ("It was started before, so a recovery or move of the job takes WANDB_KEY from "
             "its environment, not from this command (`costsched daemon stop`, then "
             "`costsched daemon start` in a shell that sets them, makes it take yours)")
    assert (extra in line) == said
    assert redact(line) == line  # nothing in it reads as a value to mask


def test_the_recovery_line_prints_its_lines_as_lines(capsys: pytest.CaptureFixture) -> None:
    cli_jobs._print_armed("Recovery armed: here\nIt was started before", json_out=False)
    out = capsys.readouterr().out
    assert out.splitlines() == ["Recovery armed: here", "It was started before"]
    assert "\\x0a" not in out

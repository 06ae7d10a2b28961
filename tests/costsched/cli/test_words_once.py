"""A message names each thing once and counts in words: a failed job's error line is not
said twice, its output's lines are counted ('its last line'), a workdir that is not a
directory is named once, a collection says '0 new prices', a daemon task's failure carries
no class name."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from costsched.cli import jobs as cli_jobs
from costsched.daemon.events import _one_line
from costsched.daemon.tasks import NothingCollected
from costsched.model import InvalidInput
from costsched.service.jobs.statuses import Failure
from costsched.vocabulary import counted
from launchers.codepack import pack_workdir


def failed(detail: str, tail: list[str], code: int = 1) -> SimpleNamespace:
    return SimpleNamespace(failure=Failure(code, "", detail, tail), checkpoint_error="",
                           trouble="", assumed_work=None, no_step="",
                           record=SimpleNamespace(final=True, spec={}))


def test_a_failed_jobs_error_line_is_said_once() -> None:
    lines = cli_jobs._problems(failed("exit code 1: ValueError: bad", ["ValueError: bad"]))
    assert lines == ["failed with exit code 1", "its last line:", "  | ValueError: bad"]
    lines = cli_jobs._problems(failed("exit code 2", ["a", "b"], 2))
    assert lines == ["failed with exit code 2", "its last 2 lines:", "  | a", "  | b"]


def test_counts_agree_and_no_class_names() -> None:
    assert (counted(0, "new price"), counted(1, "new price"), counted(3, "region")) == \
        ("0 new prices", "1 new price", "3 regions")
    assert _one_line(NothingCollected("every source failed: 6 regions failed")) == \
        "every source failed: 6 regions failed"
    assert _one_line(KeyError("x")) == "KeyError: 'x'"  # not ours: the class says what


def test_a_workdir_that_is_no_directory_is_named_once(tmp_path: Path) -> None:
    missing = tmp_path / "nosuchdir"
    with pytest.raises(InvalidInput) as caught:
        pack_workdir(str(missing), "wd.yaml: job 'w'")
    assert str(caught.value) == f"wd.yaml: job 'w': field workdir {missing}: not a directory"


def test_a_launch_whose_job_failed_on_its_instance_says_the_failure_once(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    import typer

    from costsched.service.jobs.launches import NotLaunched

    why = "exit code 2 (python: can't open file 'train.py')"
    left = [NotLaunched(7, "s8", True, why, ran=True), NotLaunched(8, "s9", True, "no offering")]
    monkeypatch.setattr(cli_jobs.service, "not_launched", lambda store, ids: left)
    for shown in (True, False):  # the table's notes above said why; --json printed none
        with pytest.raises(typer.Exit):
            cli_jobs._say_not_launched(None, [7, 8], shown=shown)  # type: ignore[arg-type]
        lines = capsys.readouterr().err.splitlines()
        assert lines[1] == "error: job 8 (s9) not launched: no offering"
        assert (lines[0] == "error: job 7 (s8) failed on its instance, as said above; "
                "`costsched logs 7` shows its output") if shown else (
            lines[0] == f"error: job 7 (s8) failed: {why}")

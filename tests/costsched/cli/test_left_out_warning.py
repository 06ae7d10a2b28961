"""A workdir file left out of the job's code (it holds a secret's value) is said as every
other warning of the command is, `warning: ` first, on one line (`say_warning`)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

VALUE = "tok-LEFTOUT-8812-qz"
TASK = """\
name: left-out
workdir: .
resources:
  accelerators: V100:1
secrets:
  MY_TOKEN:
run: echo done
"""


def test_a_file_left_out_of_the_code_is_a_warning_line(
        cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: ANN001
    project = tmp_path / "proj"
    project.mkdir()
    (project / "task.yaml").write_text(TASK)
    (project / "notes.txt").write_text(f"my token is {VALUE}\n")
    monkeypatch.chdir(project)
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))

    launched = cli("launch", "task.yaml", "--launcher", "local", "--secret",
                   f"MY_TOKEN={VALUE}", "--wait", "0")
    cli("stop", "left-out")
    assert launched.exit_code == 0, launched.output
    said = [line for line in launched.stderr.splitlines() if "notes.txt" in line]
    assert said == [f"warning: workdir {project}: notes.txt left out of the job's code: it "
                    "holds a secret's value, which would be stored with the code"], \
        launched.stderr
    assert VALUE not in launched.output
    # printed so while the command ran; the process's own logging is as it was after it
    from costsched.cli.logged_warnings import LOGGERS, WarningLines

    assert not [h for name in LOGGERS for h in logging.getLogger(name).handlers
                if isinstance(h, WarningLines)]

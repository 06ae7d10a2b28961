"""On the local launcher a job's setup runs on this machine, with the interpreter
costsched runs on first on PATH: `plan` and `launch` say so, in one note, of a setup that
installs with pip (its install changes costsched's own environment), and never of another
setup, a Docker image's, or a cloud launcher's."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from costsched.cli import app
from costsched.cli.local_setup import local_setup_notes
from costsched.store import PriceStore
from costsched.taskfile import read_jobs

# (`true ||`: the install is never run, here)
TASK = """\
name: ls
resources:
  accelerators: V100:1
setup: true || pip install 'numpy<2'
run: echo done
"""


def _note(path: Path) -> str:
    return (f"note: {path}: setup runs on this machine, in {sys.executable}: its pip install "
            "changes the environment costsched runs from (for one of the job's own: `python "
            "-m venv .venv && .venv/bin/pip install ...` in setup, `.venv/bin/python` in run)")


@pytest.mark.parametrize("argv", [("plan",), ("launch", "--wait", "0")])
def test_plan_and_launch_note_a_pip_setup_on_the_local_launcher(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argv: tuple[str, ...]) -> None:
    monkeypatch.setenv("COSTSCHED_INSTANCES", str(tmp_path / "instances"))
    path, db = tmp_path / "task.yaml", str(tmp_path / "s.sqlite")
    path.write_text(TASK)
    PriceStore(db).dispose()  # (plan reads a store that exists)
    result = CliRunner().invoke(app, [argv[0], str(path), *argv[1:], "--db", db])
    CliRunner().invoke(app, ["stop", "ls", "--db", db])
    assert result.exit_code == 0, result.output
    said = [line for line in result.stderr.splitlines() if "setup runs" in line]
    assert said == [_note(path)], result.stderr


def test_no_note_for_another_setup_an_image_or_a_cloud(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "task.yaml"
    for text in (TASK.replace("pip install", "echo"),
                 TASK.replace("  accelerators:", "  image_id: docker:python:3.11\n"
                                                     "  accelerators:")):
        path.write_text(text)
        assert local_setup_notes(read_jobs([path]), sys.executable) == []
    path.write_text(TASK)
    assert local_setup_notes(read_jobs([path]), sys.executable) == [_note(path)]
    monkeypatch.setenv("COSTSCHED_LAUNCH_LAUNCHER", "aws")
    db = str(tmp_path / "s.sqlite")
    PriceStore(db).dispose()
    result = CliRunner().invoke(app, ["plan", str(path), "--db", db])
    assert "setup runs" not in result.stderr, result.stderr
